// Orders of a graph's nodes. SINGA's two schedules, serial (the trace's
// order) and BFS (level by level: each node as soon as all it reads is
// ready), and two memory-aware greedy orders: greedy (among the ready nodes,
// the one that frees the most bytes of the arena less the bytes it takes)
// and frees-first (the trace's order, except that a ready node freeing more
// than it takes runs at once, the one freeing most first). Every order
// keeps the edges of the data, the trace order of random ops and host calls
// (they draw and print as eager mode does), keeps a recomputed node right
// after the node before it in the trace (ir/graph.h), and puts a node that overwrites
// an input in place after every other reader of that input and of its views.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace nn::ir {

// automatic: make_plan (ir/plan.h) tries the others and keeps the order whose
// memory plan is smallest.
enum class Schedule : uint8_t { automatic, serial, bfs, greedy, frees_first };
const char* schedule_name(Schedule s);  // "auto", "serial", "bfs", "greedy", "frees-first"
bool parse_schedule(std::string_view name, Schedule& out);

// The nodes in a valid order of kind s (automatic gives serial). O((n + e)
// log n) for the greedy ones, linear for the others.
std::vector<NodeId> schedule(const Graph& g, Schedule s);
// The orders of each kind in `kinds`; the greedy ones share their setup.
std::vector<std::vector<NodeId>> schedules(const Graph& g, std::span<const Schedule> kinds);

}  // namespace nn::ir
