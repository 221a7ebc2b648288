// Elementwise arithmetic: add sub mul div pow mod maximum minimum. Registry
// entries, CPU kernels and the ops.h functions. Each computes in its result
// dtype (SPEC §3 promotion of the operands; true division of integers gives
// f32); operands of another dtype are converted inside the kernel. The
// comparisons, logical ops, where and clip live in ops/compare.cpp and are
// registered from here. Each op's backward rule sits beside it: the gradient
// of a broadcast operand is summed back to its shape (bw::fit).
#include <atomic>
#include <cmath>
#include <type_traits>

#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/elementwise_math.h"
#include "backend/ops/register.h"
#include "backend/ops/tile.h"
#include "backend/ops/type_rules.h"

namespace nn::backend {
namespace detail {
void register_compare_ops(Registry& r);  // ops/compare.cpp
}

namespace {

// The maths is elementwise_math.h's; each op adds its name and whether it
// is defined on bools.
using Flag = std::atomic<bool>;
struct Add : math::Add {
  static constexpr const char* name = "add";
  static constexpr bool bool_ok = true;  // bool + bool is logical or (NumPy, PyTorch)
};
struct Sub : math::Sub {
  static constexpr const char* name = "sub";
  static constexpr bool bool_ok = false;
};
struct Mul : math::Mul {
  static constexpr const char* name = "mul";
  static constexpr bool bool_ok = true;  // bool * bool is logical and
};
struct Div : math::Div {
  static constexpr const char* name = "div";
  static constexpr bool bool_ok = true;
};
struct Pow : math::Pow<Flag> {
  static constexpr const char* name = "pow";
  static constexpr bool bool_ok = false;
};
struct Mod : math::Mod<Flag> {
  static constexpr const char* name = "mod";
  static constexpr bool bool_ok = false;
};
struct Maximum : math::Maximum {
  static constexpr const char* name = "maximum";
  static constexpr bool bool_ok = true;
};
struct Minimum : math::Minimum {
  static constexpr const char* name = "minimum";
  static constexpr bool bool_ok = true;
};

template <class Op>
OutTypes arith_rule(std::span<const TensorType> in, const Attrs&) {
  TensorType t = elementwise_type(Op::name, in);
  if constexpr (std::is_same_v<Op, Div>) {
    if (!is_floating(t.dtype)) t.dtype = DType::f32;  // true division
  } else if constexpr (!Op::bool_ok) {
    if (t.dtype == DType::boolean)
      throw_dtype_error(Op::name, "not defined for two bool tensors; use logical_and, logical_or or logical_not", in);
  }
  return {t};
}

// The functor for a run, with an error flag where the op has one.
template <class Op>
Op make_op(std::atomic<bool>*) { return Op{}; }
template <>
Pow make_op<Pow>(std::atomic<bool>* flag) { return Pow{{flag}}; }
template <>
Mod make_op<Mod>(std::atomic<bool>* flag) { return Mod{{flag}}; }

// Computes in the output dtype. Errors found inside the loops (which may run
// in an OpenMP region) are flagged and thrown once the loops are done.
template <class Op>
void arith_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  ew::check_cpu_dtype(Op::name, out[0].dtype());
  std::atomic<bool> failed{false};
  const Op f = make_op<Op>(&failed);
  constexpr bool costly = std::is_same_v<Op, Pow> || std::is_same_v<Op, Mod>;
  constexpr int64_t grain = costly ? ew::kCostlyGrain : ew::kCheapGrain;
  visit_dtype(out[0].dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool> && !Op::bool_ok) {
      throw Error(std::string(Op::name) + ": not defined for bool tensors");  // the type rule stops this first
    } else if constexpr (std::is_same_v<Op, Div> && !std::is_floating_point_v<T>) {
      throw Error("internal: div computes in a float dtype");
    } else {
      ew::map<T, T, T>(out[0], grain, f, in[0], in[1]);
    }
  });
  if (failed.load()) {
    if constexpr (std::is_same_v<Op, Mod>) throw Error("integer modulo by zero");
    if constexpr (std::is_same_v<Op, Pow>) throw Error("pow: integers to negative integer powers are not allowed");
  }
}

// Fused steps only ever compute in f32 or f64, where no functor raises its
// error flag.
template <class Op>
Op tile_op(const Attrs&) {
  return make_op<Op>(nullptr);
}

template <class Op>
OpDef arith_def(bool commutative, BackwardRule backward) {
  return {.name = Op::name, .num_inputs = 2, .type_rule = arith_rule<Op>, .cpu = arith_kernel<Op>,
          .backward = backward, .elementwise = true, .tile = tile::kernels<Op, 2, tile_op<Op>>(), .inplace_input = 0,
          .commutative = commutative};
}

// ---- backward rules -------------------------------------------------------------
// Inputs a, b; output y; its gradient g. Each operand's gradient is computed
// only when it gets one (a float tensor, not a host number), then summed
// over the dims it was broadcast along and cast to its dtype (bw::fit).
using bw::fit;
using bw::num;
using bw::wants;

std::vector<Tensor> add_backward(const BackwardArgs& a) {
  const Tensor& g = a.grads[0];
  return {fit(g, a.inputs[0]), fit(g, a.inputs[1])};
}

std::vector<Tensor> sub_backward(const BackwardArgs& a) {
  const Tensor& g = a.grads[0];
  return {fit(g, a.inputs[0]), wants(a.inputs[1]) ? fit(neg(g), a.inputs[1]) : Tensor()};
}

std::vector<Tensor> mul_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &y = a.inputs[1], &g = a.grads[0];
  return {wants(x) ? fit(mul(g, y), x) : Tensor(), wants(y) ? fit(mul(g, x), y) : Tensor()};
}

// d(a/b)/db = -a/b^2 = -(a/b)/b: written with the output y.
std::vector<Tensor> div_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &y = a.inputs[1], &out = a.outputs[0], &g = a.grads[0];
  return {wants(x) ? fit(div(g, y), x) : Tensor(), wants(y) ? fit(neg(div(mul(g, out), y)), y) : Tensor()};
}

// As PyTorch: d/da = b a^(b-1), taken as 0 where b == 0 (so 0^0 has
// gradient 0, not 0 * 0^-1 = NaN); d/db = a^b log(a), taken as 0 where
// a == 0 and b >= 0 (the limit of a^b log a as a -> 0+), and NaN for a < 0,
// where a^b is not differentiable in b (log of a negative number).
std::vector<Tensor> pow_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &e = a.inputs[1], &out = a.outputs[0], &g = a.grads[0];
  Tensor gx, gexp;
  if (wants(x)) gx = fit(where(eq(e, num(0)), num(0), mul(mul(g, e), pow(x, sub(e, num(1))))), x);
  if (wants(e))
    gexp = fit(where(logical_and(eq(x, num(0)), ge(e, num(0))), num(0), mul(mul(g, out), log(x))), e);
  return {gx, gexp};
}

// Python's a % b = a - floor(a / b) * b: d/da = 1, d/db = -floor(a / b).
std::vector<Tensor> mod_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &y = a.inputs[1], &g = a.grads[0];
  return {fit(g, x), wants(y) ? fit(neg(mul(g, floor(div(x, y)))), y) : Tensor()};
}

// As PyTorch: where a == b the operands share the gradient half and half;
// otherwise it goes to the operand the result came from. (A NaN operand
// compares false everywhere, so both get the full gradient there, as in
// PyTorch.)
template <bool kMax>
std::vector<Tensor> extreme_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &y = a.inputs[1], &g = a.grads[0];
  Tensor tie, half;
  if (wants(x) || wants(y)) {
    tie = eq(x, y);
    half = mul(g, num(0.5));
  }
  Tensor gx, gy;
  // x loses where it is smaller (max) or larger (min) than y.
  if (wants(x)) gx = fit(where(kMax ? lt(x, y) : gt(x, y), num(0), where(tie, half, g)), x);
  if (wants(y)) gy = fit(where(kMax ? gt(x, y) : lt(x, y), num(0), where(tie, half, g)), y);
  return {gx, gy};
}

Tensor run2(const OpDef& def, const Tensor& a, const Tensor& b) { return call(def, {a, b}); }

}  // namespace

void register_binary_ops(Registry& r) {
  // inplace_input = 0: the output may overwrite `a` when a pass finds their
  // types (dtype and shape) equal; the kernels read a[i] before writing out[i].
  r.add(arith_def<Add>(true, add_backward));
  r.add(arith_def<Sub>(false, sub_backward));
  r.add(arith_def<Mul>(true, mul_backward));
  r.add(arith_def<Div>(false, div_backward));
  r.add(arith_def<Pow>(false, pow_backward));
  r.add(arith_def<Mod>(false, mod_backward));
  r.add(arith_def<Maximum>(true, extreme_backward<true>));
  r.add(arith_def<Minimum>(true, extreme_backward<false>));
  detail::register_compare_ops(r);
}

Tensor add(const Tensor& a, const Tensor& b) { static const OpDef& d = op("add"); return run2(d, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { static const OpDef& d = op("sub"); return run2(d, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { static const OpDef& d = op("mul"); return run2(d, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { static const OpDef& d = op("div"); return run2(d, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { static const OpDef& d = op("pow"); return run2(d, a, b); }
Tensor mod(const Tensor& a, const Tensor& b) { static const OpDef& d = op("mod"); return run2(d, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { static const OpDef& d = op("maximum"); return run2(d, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { static const OpDef& d = op("minimum"); return run2(d, a, b); }

}  // namespace nn::backend
