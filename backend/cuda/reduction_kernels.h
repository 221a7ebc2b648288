// The launch interface of the reduction kernels (reduction.cu): sum, prod,
// max and min over a set of axes, argmax/argmin along one axis, and the
// integer matrix product (a sum over k in wrapping i64 arithmetic). Plain
// data; cuda/reduction.cpp and cuda/matmul.cpp build the launches.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/elementwise_kernels.h"
#include "backend/cuda/index_divider.h"

namespace nn::backend::cuda {


// x's dims split into the kept ones (one result each point) and the reduced
// ones (folded into it), extent-1 dims dropped and neighbours merged, as the
// CPU kernel's geometry; strides in elements of x.
struct ReduceLaunch {
  const void* x = nullptr;
  void* out = nullptr;  // x's dtype, or i64 for integer and bool sums and products
  DType dtype = DType::f32;
  int kept_n = 0, red_n = 0;
  int64_t kept_size[kDims] = {}, kept_stride[kDims] = {};
  int64_t red_size[kDims] = {}, red_stride[kDims] = {};
  int64_t out_count = 0, work = 0;  // results; elements folded into each
  bool index32 = false;             // x has < 2^31 elements: indices divide by these
  IndexDivider kept_div[kDims] = {}, red_div[kDims] = {};
  bool inner_reduced = false;       // is x's innermost merged dim reduced?
  // Set by plan_reduce: a block of threads per result (long reductions over
  // the innermost dim) or a thread per result; large reductions into few
  // results go in `chunks` parts per result, each folded into `partial`
  // (8 bytes a part, which the caller provides), then merged in order.
  bool by_block = false;
  int64_t chunks = 1;
  void* partial = nullptr;
};

void plan_reduce(ReduceLaunch& l);
bool reduce_launch(OpId op, const ReduceLaunch& l, cudaStream_t stream);

// argmax/argmin of x viewed as [outer, n, inner] along n: i64 results.
struct ArgLaunch {
  const void* x = nullptr;
  int64_t* out = nullptr;
  DType dtype = DType::f32;
  int64_t outer = 1, n = 1, inner = 1;
  bool max = true;
};
bool arg_launch(const ArgLaunch& l, cudaStream_t stream);

// c[m, n] = a[m, k] @ b[k, n] for integers (wrapping i64 sums) and bools
// ("any a and b"), one product of a batch.
bool int_matmul_launch(const void* a, const void* b, void* c, DType dtype, int64_t m, int64_t n, int64_t k,
                       cudaStream_t stream);

}  // namespace nn::backend::cuda
