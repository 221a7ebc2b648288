// The executor: replays a graph by its plan. With the arena (MemoryMode::
// arena), one block per device of the plan's arena size is taken from the
// device pool when the run first writes into it and goes back at the end;
// the values living only during the run are tensors at their offsets in it,
// and a kernel's temporaries go to the part the step leaves free (backend/
// scratch.h).
// With the pool, such a value takes memory from the pool when first written
// and gives it back after the step where the plan says it dies (SINGA's
// automatic recycling), unless a view still holds its block. Either way, a
// node writes over an input where the inplace pass said so (Node::
// overwrites), and what the host keeps (outputs, states' new values) gets
// memory of its own. Outputs come back as tensors the host owns.
#pragma once
#include <span>
#include <vector>

#include "backend/error.h"
#include "ir/graph.h"
#include "ir/plan.h"

namespace nn::ir {

// A failure while a node runs, with the node's source location.
class RunError : public backend::Error {
 public:
  RunError(const std::string& msg, Loc loc, NodeId node) : backend::Error(msg), loc_(loc), node_(node) {}
  const Loc& loc() const { return loc_; }
  NodeId node() const { return node_; }

 private:
  Loc loc_;
  NodeId node_;
};

// Runs g once with `args` bound to g.inputs (same order and types); applies
// the state updates and returns the outputs. Throws RunError. With a
// backend::Profiler active, each node's time is recorded.
std::vector<backend::Tensor> run(const Graph& g, const Plan& p, std::span<const backend::Tensor> args);

}  // namespace nn::ir
