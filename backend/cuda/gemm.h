// Row-major matrix products through cuBLAS, for matmul (matmul.cpp) and the
// pointwise convolutions (conv_pointwise.cpp): f32 and f64 in full
// precision (no TF32 unless the switch of tf32.h is on: f32 means f32, as
// the CPU computes it), f16 and bf16 through cublasGemmEx, accumulating in
// f32.
//
// cuBLAS is column-major: a row-major C = A @ B is the column-major
// C^T = B^T @ A^T, which is gemm(B, A) on the same memory.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "backend/cuda/cuda_device.h"
#include "backend/cuda/tf32.h"

namespace nn::backend::cuda {

// Row-major c[count][m, n] = op(a)[m, k] @ op(b)[k, n] (op transposes when
// ta / tb: a is then stored [k, m], b [n, k]), strided batches; with
// `accumulate`, c += rather than c =.
template <class T>
void gemm(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, int64_t sa,
          const T* b, int64_t ldb, int64_t sb, T* c, int64_t sc, int64_t count, bool accumulate = false) {
  using Scale = std::conditional_t<std::is_same_v<T, double>, double, float>;  // alpha and beta
  const Scale one = 1, beta = accumulate ? 1 : 0;
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasStatus_t st;
  if constexpr (std::is_same_v<T, float>) {
    check(cublasSetMathMode(h, tf32_switch().load() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "matmul");
    if (count == 1)
      st = cublasSgemm(h, opb, opa, int(n), int(m), int(k), &one, b, int(ldb), a, int(lda), &beta, c, int(n));
    else
      st = cublasSgemmStridedBatched(h, opb, opa, int(n), int(m), int(k), &one, b, int(ldb), sb, a, int(lda), sa,
                                     &beta, c, int(n), sc, int(count));
  } else if constexpr (std::is_same_v<T, double>) {
    if (count == 1)
      st = cublasDgemm(h, opb, opa, int(n), int(m), int(k), &one, b, int(ldb), a, int(lda), &beta, c, int(n));
    else
      st = cublasDgemmStridedBatched(h, opb, opa, int(n), int(m), int(k), &one, b, int(ldb), sb, a, int(lda), sa,
                                     &beta, c, int(n), sc, int(count));
  } else {
    const cudaDataType_t d = std::is_same_v<T, __half> ? CUDA_R_16F : CUDA_R_16BF;
    if (count == 1)
      st = cublasGemmEx(h, opb, opa, int(n), int(m), int(k), &one, b, d, int(ldb), a, d, int(lda), &beta, c, d,
                        int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else
      st = cublasGemmStridedBatchedEx(h, opb, opa, int(n), int(m), int(k), &one, b, d, int(ldb), sb, a, d, int(lda),
                                      sa, &beta, c, d, int(n), sc, int(count), CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT);
  }
  check(st, "matmul");
}

// Calls f.template operator()<T>() with T the element type cuBLAS takes for
// float dtype t.
template <class F>
void with_blas_type(DType t, F&& f) {
  switch (t) {
    case DType::f64: f.template operator()<double>(); break;
    case DType::f16: f.template operator()<__half>(); break;
    case DType::bf16: f.template operator()<__nv_bfloat16>(); break;
    default: f.template operator()<float>(); break;
  }
}

}  // namespace nn::backend::cuda
