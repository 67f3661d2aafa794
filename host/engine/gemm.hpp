#pragma once
// Matrix products of the heavy kernels (Conv, ConvTranspose, MatMul, Gemm). Eigen does the
// work; it is included by gemm.cpp only, so the rest of the engine compiles fast.

#include "thread_pool.hpp"

#include <cstdint>

namespace rknnxx::host {

// C = alpha * op(A) * op(B) + beta * C on row-major matrices with leading dimensions
// lda, ldb, ldc; op(A) is m x k, op(B) is k x n. beta == 0 ignores C's prior contents.
// Single-threaded.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// The same, split over the pool along n (or m when n is small).
void parallel_gemm(ThreadPool& pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Textbook triple loop with the same contract: the reference the tests and benchmarks compare against.
void naive_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace rknnxx::host
