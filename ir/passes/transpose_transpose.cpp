// Pass `transpose-transpose`: permute(permute(x, p), q) is one permute of x
// by the composed order, and none at all when that order is the identity
// (the backward of a transpose of a transpose, say). The inner permute is
// left to dead-code when nothing else reads it.
#include "ir/pass.h"

namespace nn::ir {
namespace {

class TransposeTranspose : public Pass {
 public:
  const char* name() const override { return "transpose-transpose"; }
  size_t run(Graph& g) override {
    Rewriter rw(g);
    size_t changed = 0;
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      if (!n.op || n.op->id != OpId::permute) continue;
      const ValueId in = rw.resolve(n.inputs[0]);
      const NodeId p = g.values[in].producer;
      if (p == kNone || !g.nodes[p].op || g.nodes[p].op->id != OpId::permute) continue;
      const auto& inner = g.nodes[p].attrs.get<std::vector<int64_t>>("dims");
      const auto& outer = n.attrs.get<std::vector<int64_t>>("dims");
      std::vector<int64_t> dims(outer.size());
      bool identity = true;
      for (size_t k = 0; k < outer.size(); ++k) {
        dims[k] = inner[size_t(outer[k])];
        identity = identity && dims[k] == int64_t(k);
      }
      const ValueId x = rw.resolve(g.nodes[p].inputs[0]);
      if (identity && !may_stand_for(g, n.outputs[0], memory_role(g, x))) continue;  // a result stays a new tensor
      if (identity) {
        rw.replace(n.outputs[0], x);
        rw.drop(i);
      } else {
        n.inputs[0] = x;
        n.attrs.set("dims", dims);
      }
      ++changed;
    }
    if (changed) rw.apply();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_transpose_transpose() { return std::make_unique<TransposeTranspose>(); }

}  // namespace nn::ir
