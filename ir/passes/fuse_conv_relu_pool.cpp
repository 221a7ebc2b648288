// Pass `fuse-conv-relu-pool`: a conv2d_relu (pass fuse-conv-relu) whose
// output only a max_pool2d reads, and whose pool's indices nothing reads,
// becomes one `conv2d_relu_max_pool` node (backend/ops/nn_conv.cpp): the
// pool runs on oneDNN's blocked output, so only the pooled quarter is
// reordered to NCHW, and the full-size output never reaches memory in
// nn's layout. The conv-ReLU-pool of LeNet-like networks, in inference
// graphs: in training, max_pool2d's backward reads the indices, and
// relu's reads the conv2d_relu's output, so nothing fuses there.
#include "backend/ops/blocked_layout.h"
#include "ir/fused_node.h"

namespace nn::ir {
namespace {

class FuseConvReluPool : public Pass {
 public:
  const char* name() const override { return "fuse-conv-relu-pool"; }

  size_t run(Graph& g) override {
    const Uses uses = count_uses(g);
    Rewriter rw(g);
    size_t changed = 0;
    for (NodeId p = 0; p < g.nodes.size(); ++p) {
      Node& pool = g.nodes[p];
      if (!pool.is(OpId::max_pool2d) || backend::blocked_attr(pool.attrs)) continue;
      const ValueId y = pool.inputs[0], indices = pool.outputs[1];
      const NodeId c = g.producer_if(y, OpId::conv2d_relu);
      if (c == kNone) continue;
      if (uses.readers[y] != 1 || uses.kept[y] || uses.readers[indices] != 0 || uses.kept[indices]) continue;
      const Node& conv = g.nodes[c];
      backend::Attrs attrs = conv.attrs;
      attrs.set("pool_kernel", pool.attrs.get<std::vector<int64_t>>("kernel"));
      attrs.set("pool_stride", pool.attrs.get<std::vector<int64_t>>("stride"));
      attrs.set("pool_padding", pool.attrs.get<std::vector<int64_t>>("padding"));
      pool.op = &backend::op(OpId::conv2d_relu_max_pool);
      pool.inputs = conv.inputs;
      pool.attrs = std::move(attrs);
      pool.outputs.pop_back();  // the indices, read by nothing
      g.values[indices].producer = kNone;
      pool.loc = conv.loc;  // the node's line is the convolution's
      pool.scope = conv.scope;
      rw.drop(c);
      ++changed;
    }
    if (changed) rw.apply();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_conv_relu_pool() { return std::make_unique<FuseConvReluPool>(); }

}  // namespace nn::ir
