// The region an index selects (x[1:3, 2] and the like), as the indexing ops
// carry it in their attributes: one start, step and size per axis of x, and
// the axes an integer index drops. And the strided copies that move it: out
// of x (slice), into x from a contiguous region (slice_backward), into x
// from a value broadcast over it (assign_slice). The CPU and CUDA kernels
// run the same copies with their own strided_copy.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/attrs.h"
#include "backend/ops/strided_copy.h"
#include "backend/shape.h"

namespace nn::backend {

struct Region {
  std::vector<int64_t> start, step, size;  // one per axis of x; sizes >= 0
  std::vector<int64_t> drop;               // axes taken by an integer (size 1, not in the result)
  // Axes the index bounded by numbers although the region is all of them
  // (x[0:2] or x[-2:] of 2 rows, x[0] of 1): all of the axis at this size
  // only, which an exporter with a symbolic batch must know.
  std::vector<int64_t> pinned;
};

Attrs region_attrs(const Region& r);
Region region_of(const Attrs& a);

// The shape of the region as the result sees it (dropped axes gone).
Shape region_shape(const Region& r);

// Each copy is relative to x's element `base` (set here), in elements.
// x's region into a contiguous tensor of region_shape(r).
StridedCopy slice_copy(const Shape& x, const Region& r, int64_t& base);
// A contiguous tensor of region_shape(r) into x's region.
StridedCopy slice_backward_copy(const Shape& x, const Region& r, int64_t& base);
// A contiguous v, broadcast to the region (lined up from the right), into it.
StridedCopy assign_copy(const Shape& x, const Region& r, const Shape& v, int64_t& base);

}  // namespace nn::backend
