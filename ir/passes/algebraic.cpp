// Pass `algebraic`: identities that leave a value exactly as it was.
//   x + -0, -0 + x, x - 0  ->  x   (exact for every value; x + 0 is not:
//                                    -0 + 0 gives +0, and 1 / that is +inf)
//   x * 1, 1 * x, x / 1  ->  x     (exact for every value, NaN and Inf too)
//   x ** 1               ->  x     (likewise; a power rule's backward leaves it)
//   where(c, a, b)       ->  a or b when c is a one-element constant (a
//                                    folded comparison in a backward rule)
// only where the result has x's own dtype and shape (no promotion, no
// broadcast) and the 0, 1 or condition is a one-element constant. Rules that change
// NaN or Inf (x * 0 -> 0, 0 / x -> 0, x - x -> 0) are not applied, and a
// graph's output stays a new tensor when x is an input, param, state or
// constant, or a view of one (may_stand_for, memory_role).
#include <cmath>

#include "backend/dtype.h"
#include "ir/pass.h"

namespace nn::ir {
namespace {

// The number a one-element constant that cannot change holds, or false.
bool constant_number(const Graph& g, ValueId v, double& out) {
  const Value& val = g.values[v];
  if (val.role != Role::constant || !val.immutable || !val.captured.defined() || val.captured.numel() != 1)
    return false;
  out = val.captured.item_double();
  return true;
}

class Algebraic : public Pass {
 public:
  const char* name() const override { return "algebraic"; }
  size_t run(Graph& g) override {
    Rewriter rw(g);
    size_t changed = 0;
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (!n.op || n.outputs.size() != 1) continue;
      const OpId op = n.op->id;
      const backend::TensorType& out = g.values[n.outputs[0]].type;
      auto keeps_type = [&](ValueId x) {
        const backend::TensorType& t = g.values[x].type;
        return t.dtype == out.dtype && t.shape == out.shape && t.weak == out.weak;
      };
      double c;
      ValueId same = kNone;
      if (op == OpId::where && n.inputs.size() == 3) {
        if (constant_number(g, rw.resolve(n.inputs[0]), c)) {
          const ValueId pick = rw.resolve(n.inputs[c != 0 || c != c ? 1 : 2]);  // NaN counts as true
          if (keeps_type(pick)) same = pick;
        }
      } else if (n.inputs.size() == 2) {
        const bool add = op == OpId::add, sub = op == OpId::sub, mul = op == OpId::mul, div = op == OpId::div,
                   pow = op == OpId::pow;
        if (!add && !sub && !mul && !div && !pow) continue;
        const double unit = add || sub ? 0.0 : 1.0;
        // -0 + 0 is +0: for floats the units of add and sub are -0 and +0.
        const bool is_float = backend::is_floating(out.dtype);
        auto is_unit = [&](double v) {
          return v == unit && (!is_float || !(add || sub) || std::signbit(v) == add);
        };
        const ValueId a = rw.resolve(n.inputs[0]), b = rw.resolve(n.inputs[1]);
        if (constant_number(g, b, c) && is_unit(c) && keeps_type(a)) same = a;  // x op unit
        else if ((add || mul) && constant_number(g, a, c) && is_unit(c) && keeps_type(b)) same = b;  // unit op x
      }
      if (same == kNone || !may_stand_for(g, n.outputs[0], memory_role(g, same))) continue;
      rw.replace(n.outputs[0], same);
      rw.drop(i);
      ++changed;
    }
    if (changed) rw.apply();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_algebraic() { return std::make_unique<Algebraic>(); }

}  // namespace nn::ir
