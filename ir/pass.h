// Graph passes: each rewrites one pattern (one file each under ir/passes/,
// its first comment naming the pattern), reports how many places it
// changed, and can be turned off by name (`--no-pass NAME`). The pipeline
// runs them in order; a pass drops nodes and redirects uses through a
// Rewriter, which renumbers the graph once at the end.
#pragma once
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace nn::ir {

struct PassResult {
  std::string pass;
  size_t changed = 0;  // places rewritten
  size_t nodes_after = 0;
  double ms = 0;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  // Rewrites g; returns how many places changed.
  virtual size_t run(Graph& g) = 0;
  // The pass this one only prepares for, or null: turning that one off
  // turns this one off too.
  virtual const char* serves() const { return nullptr; }
};

// The passes in pipeline order.
std::vector<std::unique_ptr<Pass>> default_passes();
// Names of every pass, for --no-pass and its error message.
std::vector<std::string> pass_names();

// Runs the pipeline on g, skipping the passes named in `disabled` (and
// those serving one of them); calls
// `after` with each pass's name and the graph it left (nn ir --dump-passes).
std::vector<PassResult> optimize(Graph& g, const std::set<std::string>& disabled = {},
                                 const std::function<void(const std::string&, const Graph&)>& after = {});

// Redirects uses of values and drops nodes; apply() rewrites the graph in
// one pass and renumbers it (values and nodes in their old order).
class Rewriter {
 public:
  explicit Rewriter(Graph& g);
  // Every read of `from` (node inputs, outputs, state updates' new values)
  // reads `to` instead. `to` may itself be replaced later.
  void replace(ValueId from, ValueId to);
  void drop(NodeId n) { dropped_[n] = true; }
  bool dropped(NodeId n) const { return dropped_[n]; }
  // What v stands for now; most values stand for themselves, so that test
  // is inline and the chain walk is not.
  ValueId resolve(ValueId v) { return to_[v] == v ? v : resolve_chain(v); }
  // A new constant value holding `t` (a folded result).
  ValueId add_constant(const backend::Tensor& t);
  void apply();

 private:
  Graph& g_;
  std::vector<ValueId> to_;
  std::vector<bool> dropped_;
  ValueId resolve_chain(ValueId v);
};

// Whether a value of role `by` may stand for `result`, a node's output,
// everywhere. Not when the host is handed `result` and `by` is not made by
// a node: the caller would get an input, param, state or constant itself,
// which it may write into, or a state update change, where eager code made
// a new tensor (x * 1, a folded constant).
inline bool may_stand_for(const Graph& g, ValueId result, Role by) {
  return !g.values[result].output || by == Role::intermediate;
}

// The role of the value whose memory v is: v's own, or, for a view
// (unsqueeze(s, 0), a reshape), that of the value it views.
inline Role memory_role(const Graph& g, ValueId v) {
  for (NodeId p = g.values[v].producer; p != kNone && g.nodes[p].op && g.nodes[p].op->view && !g.nodes[p].inputs.empty();
       p = g.values[v].producer)
    v = g.nodes[p].inputs[0];
  return g.values[v].role;
}

// Appends to `nodes` (a graph being rebuilt in order) a node of `op` over
// `in` standing where `near` stands (its line, scope, phase and recompute
// mark), its one output typed by the op's rule: `out` when given, else a new
// intermediate of g. Returns the output.
ValueId append_like(Graph& g, std::vector<Node>& nodes, const Node& near, backend::OpId op, std::vector<ValueId> in,
                    backend::Attrs attrs, ValueId out = kNone);

// How many nodes read each value, and whether it must stay (an output or a
// state's new value).
struct Uses {
  std::vector<uint32_t> readers;
  std::vector<bool> kept;
};
Uses count_uses(const Graph& g);

}  // namespace nn::ir
