// BLAS GEMM on row-major matrices with transpose flags, for f32 and f64:
// C[m, n] = op(A) @ op(B) where A is stored [k, m] when ta (else [m, k]) and
// B is stored [n, k] when tb (else [k, n]), with leading dimensions lda,
// ldb, ldc. The kernels of matmul_tn, matmul_nt and matmul_epilogue.
#pragma once
#include <cblas.h>

#include <cstdint>

namespace nn::backend {

inline void gemm_t(bool ta, bool tb, const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                   int64_t lda, int64_t ldb, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m), blasint(n),
              blasint(k), 1.0f, a, blasint(lda), b, blasint(ldb), 0.0f, c, blasint(ldc));
}
inline void gemm_t(bool ta, bool tb, const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k,
                   int64_t lda, int64_t ldb, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m), blasint(n),
              blasint(k), 1.0, a, blasint(lda), b, blasint(ldb), 0.0, c, blasint(ldc));
}

}  // namespace nn::backend
