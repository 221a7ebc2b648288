// Elementwise unary ops: registry entries, CPU kernels, tile kernels,
// backward rules and C++ functions, all made from the table NN_UNARY_OPS
// (ops/elementwise_ops.h) and the functors of ops/elementwise_math.h. The
// kinds of the table (SPEC §3):
//  - floating (exp, tanh, gelu, ...): f32/f64 stay, integer and bool inputs
//    give f32 and are converted inside the kernel;
//  - keeping (abs, relu, floor, ...) and negation (neg): integer dtypes stay
//    integer; floor/ceil/round of integers are the identity;
//  - predicate (logical_not, isnan): bool results.
#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/elementwise_params.h"
#include "backend/ops/register.h"
#include "backend/ops/tile.h"
#include "backend/ops/type_rules.h"

namespace nn::backend {
namespace {

enum class UnaryKind { floating, keeping, negation, predicate };

// ---- type rules ----
// A host number given to a function computes in its category's default
// dtype: exp(0.5) is f32, like exp(tensor(0.5)).
TensorType strong_input(TensorType t) {
  if (t.weak) t.dtype = default_dtype(category(t.dtype));
  t.weak = false;
  return t;
}

template <UnaryKind K>
OutTypes unary_rule(std::span<const TensorType> in, const Attrs&) {
  if constexpr (K == UnaryKind::predicate) {
    TensorType t = in[0];
    t.dtype = DType::boolean;
    return {t};
  }
  if constexpr (K == UnaryKind::negation)
    if (in[0].dtype == DType::boolean)
      throw_dtype_error("neg", "negation of a bool tensor is not defined; use logical_not", in);
  TensorType t = strong_input(in[0]);
  if constexpr (K == UnaryKind::floating) t.dtype = float_result(t.dtype);
  return {t};
}

// ---- kernels ----
template <OpId Id, class F, UnaryKind K>
void unary_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const F f = functor_of<F>(Id, attrs);
  const char* name = op_name(Id);
  if constexpr (K == UnaryKind::floating) {
    // Computes in the output's float dtype; the engine converts other inputs.
    if (out[0].dtype() == DType::f64) ew::map<double, double>(out[0], ew::kCostlyGrain, f, in[0]);
    else {
      ew::check_cpu_dtype(name, out[0].dtype());
      ew::map<float, float>(out[0], ew::kCostlyGrain, f, in[0]);
    }
  } else if constexpr (K == UnaryKind::predicate) {
    ew::check_cpu_dtype(name, in[0].dtype());
    visit_dtype(in[0].dtype(), [&]<class T>() { ew::map<bool, T>(out[0], ew::kCheapGrain, f, in[0]); });
  } else {
    // In the output's dtype: a host number (weak f64) computes in f32, which
    // the engine converts it to.
    ew::check_cpu_dtype(name, out[0].dtype());
    visit_dtype(out[0].dtype(), [&]<class T>() { ew::map<T, T>(out[0], ew::kCheapGrain, f, in[0]); });
  }
}

// ---- backward rules ----
// Each table line's gradient expression becomes gradient() of a rule struct:
// x the input, y the output, g the output's gradient, p the attributes. A
// line whose gradient is `none` has no rule (the op is not differentiable).
struct NoGradient {};
[[maybe_unused]] constexpr NoGradient none{};
using bw::num;
using bw::zeros_like;

#define NN_UNARY_RULE(id, F, kind, gradient, ...)                                                        \
  struct id##_rule {                                                                                      \
    static auto of([[maybe_unused]] const Tensor& x, [[maybe_unused]] const Tensor& y,                   \
                   [[maybe_unused]] const Tensor& g, [[maybe_unused]] const math::EwParams& p) {        \
      return gradient;                                                                                    \
    }                                                                                                     \
  };
NN_UNARY_OPS(NN_UNARY_RULE)
#undef NN_UNARY_RULE

// The rule as the registry calls it: integer and bool inputs (whose float
// results have no gradient to give back) get none; float inputs share their
// dtype with the result.
template <OpId Id, class Rule>
std::vector<Tensor> unary_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  return {Rule::of(x, a.outputs[0], a.grads[0], params_of(op(Id), a.attrs))};
}

template <OpId Id, class Rule>
constexpr BackwardRule backward_of() {
  using Result = decltype(Rule::of(Tensor(), Tensor(), Tensor(), math::EwParams()));
  if constexpr (std::is_same_v<Result, NoGradient>) return nullptr;
  else return unary_backward<Id, Rule>;
}

// The output may overwrite the input when their types agree (a pass checks
// dtype and shape: exp of an i32 tensor gives f32 and cannot reuse it).
template <OpId Id, class F, UnaryKind K, class Rule>
OpDef unary_def(std::vector<AttrSpec> attrs) {
  return {.id = Id, .num_inputs = 1, .type_rule = unary_rule<K>, .cpu = unary_kernel<Id, F, K>,
          .backward = backward_of<Id, Rule>(), .elementwise = true, .tile = tile_kernels<Id, F, 1>(),
          .inplace_input = 0, .attrs = std::move(attrs)};
}

}  // namespace

void register_unary_ops(Registry& r) {
#define NN_UNARY_ENTRY(id, F, kind, gradient, ...) \
  r.add(unary_def<OpId::id, math::F, UnaryKind::kind, id##_rule>({__VA_OPT__(NN_ATTR_SPEC(__VA_ARGS__))}));
  NN_UNARY_OPS(NN_UNARY_ENTRY)
#undef NN_UNARY_ENTRY
}

#define NN_UNARY_FUNCTION(id, F, kind, gradient, ...)                                      \
  Tensor id(const Tensor& x __VA_OPT__(, NN_ATTR_ARG(__VA_ARGS__))) {                       \
    return call(op(OpId::id), {x} __VA_OPT__(, call_attrs(op(OpId::id), NN_ATTR_NAME(__VA_ARGS__)))); \
  }
NN_UNARY_OPS(NN_UNARY_FUNCTION)
#undef NN_UNARY_FUNCTION

}  // namespace nn::backend
