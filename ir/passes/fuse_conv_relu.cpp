// Pass `fuse-conv-relu`: a CPU conv2d whose output only a relu reads, and
// that is no output of the graph, becomes one `conv2d_relu` node
// (backend/ops/nn_conv.cpp): the ReLU runs on each block of the output as
// the convolution leaves it, still in cache, instead of as a pass of its own
// over memory. The relu's output is the node's, so relu's gradient, which
// reads it, is unchanged; the conv2d's own output is never made. Runs after
// autodiff and fuse-elementwise (a relu that fusion merged with other
// elementwise ops is left to that fused node).
#include "ir/fused_node.h"

namespace nn::ir {
namespace {

class FuseConvRelu : public Pass {
 public:
  const char* name() const override { return "fuse-conv-relu"; }

  size_t run(Graph& g) override {
    const Uses uses = count_uses(g);
    Rewriter rw(g);
    size_t changed = 0;
    for (NodeId r = 0; r < g.nodes.size(); ++r) {
      Node& relu = g.nodes[r];
      if (!relu.is(OpId::relu)) continue;
      const ValueId y = relu.inputs[0];
      const NodeId c = g.producer_if(y, OpId::conv2d);
      if (c == kNone) continue;
      const backend::TensorType& t = g.values[y].type;
      if (uses.readers[y] != 1 || uses.kept[y] || !on_cpu(t.device) ||
          (t.dtype != backend::DType::f32 && t.dtype != backend::DType::f64))
        continue;
      const Node& conv = g.nodes[c];
      relu.op = &backend::op(OpId::conv2d_relu);
      relu.inputs = conv.inputs;
      relu.attrs = conv.attrs;
      relu.loc = conv.loc;  // the node's line is the convolution's
      relu.scope = conv.scope;
      rw.drop(c);
      ++changed;
    }
    if (changed) rw.apply();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_conv_relu() { return std::make_unique<FuseConvRelu>(); }

}  // namespace nn::ir
