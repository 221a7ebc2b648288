// Pass `relu-grad-through-max-pool`: in the backward of max_pool2d(y),
//   relu_backward(max_pool2d_backward(g, idx), y)
// becomes
//   max_pool2d_backward(relu_backward(g, max_pool2d(y)), idx),
// the ReLU's mask taken on the pooled tensor instead of the full one (a
// quarter of the elements for a 2x2 pool, and one pass over the full
// tensor fewer). The two are equal element for element: the pool's
// gradient sends each window's g to the window's argmax alone, and the
// pooled value is y at that argmax, bit for bit (ties and NaN included), so
// the mask `y > 0` is the same whether read at the argmax of y or at the
// pooled value; positions no window chose get 0 either way. y itself is then
// read by no backward node, and need not be kept for it. Runs after
// autodiff, before `recompute` (which would hand relu_backward a copy of y).
#include "ir/pass.h"

namespace nn::ir {
namespace {

using backend::OpId;

class ReluGradThroughMaxPool : public Pass {
 public:
  const char* name() const override { return "relu-grad-through-max-pool"; }

  size_t run(Graph& g) override {
    const Uses uses = count_uses(g);
    size_t changed = 0;
    for (NodeId d = 0; d < g.nodes.size(); ++d) {
      if (!g.nodes[d].is(OpId::relu_backward)) continue;
      const ValueId p = g.nodes[d].inputs[0], y = g.nodes[d].inputs[1];
      const NodeId pb = g.producer_if(p, OpId::max_pool2d_backward);
      if (pb == kNone || uses.readers[p] != 1 || uses.kept[p]) continue;
      const ValueId grad = g.nodes[pb].inputs[0], idx = g.nodes[pb].inputs[1];
      const NodeId pool = g.producer_if(idx, OpId::max_pool2d);
      if (pool == kNone || g.values[idx].index != 1 || g.nodes[pool].inputs[0] != y) continue;
      const ValueId pooled = g.nodes[pool].outputs[0];
      const backend::TensorType &gt = g.values[grad].type, &pt = g.values[pooled].type;
      if (gt.dtype != pt.dtype || gt.device != pt.device || !(gt.shape == pt.shape)) continue;

      // The two nodes swap their ops: pb masks the pooled gradient, d
      // scatters it; each keeps its output value (p now pooled-sized).
      Node &first = g.nodes[pb], &second = g.nodes[d];
      std::swap(first.op, second.op);
      std::swap(first.attrs, second.attrs);
      std::swap(first.loc, second.loc);
      std::swap(first.scope, second.scope);
      first.inputs = {grad, pooled};
      second.inputs = {p, idx};
      g.values[p].type = gt;
      ++changed;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_relu_grad_through_max_pool() { return std::make_unique<ReluGradThroughMaxPool>(); }

}  // namespace nn::ir
