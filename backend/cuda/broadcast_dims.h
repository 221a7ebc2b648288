// The dims an elementwise GPU kernel walks (the plain kernels of
// elementwise.cu and the fused ones): the output's, each input's strides
// aligned to them as NumPy aligns shapes, from the right (0 where it
// broadcasts; inputs are contiguous), extent-1 dims dropped, and a dim
// merged into the one inside it when every input steps across both as if
// they were one. Fewer dims, fewer divisions per element: x [N, C, H, W]
// with a per-channel [C, 1, 1] walks [N, C, H * W]; operands of one shape
// walk a single dim.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "backend/tensor.h"

namespace nn::backend::cuda {

struct BroadcastDims {
  int nd = 0;  // at least 1
  int64_t size[kMaxDims] = {};
  std::vector<std::array<int64_t, kMaxDims>> stride;  // per input, per dim, in elements
};

BroadcastDims broadcast_dims(const Shape& out, std::span<const Tensor> in);

}  // namespace nn::backend::cuda
