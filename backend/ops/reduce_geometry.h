// The geometry of a reduction over some axes of a contiguous tensor: its
// dims with extent-1 dims dropped and runs of reduced (or kept) dims
// merged, as the CPU and CUDA reduction kernels walk them.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/shape.h"

namespace nn::backend {

// An index space: sizes and strides (in elements), outermost first.
struct DimList {
  int n = 0;
  int64_t size[kMaxDims];
  int64_t stride[kMaxDims];
  void push(int64_t s, int64_t st) { size[n] = s, stride[n] = st, ++n; }
  int64_t count() const {
    int64_t c = 1;
    for (int i = 0; i < n; ++i) c *= size[i];
    return c;
  }
  // Offset of the i-th point of this index space (row-major).
  int64_t offset_of(int64_t i) const {
    int64_t off = 0;
    for (int k = n - 1; k >= 0; --k) {
      off += (i % size[k]) * stride[k];
      i /= size[k];
    }
    return off;
  }
};

struct ReduceGeometry {
  DimList kept, reduced;  // in x's order; strides in elements of x
  bool inner_reduced = false;  // is x's innermost (stride-1) merged dim reduced?
};

// x's dims with extent-1 dims dropped and runs of reduced (or kept) dims
// merged: a [B, C, H, W] sum over (2, 3) becomes kept [B*C] then reduced [H*W].
ReduceGeometry reduce_geometry(const Shape& shape, const std::vector<int64_t>& axes);

}  // namespace nn::backend
