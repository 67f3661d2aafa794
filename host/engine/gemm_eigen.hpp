#pragma once
// The Eigen product shared by gemm.cpp (the portable build) and gemm_avx2.cpp (the same code
// compiled for AVX2+FMA on x86-64, chosen at run time). Included by those two files only.

#define EIGEN_DONT_PARALLELIZE  // the session's pool parallelizes; Eigen stays single-threaded
#include <Eigen/Core>

#include <cstdint>

namespace rknnxx::host::detail {

// C = alpha * op(A) * op(B) + beta * C, row-major; see gemm.hpp. Internal linkage: each
// including file has its own copy, compiled with its own instruction set.
static inline void eigen_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                              int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
  using Map = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
  if (m <= 0 || n <= 0) {
    return;
  }
  Map cm(c, m, n, Eigen::OuterStride<>(ldc));
  if (beta == 0.0f) {
    cm.setZero();
  } else if (beta != 1.0f) {
    cm *= beta;
  }
  if (k <= 0) {
    return;
  }
  // One expression per transposition keeps Eigen's instantiations (and compile time) down. A
  // product with one row or one column goes through Eigen's matrix-vector kernel: its GEMM would pack
  // the whole of the other operand on every call (a classifier's [1, 576] x [576, 1024] spent 95 % of
  // its time packing the weights).
  const ConstMap am(a, trans_a ? k : m, trans_a ? m : k, Eigen::OuterStride<>(lda));
  const ConstMap bm(b, trans_b ? n : k, trans_b ? k : n, Eigen::OuterStride<>(ldb));
  const auto accumulate = [&](const auto& lhs, const auto& rhs) {
    if (m == 1) {
      cm.row(0).noalias() += alpha * lhs.row(0) * rhs;
    } else if (n == 1) {
      cm.col(0).noalias() += alpha * lhs * rhs.col(0);
    } else {
      cm.noalias() += alpha * lhs * rhs;
    }
  };
  if (!trans_a && !trans_b) {
    accumulate(am, bm);
  } else if (trans_a && !trans_b) {
    accumulate(am.transpose(), bm);
  } else if (!trans_a && trans_b) {
    accumulate(am, bm.transpose());
  } else {
    accumulate(am.transpose(), bm.transpose());
  }
}

}  // namespace rknnxx::host::detail
