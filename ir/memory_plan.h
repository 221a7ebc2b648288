// The static memory plan (ggml-alloc, Owl's block reuse): for one order of
// the nodes, every arena buffer (ir/buffers.h) gets a byte offset in one
// arena per device, from its live range: taken when its root is written,
// free again after the last read of any value sharing it. Offsets come from
// one of two placements (ir/arena_placement.h), whichever needs the smaller
// arena: best fit in the order buffers are taken (ggml-alloc), or, knowing
// every live range beforehand, largest first. The plan also gives the lower
// bound no offsets could beat for that order: the most bytes live at one
// step.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ir/arena_placement.h"
#include "ir/buffers.h"

namespace nn::ir {

struct DeviceArena {
  backend::Device* device = nullptr;
  size_t bytes = 0;        // planned: the arena's size
  size_t lower_bound = 0;  // the most bytes of its buffers live at one step
  bool largest_first = false;  // which placement gave the offsets
  // It holds the bucket of an all-reduce, which runs fastest when the arena
  // lies in the communicator's shared memory (Communicator::take_shared).
  bool holds_bucket = false;
};

struct MemoryPlan {
  Buffers buffers;
  // Per buffer, arena buffers only: the steps that first write it and last
  // use it (inclusive); in_arena says which buffers those are.
  std::vector<uint32_t> begin, end;
  std::vector<bool> in_arena;
  // Per buffer: the arena buffer it lies inside, or kNone, and where in it:
  // a gradient written straight into its all-reduce bucket, so that the
  // bucket's start copies nothing. Such a buffer is not placed itself
  // (in_arena false); its holder's live range covers its own.
  std::vector<uint32_t> inside;
  std::vector<size_t> inside_at;
  std::vector<size_t> offset;     // per buffer: where it starts in its arena (arena buffers, those inside)
  std::vector<uint32_t> arena_of;  // per buffer: index into `arenas` (arena buffers), else kNone
  std::vector<DeviceArena> arenas;
  size_t arena_bytes = 0;        // summed over devices
  size_t lower_bound_bytes = 0;  // summed over devices
  // Per step and arena ([step * arenas.size() + a]): the largest range of the
  // arena no buffer uses at that step, as (offset, bytes): where the
  // kernel's temporaries go (backend/scratch.h).
  std::vector<std::pair<size_t, size_t>> scratch;
  // Per value: the id of the region of memory that holds it, for the memory
  // picture: buffers at one offset of one arena share an id (one region
  // reused over time), each own buffer has one; kNone for bound values.
  std::vector<uint32_t> block_of_value;
};

// Plans the arena of g's buffers for the nodes run in `order`.
MemoryPlan plan_memory(const Graph& g, Buffers buffers, std::span<const NodeId> order);
// plan_memory in two halves: the placement (arenas, offsets, and each
// step's scratch where best fit placed the arena), which is all that
// compares one order with another, then what only the chosen plan needs
// (the scratch of arenas placed largest first, the picture's region ids).
MemoryPlan place_buffers(const Graph& g, Buffers buffers, std::span<const NodeId> order);
void describe_placement(const Graph& g, std::span<const NodeId> order, MemoryPlan& p);

// The lower bound alone (summed over devices), in linear time: no arena
// placed for `order` can be smaller.
size_t liveness_lower_bound(const Graph& g, const Buffers& buffers, std::span<const NodeId> order);

}  // namespace nn::ir
