// Pass `blocked-layout`: in a CPU graph whose convolutions run through
// oneDNN and which batch-normalises their outputs (ResNet's pattern), the
// activations between the convolutions, the batch norms and the elementwise
// ops among them are held in oneDNN's own layout, nChw16c
// (backend/ops/blocked_layout.h), rather than reordered from NCHW into it
// and back around every convolution (ResNet-8 made 75 such reorders a step).
//
// Walking the nodes in order, it rewrites
//  - every conv2d, conv2d_backward_input and conv2d_backward_weight (f32,
//    no groups) to take and give blocked activations (attribute `blocked`),
//    where the channels of an input or output allow it;
//  - batch_norm_train, batch_norm_apply and batch_norm_backward, and
//    max_pool2d and max_pool2d_backward, whose input (or gradient) is
//    blocked already;
//  - an elementwise op with a blocked operand whose every other operand
//    can be viewed blocked: a per-channel [.., C, 1, 1] or a channel-free
//    [.., 1, H, W] operand is reshaped (no copy), an NCHW one as large as
//    the result is reordered;
//  - a sum of a blocked value over the axes 2 and 3 and not 1 (a global
//    average pool, a bias's gradient) into the same sum of the blocked
//    value and a reshape.
// A plain op that reads a blocked value gets it from one `from_blocked`
// placed before its first such reader, as does a graph output or a state's
// new value; a blocked op that reads a plain value gets one `to_blocked`.
// Only training graphs that batch-normalise or max-pool blockable
// activations are rewritten. In an inference graph fuse-conv-relu-pool does
// better: it pools the convolution's own blocked output and reorders only
// the pooled quarter.
#include <algorithm>
#include <map>
#include <optional>

#include "backend/onednn.h"
#include "backend/ops/blocked_layout.h"
#include "ir/fused_node.h"

namespace nn::ir {
namespace {

using backend::kChannelBlock;
using backend::OpId;
using backend::Shape;
using backend::TensorType;

class BlockedLayout : public Pass {
 public:
  const char* name() const override { return "blocked-layout"; }

  size_t run(Graph& g) override {
    g_ = &g;
    // worth_it first: asking whether oneDNN is on opens its library.
    if (!worth_it() || !backend::onednn_enabled()) return 0;
    twin_.assign(g.values.size(), kNone);
    plain_made_.assign(g.values.size(), true);
    views_.clear();
    std::vector<Node> old = std::move(g.nodes);
    nodes_.clear();
    nodes_.reserve(old.size() + old.size() / 4);
    size_t changed = 0;
    for (Node& n : old) {
      if (convert(n)) {
        ++changed;
        continue;
      }
      for (ValueId v : n.inputs) need_plain(v, n);
      nodes_.push_back(std::move(n));
    }
    for (ValueId v : g.outputs) need_plain(v, nodes_.back());
    for (const StateUpdate& s : g.updates) need_plain(s.value, nodes_.back());
    g.nodes = std::move(nodes_);
    g.link_producers();
    Rewriter(g).apply();  // drops the plain values no node makes any more
    return changed;
  }

 private:
  // Whether v is an activation that can be held blocked: f32 [N, C, H, W]
  // on the CPU, C a multiple of 16.
  bool eligible(ValueId v) const {
    const TensorType& t = g_->values[v].type;
    return t.dtype == backend::DType::f32 && on_cpu(t.device) && backend::blockable(t.shape);
  }
  bool worth_it() const {
    for (const Node& n : g_->nodes)
      if ((n.is(OpId::batch_norm_train) && eligible(n.inputs[0])) ||
          (n.is(OpId::max_pool2d_backward) && eligible(n.outputs[0])))
        return true;
    return false;
  }

  // The node appended to the rewritten graph (append_like), where `near` stands.
  ValueId emit(OpId id, std::vector<ValueId> in, backend::Attrs attrs, const Node& near, ValueId out = kNone) {
    out = append_like(*g_, nodes_, near, id, std::move(in), std::move(attrs), out);
    grow();
    return out;
  }
  void grow() {
    twin_.resize(g_->values.size(), kNone);
    plain_made_.resize(g_->values.size(), true);
  }

  // v as NCHW, made by a from_blocked before `reader` if v was only blocked.
  void need_plain(ValueId v, const Node& reader) {
    if (plain_made_[v]) return;
    emit(OpId::from_blocked, {twin_[v]}, {}, reader, v);
    plain_made_[v] = true;
  }
  // v blocked: its twin, or a to_blocked of it made now.
  ValueId blocked_of(ValueId v, const Node& reader) {
    if (twin_[v] == kNone) {
      const ValueId b = emit(OpId::to_blocked, {v}, {}, reader);
      twin_[v] = b;
    }
    return twin_[v];
  }

  bool convert(Node& n) {
    if (!n.op) return false;
    switch (n.op->id) {
      case OpId::conv2d:
      case OpId::conv2d_backward_input:
        return convert_fixed(n, {0}, {0}, /*needs_blocked_input=*/false);
      case OpId::conv2d_backward_weight:
        return convert_fixed(n, {0, 1}, {}, false);
      case OpId::batch_norm_train:
      case OpId::batch_norm_apply:
        return convert_fixed(n, {0}, {0}, true);
      case OpId::batch_norm_backward:
        return convert_fixed(n, {0, 1}, {0}, true);
      case OpId::max_pool2d:  // y and its indices blocked
        return convert_fixed(n, {0}, {0, 1}, true);
      case OpId::max_pool2d_backward:  // dy and the indices
        // Only where the forward pool was blocked: plain indices (of a pool
        // whose input was plain) are offsets the blocked kernel misreads.
        if (twin_[n.inputs[1]] == kNone) return false;
        return convert_fixed(n, {0, 1}, {0}, true);
      case OpId::sum:
        return convert_sum(n);
      default:
        return n.op->elementwise && convert_elementwise(n);
    }
  }

  // A convolution or batch norm: the activations at `ins` and `outs` that
  // can be blocked are; with needs_blocked_input, only when one of the
  // inputs is blocked already.
  bool convert_fixed(Node& n, std::initializer_list<size_t> ins, std::initializer_list<size_t> outs,
                     bool needs_blocked_input) {
    const TensorType& first = g_->values[n.inputs[0]].type;
    if (first.dtype != backend::DType::f32 || !on_cpu(first.device)) return false;
    if (n.attrs.has("groups") && n.attrs.get<int64_t>("groups") != 1) return false;
    bool any = false, any_input = false;
    for (size_t i : ins) {
      any = any || eligible(n.inputs[i]);
      any_input = any_input || twin_[n.inputs[i]] != kNone;
    }
    for (size_t o : outs) any = any || eligible(n.outputs[o]);
    if (!any || (needs_blocked_input && !any_input)) return false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const bool activation = std::find(ins.begin(), ins.end(), i) != ins.end();
      if (activation && (twin_[n.inputs[i]] != kNone || eligible(n.inputs[i])))
        n.inputs[i] = blocked_of(n.inputs[i], n);
      else need_plain(n.inputs[i], n);
    }
    n.attrs.set("blocked", true);
    const backend::OutTypes out_types = n.op->type_rule(g_->types_of(n.inputs), n.attrs);
    for (size_t o : outs)
      if (out_types[o].shape != g_->values[n.outputs[o]].type.shape) block_output(n, o, out_types[o]);
    nodes_.push_back(std::move(n));
    return true;
  }

  // n's output o made blocked, of type t: a new value, the plain one's twin.
  void block_output(Node& n, size_t o, const TensorType& t) {
    const ValueId plain = n.outputs[o];
    const ValueId b = g_->add_value(t, Role::intermediate);
    grow();
    twin_[plain] = b;
    plain_made_[plain] = false;
    n.outputs[o] = b;
  }

  // How operand v of an elementwise op with blocked result [N, C, H, W]
  // is viewed blocked: kept (it broadcasts as it is), reshaped to `shape`,
  // or reordered (to_blocked). Empty: it cannot be.
  struct View {
    enum { keep, twin, reshape, reorder } how;
    Shape shape;
  };
  std::optional<View> view_of(ValueId v, const Shape& out) const {
    if (twin_[v] != kNone) return View{View::twin, {}};
    const Shape& s = g_->values[v].type.shape;
    if (s.ndim() > 4) return std::nullopt;
    if (s.numel() == 1 && s.ndim() <= 1) return View{View::keep, {}};
    int64_t d[4] = {1, 1, 1, 1};  // s right-aligned to 4 dims
    for (int i = 0; i < s.ndim(); ++i) d[4 - s.ndim() + i] = s[i];
    if (d[1] == 1) return View{View::reshape, Shape{d[0], 1, d[2], d[3], 1}};
    if (d[2] == 1 && d[3] == 1) return View{View::reshape, Shape{d[0], d[1] / kChannelBlock, 1, 1, kChannelBlock}};
    if (s == out && eligible(v)) return View{View::reorder, {}};
    return std::nullopt;
  }

  bool convert_elementwise(Node& n) {
    if (n.outputs.size() != 1 || !eligible(n.outputs[0])) return false;
    const Shape& out = g_->values[n.outputs[0]].type.shape;
    bool any = false;
    std::vector<View> views;
    for (ValueId v : n.inputs) {
      const std::optional<View> w = view_of(v, out);
      if (!w) return false;
      any = any || w->how == View::twin;
      views.push_back(*w);
    }
    if (!any) return false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const ValueId v = n.inputs[i];
      switch (views[i].how) {
        case View::keep: need_plain(v, n); break;
        case View::twin:
        case View::reorder: n.inputs[i] = blocked_of(v, n); break;
        case View::reshape: {
          need_plain(v, n);
          auto [it, fresh] = views_.try_emplace(v, kNone);
          if (fresh) it->second = emit(OpId::reshape, {v}, {{"shape", views[i].shape}}, n);
          n.inputs[i] = it->second;
          break;
        }
      }
    }
    const TensorType t = n.op->type_rule(g_->types_of(n.inputs), n.attrs)[0];
    if (t.shape != backend::blocked_shape(out))
      throw backend::Error("internal: blocked-layout made " + t.str() + " for " + g_->values[n.outputs[0]].type.str());
    block_output(n, 0, t);
    nodes_.push_back(std::move(n));
    return true;
  }

  // sum(x, axes) of a blocked x over both spatial axes and not the
  // channels (a global average pool; a bias's gradient, axes (0, 2, 3)):
  // the blocked sum over the same axes, [N, C/16, 16] or [C/16, 16], then
  // its reshape to the result's shape, [N, C] or [C] (or with ones kept).
  bool convert_sum(Node& n) {
    const ValueId x = n.inputs[0];
    const auto& axes = n.attrs.get<std::vector<int64_t>>("axes");
    auto has = [&](int64_t a) { return std::find(axes.begin(), axes.end(), a) != axes.end(); };
    if (twin_[x] == kNone || !has(2) || !has(3) || has(1)) return false;
    backend::Attrs attrs = n.attrs;
    attrs.set("keepdims", false);
    const ValueId s = emit(OpId::sum, {twin_[x]}, std::move(attrs), n);
    emit(OpId::reshape, {s}, {{"shape", g_->values[n.outputs[0]].type.shape}}, n, n.outputs[0]);
    return true;
  }

  Graph* g_ = nullptr;
  std::vector<Node> nodes_;        // the rewritten graph, in order
  std::vector<ValueId> twin_;      // per value: its blocked form, or kNone
  std::vector<bool> plain_made_;   // per value: false while only its twin is made
  std::map<ValueId, ValueId> views_;  // value -> its reshape for a blocked elementwise op
};

}  // namespace

std::unique_ptr<Pass> make_blocked_layout() { return std::make_unique<BlockedLayout>(); }

}  // namespace nn::ir
