// Pass `recompute`: a forward value that the backward reads, made by cheap
// ops from values the backward keeps anyway, is computed again where the
// backward first needs it rather than kept from the forward (MXNet's
// "mirror", Chen et al.'s sublinear memory, for the cheap ops alone).
//
// In relu(batch_norm(conv(x))) the backward keeps the conv's output for
// batch norm's backward, and reads the relu's output for the relu's mask
// and the next conv's weight gradient: that second activation is made again
// from the first (batch_norm_apply, then relu), so one activation of the
// two is kept. In a residual block the sum relu(bn(conv) + shortcut) is made
// again from the conv's output and the block's input, which is itself made
// again from the block before, and so on back to a value that is kept.
//
// Cheap: a pure elementwise op, and batch_norm_train's y (made again by
// batch_norm_apply from the saved mean and var, bit for bit). Kept anyway:
// a value that is not an intermediate (inputs, params, states, constants),
// one the backward reads and that is not itself made again, and one much
// smaller than the value it helps make (per-channel statistics). A value is
// made again when its recipe, the cheap nodes back to what is kept anyway,
// has at most kMaxRecipe nodes; a longer one is kept, and the values after
// it start their recipes from it (a checkpoint every few residual blocks).
// Graph outputs and states' new values stay as they are.
//
// A recipe's nodes go right before the first backward (or optimizer) node
// that reads the value, in that node's phase and with the source line of
// the node they copy; every later reader shares them. The passes after it
// fuse them with the backward's own elementwise ops.
#include <algorithm>
#include <limits>

#include "ir/pass.h"

namespace nn::ir {
namespace {

// The most nodes one value's recipe may have: 16 elementwise passes at
// most for a value of the backward, against the memory of keeping it.
constexpr uint32_t kMaxRecipe = 16;
constexpr uint32_t kNever = std::numeric_limits<uint32_t>::max();
// An operand this many times smaller than a node's result is kept rather
// than made again (batch norm's mean and var, a bias).
constexpr size_t kSmall = 16;

class Recompute : public Pass {
 public:
  const char* name() const override { return "recompute"; }

  size_t run(Graph& g) override {
    g_ = &g;
    const size_t nv = g.values.size();
    late_.assign(nv, false);
    for (const Node& n : g.nodes)
      if (n.phase != Phase::forward)
        for (ValueId v : n.inputs) late_[v] = true;
    kept_ = count_uses(g).kept;

    // Recipe sizes in trace order: an operand's is known before its reader's.
    recipe_.assign(nv, kNever);
    again_.assign(nv, false);
    size_t count = 0;
    for (const Node& n : g.nodes) {
      if (n.phase != Phase::forward) continue;
      for (ValueId v : n.outputs) {
        recipe_[v] = recipe_size(v);
        if (late_[v] && !kept_[v] && recipe_[v] <= kMaxRecipe) again_[v] = true, ++count;
      }
    }
    if (!count) return 0;
    rebuild();
    return count;
  }

 private:
  // Whether v is cheap to make again.
  bool cheap(ValueId v) const {
    const Value& val = g_->values[v];
    const Node& n = g_->nodes[val.producer];
    if (!n.op || n.op->effect != backend::Effect::pure) return false;
    if (n.op->elementwise) return n.outputs.size() == 1;
    return n.op->id == OpId::batch_norm_train && val.index == 0;
  }

  // Whether operand u is read as it is by a recipe node making `result`.
  bool kept_anyway(ValueId u, const backend::TensorType& result) const {
    const Value& val = g_->values[u];
    if (val.role != Role::intermediate || kept_[u]) return true;
    if (late_[u] && !again_[u]) return true;
    return val.type.nbytes() * kSmall <= result.nbytes();
  }

  // The inputs a recipe node reads to make v: its producer's, and for
  // batch_norm_apply the mean and var batch_norm_train wrote.
  std::vector<ValueId> recipe_inputs(ValueId v) const {
    const Node& n = g_->nodes[g_->values[v].producer];
    std::vector<ValueId> in = n.inputs;
    if (!n.op->elementwise) in.insert(in.end(), {n.outputs[1], n.outputs[2]});
    return in;
  }

  uint32_t recipe_size(ValueId v) const {
    if (!cheap(v)) return kNever;
    const backend::TensorType& t = g_->values[v].type;
    const Node& n = g_->nodes[g_->values[v].producer];
    uint32_t size = 1;
    auto add = [&](ValueId u) {
      if (kept_anyway(u, t)) return true;
      size += recipe_[u] > kMaxRecipe ? kMaxRecipe + 1 : recipe_[u];
      return size <= kMaxRecipe;
    };
    for (ValueId u : n.inputs)
      if (!add(u)) return kNever;
    if (!n.op->elementwise && !(add(n.outputs[1]) && add(n.outputs[2]))) return kNever;
    return size;
  }

  // Appends the nodes making v again (those it needs first) to `fresh`, in
  // `phase`; returns the new value. Every late reader of a value made again
  // shares its copy (`shared_`), and a recipe its own inner values (`local_`).
  ValueId make_again(ValueId v, Phase phase, std::vector<Node>& fresh) {
    if (shared_[v] != kNone) return shared_[v];
    for (auto [from, to] : local_)
      if (from == v) return to;
    // Copies: add_value below may move the values.
    const backend::TensorType type = g_->values[v].type;
    const NodeId producer = g_->values[v].producer;
    std::vector<ValueId> in = recipe_inputs(v);
    for (ValueId& u : in)
      if (!kept_anyway(u, type)) u = make_again(u, phase, fresh);
    const Node& from = g_->nodes[producer];
    Node n;
    n.op = from.op->elementwise ? from.op : &backend::op(OpId::batch_norm_apply);
    n.attrs = from.attrs;
    n.inputs = std::move(in);
    n.loc = from.loc;
    n.scope = from.scope;
    if (!from.parts().empty()) n.set_parts({from.parts().begin(), from.parts().end()});
    n.phase = phase;
    n.recomputed = true;
    const ValueId copy = g_->add_value(type, Role::intermediate);
    n.outputs = {copy};
    local_.emplace_back(v, copy);
    fresh.push_back(std::move(n));
    return copy;
  }

  // The nodes in trace order, each recipe right before the late node that
  // first reads its value.
  void rebuild() {
    Graph& g = *g_;
    shared_.assign(g.values.size(), kNone);
    std::vector<Node> fresh;                // the recipes' nodes
    std::vector<std::pair<bool, NodeId>> order;  // (fresh?, index)
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].phase != Phase::forward)
        for (ValueId& v : g.nodes[i].inputs) {
          if (!again_[v]) continue;
          if (shared_[v] == kNone) {
            local_.clear();
            const size_t first = fresh.size();
            shared_[v] = make_again(v, g.nodes[i].phase, fresh);
            for (size_t k = first; k < fresh.size(); ++k) order.emplace_back(true, NodeId(k));
          }
          v = shared_[v];
        }
      order.emplace_back(false, i);
    }
    std::vector<Node> nodes;
    nodes.reserve(order.size());
    for (auto [is_fresh, i] : order) nodes.push_back(std::move(is_fresh ? fresh[i] : g.nodes[i]));
    g.nodes = std::move(nodes);
    g.link_producers();
  }

  Graph* g_ = nullptr;
  std::vector<bool> late_;        // per value: a node outside the forward reads it
  std::vector<bool> kept_;        // per value: an output or a state's new value
  std::vector<uint32_t> recipe_;  // per value: nodes to make it again, or kNever
  std::vector<bool> again_;       // per value: made again in the backward
  std::vector<ValueId> shared_;   // per value made again: its copy, once made
  std::vector<std::pair<ValueId, ValueId>> local_;  // the recipe being made: value -> copy
};

}  // namespace

std::unique_ptr<Pass> make_recompute() { return std::make_unique<Recompute>(); }

}  // namespace nn::ir
