// Gradient buckets (backend/comm/buckets.h).
#include "backend/comm/buckets.h"

#include <algorithm>

namespace nn::backend::comm {

std::vector<std::vector<size_t>> plan_buckets(std::span<const TensorType> types, size_t cap_bytes) {
  std::vector<std::vector<size_t>> buckets;
  size_t bytes = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const TensorType& t = types[i];
    const size_t b = size_t(t.shape.numel()) * dtype_size(t.dtype);
    // The cap of the bucket being filled: the first one's is smaller.
    const size_t cap = buckets.size() == 1 ? std::min(cap_bytes, kFirstBucketBytes) : cap_bytes;
    const bool fits = !buckets.empty() && bytes + b <= cap && types[buckets.back()[0]].dtype == t.dtype &&
                      types[buckets.back()[0]].device == t.device;
    if (!fits) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(i);
    bytes += b;
  }
  return buckets;
}

Attrs wait_attrs(std::span<const Shape> pieces) {
  std::vector<int64_t> flat;
  for (const Shape& s : pieces) {
    flat.push_back(s.ndim());
    for (int64_t d : s.dims()) flat.push_back(d);
  }
  return Attrs{{"shapes", flat}};
}

std::vector<Shape> wait_pieces(const Attrs& attrs) {
  const std::vector<int64_t>& flat = attrs.get<std::vector<int64_t>>("shapes");
  std::vector<Shape> pieces;
  for (size_t i = 0; i < flat.size();) {
    const size_t nd = size_t(flat[i++]);
    pieces.emplace_back(std::span<const int64_t>(flat.data() + i, nd));
    i += nd;
  }
  return pieces;
}

}  // namespace nn::backend::comm
