// The executor: replays a graph by its plan. Memory is taken lazily when a
// node first writes a value; after each step the values the plan says died
// there go back to the device pool (SINGA's automatic recycling), unless a
// view or the host still holds their block (the block's reference count
// says so). A node may write into a dying input or a state's tensor where
// the plan allows it. Outputs come back as tensors the host owns.
#pragma once
#include <span>
#include <vector>

#include "backend/error.h"
#include "ir/graph.h"
#include "ir/schedule.h"

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
