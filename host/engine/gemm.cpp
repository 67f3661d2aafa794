#include "gemm.hpp"

#include "gemm_eigen.hpp"

#include <algorithm>

namespace rknnxx::host {

#if defined(RKNNXX_ENGINE_AVX2)
namespace detail {
void gemm_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
}
namespace {
const bool cpu_has_avx2_fma = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}();
}  // namespace
#endif

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
#if defined(RKNNXX_ENGINE_AVX2)
  if (cpu_has_avx2_fma) {
    detail::gemm_avx2(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
#endif
  detail::eigen_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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

void naive_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
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

}  // namespace rknnxx::host
