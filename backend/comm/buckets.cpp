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

}  // namespace nn::backend::comm
