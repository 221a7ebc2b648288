// Placing buffers with known live ranges in an arena (the dynamic storage
// allocation problem): offsets such that no two buffers live at one step
// overlap, in as small an arena as the heuristics find.
//  - BestFitArena: online, in the order buffers are taken, each in the
//    smallest free range that holds it (ggml-alloc's allocator). O(log n)
//    a request.
//  - place_largest_first: offline, the largest buffer first, each in the
//    smallest gap left by the placed buffers whose live ranges meet its own
//    (TFLite's and XLA's greedy by size). It sees the whole future, so a
//    short-lived buffer does not end up under long-lived ones; it compares
//    each buffer with every placed one, so it is for arenas of at most
//    kLargestFirstLimit buffers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

namespace nn::ir {

// Every arena offset and size is a multiple of this (a cache line; what the
// kernels' vector loads like).
inline constexpr size_t kArenaAlignment = 64;
inline size_t arena_size(size_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

// Best fit over free ranges of one arena: a request takes the smallest free
// range that holds it (the lowest such on ties), else grows the arena's top.
// Freed ranges merge with their neighbours; one that reaches the top lowers
// it. O(log n) a request.
class BestFitArena {
 public:
  size_t allocate(size_t bytes);
  void release(size_t offset, size_t bytes);
  size_t high_water() const { return high_; }

 private:
  std::map<size_t, size_t> by_offset_;              // free ranges: offset -> size
  std::set<std::pair<size_t, size_t>> by_size_;     // the same: (size, offset)
  size_t top_ = 0, high_ = 0;
  void insert(size_t offset, size_t bytes);
  void erase(std::map<size_t, size_t>::iterator it);
};

// A buffer to place: its size and the steps of its live range (inclusive).
struct LiveRange {
  size_t bytes = 0;
  uint32_t begin = 0, end = 0;
};

inline constexpr size_t kLargestFirstLimit = 2048;

// Offsets for `ranges` (each a multiple of kArenaAlignment when the sizes
// are); returns the arena size they need.
size_t place_largest_first(std::span<const LiveRange> ranges, std::vector<size_t>& offsets);

}  // namespace nn::ir
