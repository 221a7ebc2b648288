// Regions of an index and their strided copies (backend/ops/region.h).
#include "backend/ops/region.h"

#include <algorithm>

namespace nn::backend {
namespace {

bool dropped(const Region& r, int d) { return std::find(r.drop.begin(), r.drop.end(), int64_t(d)) != r.drop.end(); }

// Where the region's elements live in x: a base offset and, as the source,
// per-axis strides (the destination's are left 0).
StridedCopy region_layout(const Shape& shape, const Region& r, int64_t& base) {
  auto strides = contiguous_strides(shape);
  StridedCopy c;
  base = 0;
  for (int d = 0; d < shape.ndim(); ++d) {
    if (r.size[size_t(d)] > 0) base += r.start[size_t(d)] * strides[size_t(d)];
    c.push(r.size[size_t(d)], r.step[size_t(d)] * strides[size_t(d)], 0);
  }
  return c;
}

}  // namespace

Attrs region_attrs(const Region& r) {
  Attrs a{{"start", r.start}, {"step", r.step}, {"size", r.size}, {"drop", r.drop}};
  if (!r.pinned.empty()) a.set("pinned", r.pinned);  // rare: kept out of the IR's text otherwise
  return a;
}

Region region_of(const Attrs& a) {
  return {a.get<std::vector<int64_t>>("start"), a.get<std::vector<int64_t>>("step"),
          a.get<std::vector<int64_t>>("size"), a.get<std::vector<int64_t>>("drop"),
          a.get_or("pinned", std::vector<int64_t>{})};
}

Shape region_shape(const Region& r) {
  Shape s;
  for (size_t d = 0; d < r.size.size(); ++d)
    if (!dropped(r, int(d))) s.push_back(r.size[d]);
  return s;
}

StridedCopy slice_copy(const Shape& x, const Region& r, int64_t& base) {
  StridedCopy c = region_layout(x, r, base);
  // The result is the region, contiguous (dropped axes have size 1 there).
  auto dst = contiguous_strides(Shape::of(r.size));
  for (int d = 0; d < c.ndim; ++d) c.dst_strides[size_t(d)] = dst[size_t(d)];
  return c;
}

StridedCopy slice_backward_copy(const Shape& x, const Region& r, int64_t& base) {
  StridedCopy c = region_layout(x, r, base);
  std::swap(c.src_strides, c.dst_strides);
  auto src = contiguous_strides(Shape::of(r.size));
  for (int d = 0; d < c.ndim; ++d) c.src_strides[size_t(d)] = src[size_t(d)];
  return c;
}

StridedCopy assign_copy(const Shape& x, const Region& r, const Shape& v, int64_t& base) {
  StridedCopy c = region_layout(x, r, base);
  std::swap(c.src_strides, c.dst_strides);
  auto vstrides = contiguous_strides(v);
  const int nv = v.ndim();
  int region_axis = 0;
  const int region_ndim = x.ndim() - int(r.drop.size());
  for (int d = 0; d < x.ndim(); ++d) {
    if (dropped(r, d)) continue;                       // stride 0 stays
    const int vd = region_axis++ - (region_ndim - nv);  // v lines up with the region from the right
    if (vd >= 0 && v[vd] != 1) c.src_strides[size_t(d)] = vstrides[size_t(vd)];
  }
  return c;
}

}  // namespace nn::backend
