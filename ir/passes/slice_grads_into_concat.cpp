// Pass `slice-grads-into-concat`: a sum of slice_backward results whose
// regions tile their tensor along one axis becomes one concat of the
// regions' gradients. Autodiff gives each slice of a tensor (an RNN's time
// steps x[:, t], its gates chunked from one product) a zero tensor of the
// whole shape holding its gradient, and adds them up: for T slices, T full
// tensors zeroed, written and read. The concat writes the whole once.
// Only a sum that no one else reads on the way (an add tree whose inner
// values have one reader) of slice_backwards read by nothing else, with
// steps of 1 and pieces that cover the axis without gap or overlap.
#include <algorithm>

#include "ir/pass.h"

namespace nn::ir {
namespace {

using backend::OpId;

bool same(const backend::TensorType& a, const backend::TensorType& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.device == b.device;
}

// A slice_backward's region, and the one axis it does not span whole (-1:
// none or more than one, or a step other than 1).
struct Piece {
  NodeId node;
  std::vector<int64_t> start, size, drop;
  int axis = -1;
};

Piece piece_of(const Graph& g, NodeId n) {
  const backend::Attrs& a = g.nodes[n].attrs;
  Piece p{n, a.get<std::vector<int64_t>>("start"), a.get<std::vector<int64_t>>("size"),
          a.get<std::vector<int64_t>>("drop")};
  const backend::Shape& shape = a.get<backend::Shape>("shape");
  const auto& step = a.get<std::vector<int64_t>>("step");
  for (size_t d = 0; d < p.size.size(); ++d) {
    if (step[d] != 1) return p.axis = -1, p;
    if (p.start[d] == 0 && p.size[d] == shape[int(d)]) continue;
    if (p.axis != -1) return p.axis = -1, p;
    p.axis = int(d);
  }
  return p;
}

class SliceGradsIntoConcat : public Pass {
 public:
  const char* name() const override { return "slice-grads-into-concat"; }

  size_t run(Graph& g) override {
    const Uses uses = count_uses(g);
    // An add whose output only one add of the same type reads is inside a
    // tree; the trees are rewritten from their roots.
    auto inner = [&](ValueId v, const backend::TensorType& t) {
      const NodeId p = g.producer_if(v, OpId::add);
      return p != kNone && uses.readers[v] == 1 && !uses.kept[v] && same(g.values[v].type, t) &&
             same(g.values[g.nodes[p].inputs[0]].type, t) && same(g.values[g.nodes[p].inputs[1]].type, t);
    };
    std::vector<bool> in_tree(g.nodes.size(), false);
    for (NodeId n = 0; n < g.nodes.size(); ++n)
      if (g.nodes[n].is(OpId::add))
        for (ValueId v : g.nodes[n].inputs)
          if (inner(v, g.values[g.nodes[n].outputs[0]].type)) in_tree[g.values[v].producer] = true;

    Rewriter rw(g);
    size_t changed = 0;
    for (NodeId root = 0; root < g.nodes.size(); ++root) {
      if (!g.nodes[root].is(OpId::add) || in_tree[root]) continue;
      const backend::TensorType& t = g.values[g.nodes[root].outputs[0]].type;
      const ValueList& in = g.nodes[root].inputs;
      if (!same(g.values[in[0]].type, t) || !same(g.values[in[1]].type, t)) continue;
      std::vector<NodeId> adds;
      std::vector<Piece> pieces;
      bool ok = true;
      std::vector<ValueId> todo(g.nodes[root].inputs.begin(), g.nodes[root].inputs.end());
      while (ok && !todo.empty()) {
        const ValueId v = todo.back();
        todo.pop_back();
        if (inner(v, t)) {
          const NodeId p = g.values[v].producer;
          adds.push_back(p);
          todo.insert(todo.end(), g.nodes[p].inputs.begin(), g.nodes[p].inputs.end());
        } else if (const NodeId p = g.producer_if(v, OpId::slice_backward);
                   p != kNone && uses.readers[v] == 1 && !uses.kept[v]) {
          pieces.push_back(piece_of(g, p));
          ok = pieces.back().axis != -1 && pieces.back().axis == pieces.front().axis;
        } else {
          ok = false;
        }
      }
      if (!ok) continue;
      const int axis = pieces.front().axis;
      std::sort(pieces.begin(), pieces.end(),
                [&](const Piece& a, const Piece& b) { return a.start[axis] < b.start[axis]; });
      int64_t at = 0;
      for (const Piece& p : pieces) {
        if (p.start[axis] != at) ok = false;
        at += p.size[axis];
      }
      if (!ok || at != t.shape[axis]) continue;

      // The pieces' own nodes give their gradients the region's shape (a
      // reshape where the slice dropped axes); the root becomes the concat.
      ValueList parts;
      for (const Piece& p : pieces) {
        Node& n = g.nodes[p.node];
        if (p.drop.empty()) {
          parts.push_back(n.inputs[0]);
          rw.drop(p.node);
          continue;
        }
        const backend::Shape region = backend::Shape::of(p.size);
        n.op = &backend::op(OpId::reshape);
        n.attrs = backend::Attrs{{"shape", region}};
        g.values[n.outputs[0]].type.shape = region;
        parts.push_back(n.outputs[0]);
      }
      for (NodeId a : adds) rw.drop(a);
      Node& r = g.nodes[root];
      r.op = &backend::op(OpId::concat);
      r.inputs = parts;
      r.attrs = backend::Attrs{{"axis", int64_t(axis)}};
      ++changed;
    }
    if (changed) rw.apply();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_slice_grads_into_concat() { return std::make_unique<SliceGradsIntoConcat>(); }

}  // namespace nn::ir
