// Pass `constant-fold`: a pure op whose inputs are all constants that
// cannot change (host numbers, results folded before; Value::immutable, not
// a captured tensor the graph only reads, which the host may write) is worked
// out once at compile time and becomes a constant, when its result is small
// (at most 64 Ki elements): folding a big `full` would only trade a cheap
// fill on every run for memory held for good. Random ops are never folded,
// nor a graph's outputs (the caller gets a new tensor each run).
#include "backend/dispatch.h"
#include "ir/pass.h"

namespace nn::ir {
namespace {

constexpr int64_t kMaxFoldedElements = 1 << 16;

class ConstantFold : public Pass {
 public:
  const char* name() const override { return "constant-fold"; }
  size_t run(Graph& g) override {
    Rewriter rw(g);
    size_t folded = 0;
    const size_t nodes = g.nodes.size();
    std::vector<backend::Tensor> in;
    for (NodeId i = 0; i < nodes; ++i) {
      if (!g.nodes[i].op || g.nodes[i].op->effect != backend::Effect::pure) continue;
      in.clear();
      bool constant = true;
      for (ValueId v : g.nodes[i].inputs) {
        const Value& val = g.values[rw.resolve(v)];
        constant = constant && val.role == Role::constant && val.immutable && val.captured.defined();
        if (!constant) break;
        in.push_back(val.captured);
      }
      if (!constant) continue;
      const Node n = g.nodes[i];  // a copy: add_constant may grow the value table
      bool foldable = true;
      for (ValueId v : n.outputs)
        foldable = foldable && g.values[v].type.shape.numel() <= kMaxFoldedElements && may_stand_for(g, v, Role::constant);
      if (!foldable) continue;
      backend::Tensors out;
      try {
        out = backend::dispatch(*n.op, in, n.attrs);
      } catch (const backend::Error&) {
        continue;  // an error the op gives at run time stays there
      }
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        out[k].set_weak(g.values[n.outputs[k]].type.weak);
        rw.replace(n.outputs[k], rw.add_constant(out[k]));
      }
      rw.drop(i);
      ++folded;
    }
    if (folded) rw.apply();
    return folded;
  }
};

}  // namespace

std::unique_ptr<Pass> make_constant_fold() { return std::make_unique<ConstantFold>(); }

}  // namespace nn::ir
