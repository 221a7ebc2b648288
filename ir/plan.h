// The run plan of a graph: the order of its nodes (ir/schedule.h), each
// value's readers and the step after which it dies, and where memory comes
// from. With the arena (the default), the buffers that live only during a
// run get offsets in one block per device (ir/memory_plan.h); with the pool,
// they are taken from the device pool when first written and go back after
// their last reader (SINGA's recycling by reader count). Either way, views
// and outputs written in place share their input's memory, and what the
// host keeps gets a block of its own.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/memory_plan.h"
#include "ir/schedule.h"

namespace nn::ir {

enum class MemoryMode : uint8_t { arena, pool };
const char* memory_mode_name(MemoryMode m);  // "arena", "pool"
bool parse_memory_mode(std::string_view name, MemoryMode& out);

struct Plan {
  Schedule kind = Schedule::serial;  // the order taken (never automatic)
  MemoryMode memory = MemoryMode::arena;
  std::vector<NodeId> order;
  std::vector<uint32_t> readers;  // per value: how many node inputs read it
  // The intermediates dropped after step s: dead[dead_from[s] .. dead_from[s + 1]).
  std::vector<uint32_t> dead_from;
  std::vector<ValueId> dead;
  std::span<const ValueId> dies_after(size_t step) const {
    return {dead.data() + dead_from[step], dead.data() + dead_from[step + 1]};
  }
  MemoryPlan memory_plan;                        // the buffers, and the arena's offsets
  // The bytes the run's own buffers take: the arena's size (arena), or the
  // peak of the pool simulation (pool).
  size_t planned_bytes = 0;
  // The most bytes of those buffers live at one step, for this order: what
  // no placement of them could go below.
  size_t lower_bound_bytes = 0;
  // The peak of the same buffers when the pool recycles them by size class
  // in this order (whatever the mode; for comparison).
  size_t pool_bytes = 0;
  // Per value: the region of memory that holds it (kNone for inputs, params,
  // states and constants); values with one id share memory over time, as
  // the mode places them: the memory picture of `dot`.
  std::vector<uint32_t> block_of_value;
  // Per output: a fresh value in the trace whose memory the passes made the
  // caller's (`x + 0` became x, a cast round trip its input) or another
  // output's (common subexpressions): a run returns a copy of it, as eager
  // code returns a tensor of its own.
  std::vector<bool> copy_output;
};

// The plan of g for the order s. Automatic: of serial, greedy and
// frees-first, the one with the smallest arena (with the pool: the lowest
// lower bound), the first of them on a tie. BFS, made for running wide
// graphs level by level, needs more memory than those as a rule.
Plan make_plan(const Graph& g, Schedule s = Schedule::automatic, MemoryMode m = MemoryMode::arena);

}  // namespace nn::ir
