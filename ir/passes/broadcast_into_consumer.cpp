// Pass `broadcast-into-consumer` (Owl's pattern 023): an elementwise op
// broadcasts its operands itself, so a broadcast_to feeding it can go when
// the op, given the smaller operand, still gives the same output type (the
// seed of a gradient broadcast to a batch, then multiplied, say). The op's
// type rule decides; the broadcast is left to dead-code.
#include "ir/pass.h"

namespace nn::ir {
namespace {

class BroadcastIntoConsumer : public Pass {
 public:
  const char* name() const override { return "broadcast-into-consumer"; }
  size_t run(Graph& g) override {
    size_t changed = 0;
    for (Node& n : g.nodes) {
      if (!n.op || !n.op->elementwise || n.op->effect != backend::Effect::pure) continue;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        const NodeId p = g.values[n.inputs[k]].producer;
        if (p == kNone || !g.nodes[p].op || g.nodes[p].op->id != OpId::broadcast_to) continue;
        std::vector<backend::TensorType> types;
        for (size_t j = 0; j < n.inputs.size(); ++j)
          types.push_back(g.values[j == k ? g.nodes[p].inputs[0] : n.inputs[j]].type);
        backend::OutTypes out;
        try {
          out = n.op->type_rule(types, n.attrs);
        } catch (const backend::Error&) {
          continue;
        }
        bool same = out.size() == n.outputs.size();
        for (size_t j = 0; same && j < out.size(); ++j) {
          const backend::TensorType& t = g.values[n.outputs[j]].type;
          same = out[j].dtype == t.dtype && out[j].shape == t.shape && out[j].weak == t.weak;
        }
        if (!same) continue;
        n.inputs[k] = g.nodes[p].inputs[0];
        ++changed;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_broadcast_into_consumer() { return std::make_unique<BroadcastIntoConsumer>(); }

}  // namespace nn::ir
