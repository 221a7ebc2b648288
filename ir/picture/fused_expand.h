// The graph as its pictures draw it: each fused node (a `fused` or
// `matmul_epilogue` node, with its program) replaced by the ops it stands
// for, with their own source lines, nn calls and phases, so that a fused
// group shows as a cluster of the ops it merged.
#pragma once
#include <vector>

#include "ir/graph.h"

namespace nn::ir {

// The expanded graph; `groups` gets, per fused node, the ids of the nodes
// standing for it. Every value of g keeps its id; the values inside fused
// nodes and their host numbers are new values after them.
Graph expand_fused(const Graph& g, std::vector<std::vector<NodeId>>& groups);

}  // namespace nn::ir
