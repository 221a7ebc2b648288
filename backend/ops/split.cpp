// Splitting a tensor into a list of pieces along one axis (SPEC §13):
// chunk, split_sizes and unbind, composites of slicing (ops/index.cpp), so
// each piece's gradient is slice's and graph mode records slices.
#include <string>
#include <vector>

#include "backend/ops.h"
#include "backend/ops/axis.h"

namespace nn::backend {
namespace {

// x[:, ..., lo:hi] with the slice at axis a.
Tensor piece(const Tensor& x, int a, int64_t lo, int64_t hi) {
  std::vector<IndexItem> items(size_t(a) + 1);
  items[size_t(a)].start = lo;
  items[size_t(a)].stop = hi;
  return index(x, items);
}

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

// As PyTorch: pieces of ceil(size / n), the last one smaller, and fewer than
// n when they run out (a size of 5 in 4 chunks gives 2, 2, 1); an axis of
// size 0 gives n empty pieces (at most kMaxEmptyChunks of them).
constexpr int64_t kMaxEmptyChunks = int64_t(1) << 20;

std::vector<Tensor> chunk(const Tensor& x, int64_t n, int64_t axis) {
  const int a = checked_axis("chunk", axis, x.type());
  if (n <= 0) throw Error("chunk: the number of chunks must be positive, got " + std::to_string(n));
  // ceil(size / n) without size + n - 1, which overflows for a huge n.
  const int64_t size = x.shape()[a], step = size / n + (size % n != 0);
  std::vector<Tensor> out;
  if (size == 0) {
    if (n > kMaxEmptyChunks)
      throw Error("chunk: " + std::to_string(n) + " empty pieces of an axis of size 0 are more than " +
                  std::to_string(kMaxEmptyChunks));
    for (int64_t i = 0; i < n; ++i) out.push_back(piece(x, a, 0, 0));
    return out;
  }
  for (int64_t lo = 0; lo < size; lo += step) out.push_back(piece(x, a, lo, std::min(size, lo + step)));
  return out;
}

std::vector<Tensor> split_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis) {
  const int a = checked_axis("split_sizes", axis, x.type());
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw Error("split_sizes: negative size " + std::to_string(s) + " in " + list_str(sizes));
    if (__builtin_add_overflow(total, s, &total))  // would wrap, and might wrap to the axis' size
      throw Error("split_sizes: sizes " + list_str(sizes) + " add up to more than 2^63, but axis " + std::to_string(a) +
                  " of " + x.type().str() + " has " + std::to_string(x.shape()[a]));
  }
  if (total != x.shape()[a])
    throw Error("split_sizes: sizes " + list_str(sizes) + " add up to " + std::to_string(total) + ", but axis " +
                std::to_string(a) + " of " + x.type().str() + " has " + std::to_string(x.shape()[a]));
  std::vector<Tensor> out;
  int64_t lo = 0;
  for (int64_t s : sizes) {
    out.push_back(piece(x, a, lo, lo + s));
    lo += s;
  }
  return out;
}

std::vector<Tensor> unbind(const Tensor& x, int64_t axis) {
  const int a = checked_axis("unbind", axis, x.type());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < x.shape()[a]; ++i) {
    std::vector<IndexItem> items(size_t(a) + 1);
    items[size_t(a)] = IndexItem{IndexItem::index, i, {}, {}, {}};
    out.push_back(index(x, items));
  }
  return out;
}

}  // namespace nn::backend
