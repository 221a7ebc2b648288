// The static memory plan (ggml-alloc, Owl's block reuse): for one order of
// the nodes, every arena buffer (ir/buffers.h) gets a byte offset in one
// arena per device, from its live range: taken when its root is written,
// free again after the last read of any value sharing it. Offsets come from
// a best-fit allocator over the free ranges (the smallest hole that fits,
// adjacent free ranges merged). The plan also gives the lower bound no
// offsets could beat for that order: the most bytes live at one step.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "ir/buffers.h"

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

struct DeviceArena {
  backend::Device* device = nullptr;
  size_t bytes = 0;        // planned: the arena's size
  size_t lower_bound = 0;  // the most bytes of its buffers live at one step
};

struct MemoryPlan {
  Buffers buffers;
  // Per buffer, arena buffers only: the steps that first write it and last
  // use it (inclusive); in_arena says which buffers those are.
  std::vector<uint32_t> begin, end;
  std::vector<bool> in_arena;
  std::vector<size_t> offset;     // per buffer: where it starts in its arena (arena buffers)
  std::vector<uint32_t> arena_of;  // per buffer: index into `arenas` (arena buffers), else kNone
  std::vector<DeviceArena> arenas;
  size_t arena_bytes = 0;        // summed over devices
  size_t lower_bound_bytes = 0;  // summed over devices
  // Per value: the id of the region of memory that holds it, for the memory
  // picture: buffers at one offset of one arena share an id (one region
  // reused over time), each own buffer has one; kNone for bound values.
  std::vector<uint32_t> block_of_value;
};

// Plans the arena of g's buffers for the nodes run in `order`.
MemoryPlan plan_memory(const Graph& g, Buffers buffers, std::span<const NodeId> order);

}  // namespace nn::ir
