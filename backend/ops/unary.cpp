// Elementwise unary ops: registry entries, CPU kernels and the ops.h
// functions. Three kinds, by their result dtype (SPEC §3):
//  - float functions (exp, tanh, gelu, ...): f32/f64 stay, integer and bool
//    inputs give f32 and are converted inside the kernel;
//  - dtype-keeping ops (neg, abs, sign, relu, floor, ceil, round): integer
//    dtypes stay integer; floor/ceil/round of integers are the identity;
//  - predicates (logical_not, isnan): bool results.
// Each differentiable op's backward rule sits beside it, written with ops.h
// calls; gelu's uses the gelu_backward op defined here (one fused node).
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
namespace {

// The maths is elementwise_math.h's; each op adds its name.
struct Exp : math::Exp { static constexpr const char* name = "exp"; };
struct Log : math::Log { static constexpr const char* name = "log"; };
struct Sqrt : math::Sqrt { static constexpr const char* name = "sqrt"; };
struct Rsqrt : math::Rsqrt { static constexpr const char* name = "rsqrt"; };
struct Sin : math::Sin { static constexpr const char* name = "sin"; };
struct Cos : math::Cos { static constexpr const char* name = "cos"; };
struct Tanh : math::Tanh { static constexpr const char* name = "tanh"; };
struct Sigmoid : math::Sigmoid { static constexpr const char* name = "sigmoid"; };
struct LeakyRelu : math::LeakyRelu { static constexpr const char* name = "leaky_relu"; };
struct Gelu : math::Gelu { static constexpr const char* name = "gelu"; };
struct GeluGrad : math::GeluGrad { static constexpr const char* name = "gelu_backward"; };
struct Softplus : math::Softplus { static constexpr const char* name = "softplus"; };
struct Neg : math::Neg { static constexpr const char* name = "neg"; };
struct Abs : math::Abs { static constexpr const char* name = "abs"; };
struct Sign : math::Sign { static constexpr const char* name = "sign"; };
struct Relu : math::Relu { static constexpr const char* name = "relu"; };
struct Floor : math::Floor { static constexpr const char* name = "floor"; };
struct Ceil : math::Ceil { static constexpr const char* name = "ceil"; };
struct Round : math::Round { static constexpr const char* name = "round"; };
struct LogicalNot : math::LogicalNot { static constexpr const char* name = "logical_not"; };
struct IsNan : math::IsNan { static constexpr const char* name = "isnan"; };

// Functors that read attributes are built from them; the rest ignore them.
template <class Op>
Op make_op(const Attrs&) { return Op{}; }
template <>
LeakyRelu make_op<LeakyRelu>(const Attrs& a) { return {{a.get_or<double>("slope", 0.01)}}; }
template <>
Gelu make_op<Gelu>(const Attrs& a) { return {{a.get_or<bool>("approximate", false)}}; }
template <>
GeluGrad make_op<GeluGrad>(const Attrs& a) { return {{a.get_or<bool>("approximate", false)}}; }

// Tile kernels (graph fusion) from the same functors.
template <class Op, size_t N = 1>
TileKernels tiles() {
  return tile::kernels<Op, N, make_op<Op>>();
}

// ---- type rules ----
// A host number given to a function computes in its category's default
// dtype: exp(0.5) is f32, like exp(tensor(0.5)).
TensorType strong_input(TensorType t) {
  if (t.weak) t.dtype = default_dtype(category(t.dtype));
  t.weak = false;
  return t;
}
OutTypes float_rule(std::span<const TensorType> in, const Attrs&) {
  TensorType t = strong_input(in[0]);
  t.dtype = float_result(t.dtype);
  return {t};
}
OutTypes keep_rule(std::span<const TensorType> in, const Attrs&) { return {strong_input(in[0])}; }
OutTypes neg_rule(std::span<const TensorType> in, const Attrs&) {
  if (in[0].dtype == DType::boolean)
    throw_dtype_error("neg", "negation of a bool tensor is not defined; use logical_not", in);
  return {strong_input(in[0])};
}
OutTypes bool_rule(std::span<const TensorType> in, const Attrs&) {
  TensorType t = in[0];
  t.dtype = DType::boolean;
  return {t};
}

// ---- kernels ----
// Computes in the output's float dtype; the engine converts other inputs.
template <class Op>
void float_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  Op f = make_op<Op>(attrs);
  if (out[0].dtype() == DType::f64) ew::map<double, double>(out[0], ew::kCostlyGrain, f, in[0]);
  else {
    ew::check_cpu_dtype(Op::name, out[0].dtype());
    ew::map<float, float>(out[0], ew::kCostlyGrain, f, in[0]);
  }
}

template <class Op>
void keep_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  // In the output's dtype: a host number (weak f64) computes in f32, which
  // the engine converts it to.
  ew::check_cpu_dtype(Op::name, out[0].dtype());
  Op f = make_op<Op>(attrs);
  visit_dtype(out[0].dtype(), [&]<class T>() { ew::map<T, T>(out[0], ew::kCheapGrain, f, in[0]); });
}

template <class Op>
void predicate_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  ew::check_cpu_dtype(Op::name, in[0].dtype());
  Op f = make_op<Op>(attrs);
  visit_dtype(in[0].dtype(), [&]<class T>() { ew::map<bool, T>(out[0], ew::kCheapGrain, f, in[0]); });
}

// gelu_backward: (g, x) of one float dtype, the result like them.
OutTypes gelu_backward_rule(std::span<const TensorType> in, const Attrs&) {
  TensorType t = elementwise_type("gelu_backward", in);
  t.dtype = float_result(t.dtype);
  return {t};
}

void gelu_backward_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  GeluGrad f = make_op<GeluGrad>(attrs);
  if (out[0].dtype() == DType::f64) ew::map<double, double, double>(out[0], ew::kCostlyGrain, f, in[0], in[1]);
  else {
    ew::check_cpu_dtype(GeluGrad::name, out[0].dtype());
    ew::map<float, float, float>(out[0], ew::kCostlyGrain, f, in[0], in[1]);
  }
}

// Looks the op up once per call site; the registry outlives every caller.
Tensor run1(const OpDef& def, const Tensor& x) { return call(def, {x}); }

// ---- backward rules -------------------------------------------------------------
// Each gets the op's input x, output y and the output's gradient g, and
// returns the gradient of x: undefined for integer and bool inputs (whose
// float results have no gradient to give back), else of x's dtype, which the
// float results of float inputs share.
using bw::num;
using bw::wants;

template <Tensor (*F)(const Tensor& x, const Tensor& y, const Tensor& g, const Attrs& attrs)>
std::vector<Tensor> unary_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!wants(x)) return {Tensor()};
  return {F(x, a.outputs[0], a.grads[0], a.attrs)};
}

Tensor neg_bw(const Tensor&, const Tensor&, const Tensor& g, const Attrs&) { return neg(g); }
// sign(0) = 0: the gradient at 0 is 0, as in PyTorch.
Tensor abs_bw(const Tensor& x, const Tensor&, const Tensor& g, const Attrs&) { return mul(g, sign(x)); }
Tensor exp_bw(const Tensor&, const Tensor& y, const Tensor& g, const Attrs&) { return mul(g, y); }
Tensor log_bw(const Tensor& x, const Tensor&, const Tensor& g, const Attrs&) { return div(g, x); }
Tensor sqrt_bw(const Tensor&, const Tensor& y, const Tensor& g, const Attrs&) { return div(g, mul(y, num(2))); }
// y = x^(-1/2): dy/dx = -1/2 x^(-3/2) = -1/2 y^3.
Tensor rsqrt_bw(const Tensor&, const Tensor& y, const Tensor& g, const Attrs&) {
  return mul(g, mul(mul(y, mul(y, y)), num(-0.5)));
}
Tensor sin_bw(const Tensor& x, const Tensor&, const Tensor& g, const Attrs&) { return mul(g, cos(x)); }
Tensor cos_bw(const Tensor& x, const Tensor&, const Tensor& g, const Attrs&) { return neg(mul(g, sin(x))); }
Tensor tanh_bw(const Tensor&, const Tensor& y, const Tensor& g, const Attrs&) {
  return mul(g, sub(num(1), mul(y, y)));
}
Tensor sigmoid_bw(const Tensor&, const Tensor& y, const Tensor& g, const Attrs&) {
  return mul(g, mul(y, sub(num(1), y)));
}
// The gradient at 0 is 0 (PyTorch's choice): only a positive result passes it.
Tensor relu_bw(const Tensor&, const Tensor& y, const Tensor& g, const Attrs&) {
  return where(gt(y, num(0)), g, num(0));
}
// At 0 the gradient is `slope`, as PyTorch's (x > 0 ? g : g * slope).
Tensor leaky_relu_bw(const Tensor& x, const Tensor&, const Tensor& g, const Attrs& a) {
  return where(gt(x, num(0)), g, mul(g, num(a.get_or<double>("slope", 0.01))));
}
Tensor gelu_bw(const Tensor& x, const Tensor&, const Tensor& g, const Attrs& a) {
  return gelu_backward(g, x, a.get_or<bool>("approximate", false));
}
// d/dx log(1 + e^x) = sigmoid(x).
Tensor softplus_bw(const Tensor& x, const Tensor&, const Tensor& g, const Attrs&) { return mul(g, sigmoid(x)); }
// Piecewise constant (sign, floor, ceil, round): zero almost everywhere,
// given as zeros (not "no gradient") so that a path through them is a
// defined zero, as in PyTorch.
Tensor zero_bw(const Tensor& x, const Tensor&, const Tensor&, const Attrs&) { return bw::zeros_like(x); }

}  // namespace

void register_unary_ops(Registry& r) {
  // The output may overwrite the input when their types agree (a pass checks
  // dtype and shape: exp of an i32 tensor gives f32 and cannot reuse it).
  auto add = [&](const char* name, TypeRule rule, Kernel k, TileKernels t, BackwardRule backward = nullptr) {
    r.add({.name = name, .num_inputs = 1, .type_rule = rule, .cpu = k, .backward = backward, .elementwise = true,
           .tile = t, .inplace_input = 0});
  };
  add("exp", float_rule, float_kernel<Exp>, tiles<Exp>(), unary_backward<exp_bw>);
  add("log", float_rule, float_kernel<Log>, tiles<Log>(), unary_backward<log_bw>);
  add("sqrt", float_rule, float_kernel<Sqrt>, tiles<Sqrt>(), unary_backward<sqrt_bw>);
  add("rsqrt", float_rule, float_kernel<Rsqrt>, tiles<Rsqrt>(), unary_backward<rsqrt_bw>);
  add("sin", float_rule, float_kernel<Sin>, tiles<Sin>(), unary_backward<sin_bw>);
  add("cos", float_rule, float_kernel<Cos>, tiles<Cos>(), unary_backward<cos_bw>);
  add("tanh", float_rule, float_kernel<Tanh>, tiles<Tanh>(), unary_backward<tanh_bw>);
  add("sigmoid", float_rule, float_kernel<Sigmoid>, tiles<Sigmoid>(), unary_backward<sigmoid_bw>);
  add("leaky_relu", float_rule, float_kernel<LeakyRelu>, tiles<LeakyRelu>(), unary_backward<leaky_relu_bw>);
  add("gelu", float_rule, float_kernel<Gelu>, tiles<Gelu>(), unary_backward<gelu_bw>);
  add("softplus", float_rule, float_kernel<Softplus>, tiles<Softplus>(), unary_backward<softplus_bw>);
  add("neg", neg_rule, keep_kernel<Neg>, tiles<Neg>(), unary_backward<neg_bw>);
  add("abs", keep_rule, keep_kernel<Abs>, tiles<Abs>(), unary_backward<abs_bw>);
  add("sign", keep_rule, keep_kernel<Sign>, tiles<Sign>(), unary_backward<zero_bw>);
  add("relu", keep_rule, keep_kernel<Relu>, tiles<Relu>(), unary_backward<relu_bw>);
  add("floor", keep_rule, keep_kernel<Floor>, tiles<Floor>(), unary_backward<zero_bw>);
  add("ceil", keep_rule, keep_kernel<Ceil>, tiles<Ceil>(), unary_backward<zero_bw>);
  add("round", keep_rule, keep_kernel<Round>, tiles<Round>(), unary_backward<zero_bw>);
  add("logical_not", bool_rule, predicate_kernel<LogicalNot>, tiles<LogicalNot>());
  add("isnan", bool_rule, predicate_kernel<IsNan>, tiles<IsNan>());
  // The gradient of gelu, both forms, as one fused elementwise node (the
  // composite would be a dozen). Not itself differentiated: backward passes
  // run with grad mode off.
  r.add({.name = "gelu_backward", .num_inputs = 2, .type_rule = gelu_backward_rule, .cpu = gelu_backward_kernel,
         .elementwise = true, .tile = tiles<GeluGrad, 2>(), .inplace_input = 0});
}

Tensor neg(const Tensor& x) { static const OpDef& d = op("neg"); return run1(d, x); }
Tensor abs(const Tensor& x) { static const OpDef& d = op("abs"); return run1(d, x); }
Tensor exp(const Tensor& x) { static const OpDef& d = op("exp"); return run1(d, x); }
Tensor log(const Tensor& x) { static const OpDef& d = op("log"); return run1(d, x); }
Tensor sqrt(const Tensor& x) { static const OpDef& d = op("sqrt"); return run1(d, x); }
Tensor rsqrt(const Tensor& x) { static const OpDef& d = op("rsqrt"); return run1(d, x); }
Tensor sin(const Tensor& x) { static const OpDef& d = op("sin"); return run1(d, x); }
Tensor cos(const Tensor& x) { static const OpDef& d = op("cos"); return run1(d, x); }
Tensor tanh(const Tensor& x) { static const OpDef& d = op("tanh"); return run1(d, x); }
Tensor sigmoid(const Tensor& x) { static const OpDef& d = op("sigmoid"); return run1(d, x); }
Tensor relu(const Tensor& x) { static const OpDef& d = op("relu"); return run1(d, x); }
Tensor softplus(const Tensor& x) { static const OpDef& d = op("softplus"); return run1(d, x); }
Tensor sign(const Tensor& x) { static const OpDef& d = op("sign"); return run1(d, x); }
Tensor floor(const Tensor& x) { static const OpDef& d = op("floor"); return run1(d, x); }
Tensor ceil(const Tensor& x) { static const OpDef& d = op("ceil"); return run1(d, x); }
Tensor round(const Tensor& x) { static const OpDef& d = op("round"); return run1(d, x); }
Tensor logical_not(const Tensor& x) { static const OpDef& d = op("logical_not"); return run1(d, x); }
Tensor isnan(const Tensor& x) { static const OpDef& d = op("isnan"); return run1(d, x); }

Tensor leaky_relu(const Tensor& x, double slope) {
  static const OpDef& d = op("leaky_relu");
  return call(d, {x}, Attrs{{"slope", slope}});
}

Tensor gelu_backward(const Tensor& g, const Tensor& x, bool approximate) {
  static const OpDef& d = op("gelu_backward");
  if (!approximate) return call(d, {g, x});
  return call(d, {g, x}, Attrs{{"approximate", true}});
}

Tensor gelu(const Tensor& x, bool approximate) {
  static const OpDef& d = op("gelu");
  if (!approximate) return call(d, {x});
  return call(d, {x}, Attrs{{"approximate", true}});
}

}  // namespace nn::backend
