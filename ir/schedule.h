// Schedules and the run plan. SINGA's two schedules: serial (the trace's
// order) and BFS (nodes by level: each node as soon as all it reads is
// ready). The plan adds, for a schedule, what the executor needs to recycle
// memory: each value's readers and the step after which it dies, which node
// may write into a dying input, and which may write a state in place.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace nn::ir {

enum class Schedule : uint8_t { serial, bfs };
const char* schedule_name(Schedule s);
bool parse_schedule(std::string_view name, Schedule& out);

// The nodes in a valid order. Random ops and host calls keep their trace
// order in both schedules.
std::vector<NodeId> schedule(const Graph& g, Schedule s);

struct Plan {
  Schedule kind = Schedule::serial;
  std::vector<NodeId> order;
  std::vector<uint32_t> readers;               // per value: how many node inputs read it
  std::vector<std::vector<ValueId>> dies_after;  // per step: intermediates freed after it
  // Per step: the input the node's output 0 may overwrite (it dies here and
  // nothing aliases it), or -1.
  std::vector<int8_t> reuse_input;
  // Per step: the captured value (a param, state or input the graph
  // updates) whose tensor output 0 is written straight into, or kNone. The
  // state's old value has died by then, and so has every value written
  // there before: an optimizer's chain of updates runs in the state itself.
  std::vector<ValueId> write_into;
  // The most bytes of intermediates live at once when the executor follows
  // this plan: what recycling by reader count needs.
  size_t planned_bytes = 0;
  // Per value: which block of memory holds it when the executor follows
  // this plan and the pool hands freed blocks out again by size class
  // (kNone for inputs, params, states and constants). Values with one id
  // share memory over time: the memory picture of `dot`.
  std::vector<uint32_t> block_of_value;
};

Plan make_plan(const Graph& g, Schedule s);

}  // namespace nn::ir
