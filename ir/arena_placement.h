// Placing buffers with known live ranges in an arena (the dynamic storage
// allocation problem): offsets such that no two buffers live at one step
// overlap, in as small an arena as the heuristics find.
//  - BestFitArena: online, in the order buffers are taken, each in the
//    smallest free range that holds it (ggml-alloc's allocator). O(log n)
//    a request.
//  - place_largest_first: offline, the largest buffer first, each in the
//    smallest gap left by the placed buffers whose live ranges meet its own
//    (TFLite's and XLA's greedy by size); largest by bytes, or by bytes
//    times steps live, which puts long-lived buffers at the bottom first
//    (a pooled activation kept for the backward under a large short-lived
//    one). It sees the whole future, so a short-lived buffer does not end up
//    under long-lived ones; it compares each buffer with every placed one,
//    so it is for arenas of at most kLargestFirstLimit buffers.
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

// The free ranges of an arena, by offset and by size. Inserted ranges merge
// with their neighbours. O(log n) an operation, allocating only while the
// number of ranges grows.
class FreeRanges {
 public:
  void insert(size_t offset, size_t bytes);  // merged with its neighbours
  // Removes [offset, offset + bytes), which lies inside one free range.
  void remove(size_t offset, size_t bytes);
  // The smallest range of at least `bytes` (the lowest such on ties);
  // SIZE_MAX when none holds it.
  size_t best_fit(size_t bytes) const;
  std::pair<size_t, size_t> largest() const;  // (offset, bytes); (0, 0) when none
  // The range that ends at `end`, removed; its offset, or SIZE_MAX.
  size_t take_ending_at(size_t end);

 private:
  std::map<size_t, size_t> by_offset_;           // offset -> size
  std::set<std::pair<size_t, size_t>> by_size_;  // (size, offset)
  // Nodes of erased ranges, reused by the next ranges added: a plan takes
  // and frees ranges on every operation, and would otherwise allocate each.
  std::vector<std::map<size_t, size_t>::node_type> spare_by_offset_;
  std::vector<std::set<std::pair<size_t, size_t>>::node_type> spare_by_size_;
  void add(size_t offset, size_t bytes);
  void erase(std::map<size_t, size_t>::iterator it);
  // The range at `it` becomes [offset, offset + bytes), overlapping no other.
  void reshape(std::map<size_t, size_t>::iterator it, size_t offset, size_t bytes);
};

// Best fit in the order buffers are taken: a request takes the smallest free
// range that holds it, else grows the arena's top. A freed range that
// reaches the top lowers it.
class BestFitArena {
 public:
  size_t allocate(size_t bytes);
  void release(size_t offset, size_t bytes);
  size_t high_water() const { return high_; }
  size_t top() const { return top_; }
  // The largest free range below the top, as (offset, bytes); (0, 0) when none.
  std::pair<size_t, size_t> largest_below_top() const { return free_.largest(); }

 private:
  FreeRanges free_;  // below the top
  size_t top_ = 0, high_ = 0;
};

// A buffer to place: its size and the steps of its live range (inclusive).
struct LiveRange {
  size_t bytes = 0;
  uint32_t begin = 0, end = 0;
};

inline constexpr size_t kLargestFirstLimit = 2048;

// What "largest" means to place_largest_first.
enum class Largest { bytes, bytes_times_steps };

// Offsets for `ranges` (each a multiple of kArenaAlignment when the sizes
// are); returns the arena size they need.
size_t place_largest_first(std::span<const LiveRange> ranges, std::vector<size_t>& offsets,
                           Largest by = Largest::bytes);

}  // namespace nn::ir
