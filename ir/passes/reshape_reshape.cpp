// Pass `reshape-reshape`: reshape(reshape(x)) is one reshape of x, and a
// reshape to the shape its input already has is no op at all (the backward
// rules make many: `reshape %19 {shape=[4, 2]}` of an f32[4, 2]).
#include "ir/pass.h"

namespace nn::ir {
namespace {

class ReshapeReshape : public Pass {
 public:
  const char* name() const override { return "reshape-reshape"; }
  size_t run(Graph& g) override {
    Rewriter rw(g);
    size_t changed = 0;
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      if (!n.is(OpId::reshape)) continue;
      ValueId x = rw.resolve(n.inputs[0]);
      const NodeId p = g.producer_if(x, OpId::reshape);
      bool did = false;
      if (p != kNone) {
        x = rw.resolve(g.nodes[p].inputs[0]);
        n.inputs[0] = x;
        did = true;
      }
      const backend::TensorType &from = g.values[x].type, &to = g.values[n.outputs[0]].type;
      if (from.shape == to.shape && from.dtype == to.dtype && from.weak == to.weak) {
        rw.replace(n.outputs[0], x);
        rw.drop(i);
        did = true;
      }
      changed += did;
    }
    if (changed) rw.apply();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_reshape_reshape() { return std::make_unique<ReshapeReshape>(); }

}  // namespace nn::ir
