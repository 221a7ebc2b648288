// The launch interface of the pooling kernels (pool_kernels.cu): 2-d max
// and average pooling with their backward, f32 and f64. Plain data.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/index_divider.h"
#include "backend/dtype.h"

namespace nn::backend::cuda {

// Pooling over planes of h x w pixels (ceil_mode off, dilation 1).
struct PoolLaunch {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  DType dtype = DType::f32;
  bool wide_index = false;  // max pool indices are i64 (else i32)
  // Both index spaces (planes x oh x ow, planes x h x w) under 2^31
  // elements: their dims' dividers (with_pool_dividers).
  bool index32 = false;
  IndexDivider out_div[3], in_div[3];
};

// g with its dividers set where both index spaces allow them.
inline PoolLaunch with_pool_dividers(PoolLaunch g) {
  const int64_t out[3] = {g.planes, g.oh, g.ow}, in[3] = {g.planes, g.h, g.w};
  g.index32 = make_dividers(3, out, g.planes * g.oh * g.ow, g.out_div) &&
              make_dividers(3, in, g.planes * g.h * g.w, g.in_div);
  return g;
}
void max_pool_launch(const PoolLaunch& g, const void* x, void* y, void* idx, cudaStream_t stream);
void max_pool_backward_launch(const PoolLaunch& g, const void* dy, const void* idx, void* dx, cudaStream_t stream);
void avg_pool_launch(const PoolLaunch& g, const void* x, void* y, cudaStream_t stream);
void avg_pool_backward_launch(const PoolLaunch& g, const void* dy, void* dx, cudaStream_t stream);

}  // namespace nn::backend::cuda
