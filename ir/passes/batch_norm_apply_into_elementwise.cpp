// Pass `batch-norm-apply-into-elementwise`: a batch_norm_apply (batch norm's
// y made again by `recompute`) whose every reader is an elementwise op that
// fusion takes becomes the elementwise ops it stands for,
//   y = (x - mean) * scale + beta,  scale = batch_norm_scale(gamma, var),
// with the per-channel operands viewed as [C, 1, ...] so that they
// broadcast over x. fuse-elementwise then merges the normalisation with its
// readers (the relu, the residual sum, the relu's mask): y, once written by
// batch_norm_apply and read back, is never written at all. The results are
// batch_norm_apply's bit for bit: both compute in the tensor's dtype, one
// rounding per op, from the scale batch_norm_scale rounds as batch norm
// does. One scale and one view of each operand serve every batch_norm_apply
// of the same statistics (a residual chain makes a block's y several times).
//
// A pass that only prepares for fuse-elementwise: it is skipped when that
// pass is off. It takes GPU graphs (with fused kernels on), where the pass
// over memory it saves is what the kernels cost. The CPU's tile evaluator
// pays more for the three steps and three broadcast loads than the pass
// saves (ResNet-8's fused nodes took 35 ms more over 20 steps, for 20 ms of
// batch_norm_apply gone), so CPU graphs keep batch_norm_apply.
#include <algorithm>
#include <map>
#include <tuple>

#include "ir/fused_node.h"

namespace nn::ir {
namespace {

class BatchNormApplyIntoElementwise : public Pass {
 public:
  const char* name() const override { return "batch-norm-apply-into-elementwise"; }
  const char* serves() const override { return "fuse-elementwise"; }

  size_t run(Graph& g) override {
    g_ = &g;
    auto is_apply = [](const Node& n) { return n.op && n.op->id == OpId::batch_norm_apply; };
    if (std::none_of(g.nodes.begin(), g.nodes.end(), is_apply)) return 0;
    const Uses uses = count_uses(g);
    std::vector<std::vector<NodeId>> readers(g.values.size());
    for (NodeId i = 0; i < g.nodes.size(); ++i)
      for (ValueId v : g.nodes[i].inputs) readers[v].push_back(i);
    std::vector<bool> split_it(g.nodes.size());
    size_t changed = 0;
    for (NodeId i = 0; i < g.nodes.size(); ++i)
      if (is_apply(g.nodes[i]) && takes(g.nodes[i], uses, readers)) split_it[i] = true, ++changed;
    if (!changed) return 0;
    scales_.clear();
    views_.clear();
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size() + 7 * changed);
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      if (split_it[i]) split(std::move(g.nodes[i]), nodes);
      else nodes.push_back(std::move(g.nodes[i]));
    }
    g.nodes = std::move(nodes);
    g.link_producers();
    return changed;
  }

 private:
  // Whether batch_norm_apply n's y is read only by ops fusion would merge it with.
  bool takes(const Node& n, const Uses& uses, const std::vector<std::vector<NodeId>>& readers) const {
    const ValueId y = n.outputs[0];
    const backend::TensorType& t = g_->values[y].type;
    const uint8_t mask = t.dtype == backend::DType::f32   ? kFuseF32
                         : t.dtype == backend::DType::f64 ? kFuseF64
                                                          : 0;
    if (!mask || on_cpu(t.device) || !fused_kernels_on(t.device) || uses.kept[y] || readers[y].empty()) return false;
    for (NodeId r : readers[y]) {
      const Node& reader = g_->nodes[r];
      if (!(fusible_dtypes(*g_, reader) & mask) || g_->values[reader.outputs[0]].type.shape != t.shape) return false;
    }
    return true;
  }

  // Appends the nodes standing for batch_norm_apply `n` to `nodes`; the
  // last of them makes n's own y.
  void split(Node n, std::vector<Node>& nodes) {
    const ValueId x = n.inputs[0], gamma = n.inputs[1], beta = n.inputs[2], mean = n.inputs[3], var = n.inputs[4];
    const double eps = n.attrs.get<double>("eps");
    auto emit = [&](OpId op, std::vector<ValueId> in, backend::Attrs attrs, ValueId out = kNone) {
      return append_like(*g_, nodes, n, op, std::move(in), std::move(attrs), out);
    };
    // [C] as [C, 1, ...]: x's dims after the channel axis become ones.
    const int ndim = g_->values[x].type.shape.ndim();
    auto per_channel = [&](ValueId v) {
      if (ndim <= 2) return v;
      auto [it, fresh] = views_.try_emplace(v, kNone);
      if (fresh) {
        std::vector<int64_t> shape(size_t(ndim - 1), 1);
        shape[0] = g_->values[v].type.shape[0];
        it->second = emit(OpId::reshape, {v}, {{"shape", backend::Shape::of(shape)}});
      }
      return it->second;
    };
    auto [it, fresh] = scales_.try_emplace(std::tuple{gamma, var, eps}, kNone);
    if (fresh) it->second = emit(OpId::batch_norm_scale, {gamma, var}, {{"eps", eps}});
    const ValueId scale = it->second;
    const ValueId centred = emit(OpId::sub, {x, per_channel(mean)}, {});
    const ValueId scaled = emit(OpId::mul, {centred, per_channel(scale)}, {});
    emit(OpId::add, {scaled, per_channel(beta)}, {}, n.outputs[0]);
  }

  Graph* g_ = nullptr;
  std::map<std::tuple<ValueId, ValueId, double>, ValueId> scales_;  // (gamma, var, eps) -> scale
  std::map<ValueId, ValueId> views_;                                // per-channel value -> its [C, 1, ...] view
};

}  // namespace

std::unique_ptr<Pass> make_batch_norm_apply_into_elementwise() {
  return std::make_unique<BatchNormApplyIntoElementwise>();
}

}  // namespace nn::ir
