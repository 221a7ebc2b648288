// Placements of buffers in an arena (ir/arena_placement.h).
#include "ir/arena_placement.h"

#include <algorithm>
#include <numeric>

namespace nn::ir {

void FreeRanges::add(size_t offset, size_t bytes) {
  if (spare_by_offset_.empty()) {
    by_offset_.emplace(offset, bytes);
    by_size_.emplace(bytes, offset);
    return;
  }
  auto at = std::move(spare_by_offset_.back());
  spare_by_offset_.pop_back();
  at.key() = offset;
  at.mapped() = bytes;
  by_offset_.insert(std::move(at));
  auto size = std::move(spare_by_size_.back());
  spare_by_size_.pop_back();
  size.value() = {bytes, offset};
  by_size_.insert(std::move(size));
}

void FreeRanges::erase(std::map<size_t, size_t>::iterator it) {
  spare_by_size_.push_back(by_size_.extract({it->second, it->first}));
  spare_by_offset_.push_back(by_offset_.extract(it));
}

void FreeRanges::reshape(std::map<size_t, size_t>::iterator it, size_t offset, size_t bytes) {
  auto size = by_size_.extract({it->second, it->first});
  size.value() = {bytes, offset};
  by_size_.insert(std::move(size));
  if (it->first == offset) {
    it->second = bytes;
    return;
  }
  auto hint = std::next(it);
  auto at = by_offset_.extract(it);
  at.key() = offset;
  at.mapped() = bytes;
  by_offset_.insert(hint, std::move(at));
}

// A range that grows or shrinks keeps its tree nodes: most changes touch the
// by-size order only.
void FreeRanges::insert(size_t offset, size_t bytes) {
  if (bytes == 0) return;
  const size_t end = offset + bytes;
  auto next = by_offset_.lower_bound(offset);
  const bool joins_next = next != by_offset_.end() && next->first == end;
  if (next != by_offset_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      size_t grown = prev->second + bytes;
      if (joins_next) {
        grown += next->second;
        erase(next);
      }
      reshape(prev, prev->first, grown);
      return;
    }
  }
  if (joins_next) reshape(next, offset, bytes + next->second);
  else add(offset, bytes);
}

void FreeRanges::remove(size_t offset, size_t bytes) {
  if (bytes == 0) return;
  auto it = by_offset_.upper_bound(offset);
  if (it == by_offset_.begin()) return;
  --it;
  const size_t begin = it->first, end = it->first + it->second;
  if (offset + bytes > end) return;  // not inside: nothing to take
  if (offset > begin) {
    reshape(it, begin, offset - begin);
    if (offset + bytes < end) add(offset + bytes, end - offset - bytes);
  } else if (offset + bytes < end) {
    reshape(it, offset + bytes, end - offset - bytes);
  } else {
    erase(it);
  }
}

size_t FreeRanges::best_fit(size_t bytes) const {
  auto fit = by_size_.lower_bound({bytes, 0});
  return fit == by_size_.end() ? SIZE_MAX : fit->second;
}

std::pair<size_t, size_t> FreeRanges::largest() const {
  if (by_size_.empty()) return {0, 0};
  // Of the largest size, the lowest offset.
  auto it = by_size_.lower_bound({by_size_.rbegin()->first, 0});
  return {it->second, it->first};
}

size_t FreeRanges::take_ending_at(size_t end) {
  if (by_offset_.empty()) return SIZE_MAX;
  auto last = std::prev(by_offset_.end());
  if (last->first + last->second != end) return SIZE_MAX;
  const size_t offset = last->first;
  erase(last);
  return offset;
}

size_t BestFitArena::allocate(size_t bytes) {
  if (bytes == 0) return 0;
  const size_t offset = free_.best_fit(bytes);
  if (offset != SIZE_MAX) {
    free_.remove(offset, bytes);
    return offset;
  }
  // Nothing holds it: the arena grows. No free range ends at the top (a
  // release there lowers the top instead), so the request starts at the top.
  const size_t at = top_;
  top_ += bytes;
  high_ = std::max(high_, top_);
  return at;
}

void BestFitArena::release(size_t offset, size_t bytes) {
  if (bytes == 0) return;
  free_.insert(offset, bytes);
  // Merged into a range that reaches the top: the top comes down (the
  // high-water mark stays).
  const size_t begin = free_.take_ending_at(top_);
  if (begin != SIZE_MAX) top_ = begin;
}

size_t place_largest_first(std::span<const LiveRange> ranges, std::vector<size_t>& offsets, Largest by) {
  const size_t n = ranges.size();
  offsets.assign(n, 0);
  std::vector<uint32_t> by_size(n);
  std::iota(by_size.begin(), by_size.end(), 0);
  auto size = [&](const LiveRange& r) {
    return by == Largest::bytes ? r.bytes : r.bytes * (size_t(r.end - r.begin) + 1);
  };
  // Largest first; of equal sizes the longest-lived, then the earliest.
  std::stable_sort(by_size.begin(), by_size.end(), [&](uint32_t a, uint32_t b) {
    const LiveRange &x = ranges[a], &y = ranges[b];
    if (size(x) != size(y)) return size(x) > size(y);
    if (x.end - x.begin != y.end - y.begin) return x.end - x.begin > y.end - y.begin;
    return x.begin < y.begin;
  });
  // The placed buffers by offset, each with what the scan below reads of
  // it, side by side: the scan runs over every placed buffer for each new
  // one, and reading them through their indices cost a trip to memory each.
  struct Placed {
    size_t offset, top;
    uint32_t begin, end;
  };
  std::vector<Placed> placed;
  size_t high = 0;
  for (uint32_t b : by_size) {
    const LiveRange& r = ranges[b];
    if (r.bytes == 0) continue;
    // The gaps between the placed buffers live at some step of r, bottom up.
    size_t floor = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
    for (const Placed& q : placed) {
      if (q.end < r.begin || r.end < q.begin) continue;
      if (q.offset > floor) {
        const size_t gap = q.offset - floor;
        if (gap >= r.bytes && gap < best_gap) best = floor, best_gap = gap;
        if (best_gap == r.bytes) break;  // an exact fit: no later gap is better
      }
      floor = std::max(floor, q.top);
    }
    offsets[b] = best != SIZE_MAX ? best : floor;
    high = std::max(high, offsets[b] + r.bytes);
    auto at = std::upper_bound(placed.begin(), placed.end(), offsets[b],
                               [](size_t off, const Placed& q) { return off < q.offset; });
    placed.insert(at, {offsets[b], offsets[b] + r.bytes, r.begin, r.end});
  }
  return high;
}

}  // namespace nn::ir
