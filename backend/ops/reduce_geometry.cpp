// reduce_geometry (backend/ops/reduce_geometry.h).
#include "backend/ops/reduce_geometry.h"

namespace nn::backend {

ReduceGeometry reduce_geometry(const Shape& shape, const std::vector<int64_t>& axes) {
  int nd = shape.ndim();
  auto strides = contiguous_strides(shape);
  bool is_reduced[kMaxDims] = {};
  for (int64_t a : axes) is_reduced[a] = true;
  // Merge from the innermost dim outwards.
  int64_t msize[kMaxDims], mstride[kMaxDims];
  bool mred[kMaxDims];
  int m = 0;
  for (int d = nd - 1; d >= 0; --d) {
    if (shape[d] == 1) continue;
    if (m > 0 && mred[m - 1] == is_reduced[d]) {
      msize[m - 1] *= shape[d];
      continue;
    }
    msize[m] = shape[d], mstride[m] = strides[d], mred[m] = is_reduced[d];
    ++m;
  }
  ReduceGeometry g;
  g.inner_reduced = m > 0 && mred[0];
  for (int i = m - 1; i >= 0; --i) (mred[i] ? g.reduced : g.kept).push(msize[i], mstride[i]);
  return g;
}

}  // namespace nn::backend
