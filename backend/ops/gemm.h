// The one entry to GEMM on the CPU, for f32 and f64, on row-major matrices:
// C[m, n] = op(A) @ op(B) + beta * C, where A is stored [k, m] when ta (else
// [m, k]) and B is stored [n, k] when tb (else [k, n]), with leading
// dimensions lda, ldb, ldc. Matmul, its transposed and epilogue forms and
// the im2col convolutions all multiply through here.
//
// f32 goes to oneDNN's sgemm where nn is built with oneDNN (backend/onednn.h)
// and it is on: oneDNN chooses its kernels by the CPU's features, while
// OpenBLAS 0.3.21 chooses by CPU model and falls back to its slowest kernels
// (Prescott) on a model it does not know. Measured on 2 cores of a Xeon with
// AVX-512 that OpenBLAS calls Prescott, 1024² f32: 27 GFLOP/s through
// OpenBLAS, 130 through oneDNN. f64 stays with OpenBLAS.
#pragma once
#include <cstdint>

#include "backend/dtype.h"

namespace nn::backend {

// What matmul_tn and matmul_nt multiply: two 2-d float matrices of one
// dtype. Their type rule refuses anything else; matmul's backward asks
// before it calls them.
inline bool transposed_operands(int ndim_a, DType a, int ndim_b, DType b) {
  return ndim_a == 2 && ndim_b == 2 && a == b && is_floating(a);
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
          int64_t ldb, double beta, double* c, int64_t ldc);

// The same product as plain loops: what gemm runs where OpenBLAS cannot be
// loaded (backend/blas.h), so that a product is slow then, never wrong.
template <class T>
void reference_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                    int64_t ldb, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      // beta = 0 ignores what C held (NaN included), as BLAS does.
      c[i * ldc + j] = beta == T(0) ? sum : sum + beta * c[i * ldc + j];
    }
}

}  // namespace nn::backend
