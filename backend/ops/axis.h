// The one axis an op works along (cumsum, gather, ...): the type rules'
// check of an `axis` attribute, with its message, and the geometry the CPU
// kernels loop over, a contiguous tensor seen as [outer, n, inner] around
// that axis.
#pragma once
#include <string>

#include "backend/error.h"
#include "backend/shape.h"
#include "backend/tensor.h"

namespace nn::backend {

// The axis normalised into 0..ndim-1; "cumsum: axis 2 is out of range for
// f32[2, 3] (valid axes are -2..1)" when it is not.
inline int checked_axis(const char* op, int64_t axis, const TensorType& x) {
  const int nd = x.shape.ndim();
  int r;
  if (!normalize_axis(axis, nd, r))
    throw Error(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for " + x.str() +
                (nd == 0 ? " (it has no axes)"
                         : " (valid axes are " + std::to_string(-nd) + ".." + std::to_string(nd - 1) + ")"));
  return r;
}

// A contiguous shape as [outer, n, inner] around axis `a` (normalised).
struct AxisGeometry {
  int64_t outer = 1, n = 1, inner = 1;
  AxisGeometry(const Shape& s, int a) {
    for (int d = 0; d < s.ndim(); ++d) (d < a ? outer : d == a ? n : inner) *= s[d];
  }
};

}  // namespace nn::backend
