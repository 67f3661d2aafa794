#include "gemm.hpp"

#define EIGEN_DONT_PARALLELIZE  // the session's pool parallelizes; Eigen stays single-threaded
#include <Eigen/Core>

#include <algorithm>

namespace rknnxx::host {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using Map = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

// One expression per transposition keeps Eigen's instantiations (and compile time) down.
template <class A, class B> void product(const A& a, const B& b, float alpha, float beta, Map& c) {
  if (beta == 0.0f) {
    c.setZero();
  } else if (beta != 1.0f) {
    c *= beta;
  }
  c.noalias() += alpha * a * b;
}

} // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) {
    return;
  }
  Map cm(c, m, n, Eigen::OuterStride<>(ldc));
  if (k <= 0) {
    if (beta == 0.0f) {
      cm.setZero();
    } else {
      cm *= beta;
    }
    return;
  }
  const ConstMap am(a, trans_a ? k : m, trans_a ? m : k, Eigen::OuterStride<>(lda));
  const ConstMap bm(b, trans_b ? n : k, trans_b ? k : n, Eigen::OuterStride<>(ldb));
  if (!trans_a && !trans_b) {
    product(am, bm, alpha, beta, cm);
  } else if (trans_a && !trans_b) {
    product(am.transpose(), bm, alpha, beta, cm);
  } else if (!trans_a && trans_b) {
    product(am, bm.transpose(), alpha, beta, cm);
  } else {
    product(am.transpose(), bm.transpose(), alpha, beta, cm);
  }
}

void parallel_gemm(ThreadPool& pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const auto threads = static_cast<int64_t>(pool.size());
  if (threads == 1 || m * n * k < (int64_t{1} << 16)) {
    gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  if (n >= 64 * threads || n >= m) {
    // Column blocks: each thread reads all of A and its columns of B.
    const int64_t grain = std::max<int64_t>(16, (n / (threads * 2) + 15) / 16 * 16);
    pool.parallel_for(n, grain, [&](int64_t begin, int64_t end) {
      const float* bb = trans_b ? b + begin * ldb : b + begin;
      gemm(trans_a, trans_b, m, end - begin, k, alpha, a, lda, bb, ldb, beta, c + begin, ldc);
    });
  } else {
    const int64_t grain = std::max<int64_t>(8, (m / (threads * 2) + 7) / 8 * 8);
    pool.parallel_for(m, grain, [&](int64_t begin, int64_t end) {
      const float* ab = trans_a ? a + begin : a + begin * lda;
      gemm(trans_a, trans_b, end - begin, n, k, alpha, ab, lda, b, ldb, beta, c + begin * ldc, ldc);
    });
  }
}

void naive_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float av = trans_a ? a[p * lda + i] : a[i * lda + p];
        const float bv = trans_b ? b[j * ldb + p] : b[p * ldb + j];
        sum += av * bv;
      }
      float& out = c[i * ldc + j];
      out = alpha * sum + (beta == 0.0f ? 0.0f : beta * out);
    }
  }
}

} // namespace rknnxx::host
