// The Eigen GEMM compiled for AVX2 and FMA (x86-64 only; this file gets -mavx2 -mfma).
// Every Eigen symbol is renamed so that no function compiled here for AVX2 can be picked by
// the linker for the portable build in gemm.cpp: this file must stay free of other inline
// library code (only Eigen and <cstdint>).
#define Eigen rknnxx_eigen_avx2
#include "gemm_eigen.hpp"

namespace rknnxx::host::detail {

void gemm_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  eigen_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace rknnxx::host::detail
