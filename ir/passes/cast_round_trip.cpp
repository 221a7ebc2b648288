// Pass `cast-round-trip`: cast(cast(x, B), C) where B holds every value of
// x's dtype A exactly is cast(x, C), and x itself when C is A. Autocast
// makes such pairs where one op widens a 16-bit result that the next op
// narrows again (`x @ w` promotes a bf16 x to f32, then matmul's autocast
// rule narrows it back).
#include "backend/dtype.h"
#include "ir/pass.h"

namespace nn::ir {
namespace {

using backend::DType;

// Whether every value of `from` survives a cast to `to` unchanged.
bool holds_exactly(DType from, DType to) {
  if (from == to || from == DType::boolean) return true;
  switch (from) {
    case DType::f16: case DType::bf16: return to == DType::f32 || to == DType::f64;
    case DType::f32: return to == DType::f64;
    case DType::i32: return to == DType::i64 || to == DType::f64;
    default: return false;
  }
}

class CastRoundTrip : public Pass {
 public:
  const char* name() const override { return "cast-round-trip"; }
  size_t run(Graph& g) override {
    Rewriter rw(g);
    size_t changed = 0;
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      if (!n.op || n.op->id != OpId::cast) continue;
      const ValueId mid = rw.resolve(n.inputs[0]);
      const NodeId p = g.values[mid].producer;
      if (p == kNone || !g.nodes[p].op || g.nodes[p].op->id != OpId::cast) continue;
      const ValueId x = rw.resolve(g.nodes[p].inputs[0]);
      const backend::TensorType &from = g.values[x].type, &to = g.values[n.outputs[0]].type;
      if (!holds_exactly(from.dtype, g.values[mid].type.dtype)) continue;
      if (from.dtype == to.dtype && from.weak == to.weak) {
        if (!may_stand_for(g, n.outputs[0], memory_role(g, x))) continue;  // a result stays a new tensor
        rw.replace(n.outputs[0], x);
        rw.drop(i);
      } else {
        n.inputs[0] = x;  // the first cast may now die (dead-code)
      }
      ++changed;
    }
    if (changed) rw.apply();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_cast_round_trip() { return std::make_unique<CastRoundTrip>(); }

}  // namespace nn::ir
