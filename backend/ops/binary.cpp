// Elementwise binary ops: registry entries, CPU kernels, tile kernels and
// C++ functions, all made from the table NN_BINARY_OPS
// (ops/elementwise_ops.h) and the functors of ops/elementwise_math.h; the
// backward rules the table names are here. Arithmetic computes in its
// result dtype (SPEC §3 promotion of the operands; true division of
// integers gives f32), comparisons in the operands' promoted dtype with bool
// results, logical ops on operands read as bools; operands of another dtype
// are converted inside the kernel. where and clip live in ops/where.cpp.
#include <array>
#include <atomic>
#include <type_traits>

#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/elementwise_params.h"
#include "backend/ops/register.h"
#include "backend/ops/tile.h"
#include "backend/ops/type_rules.h"

namespace nn::backend {
namespace detail {
void register_where_ops(Registry& r);  // ops/where.cpp
}

namespace {

enum class BinaryKind { arith, arith_no_bool, true_div, compare, logical, floating };

// ---- type rules ----
template <OpId Id, BinaryKind K>
OutTypes binary_rule(std::span<const TensorType> in, const Attrs&) {
  const char* name = op_name(Id);
  if constexpr (K == BinaryKind::compare || K == BinaryKind::logical) {
    // Broadcast shape, bool result (weak only when every operand is).
    return {{DType::boolean, broadcast_shape(name, in), operands_device(in), promote_types(in).weak}};
  } else {
    TensorType t = elementwise_type(name, in);
    if constexpr (K == BinaryKind::true_div || K == BinaryKind::floating) {
      t.dtype = float_result(t.dtype);
    } else if constexpr (K == BinaryKind::arith_no_bool) {
      if (t.dtype == DType::boolean)
        throw_dtype_error(name, "not defined for two bool tensors; use logical_and, logical_or or logical_not", in);
    }
    return {t};
  }
}

// The dtype a comparison runs in: the operands' promotion (SPEC §3), so
// that i64 tensor < 2.5 compares in f32, i32 < 3 stays in i32, and a 0-d
// f64 tensor next to an f32 [2] is weak (compared in f32, as arithmetic).
DType compute_dtype(const Tensor& a, const Tensor& b) {
  const std::array<TensorType, 2> t{TensorType{a.dtype(), a.shape(), nullptr, a.weak()},
                                    TensorType{b.dtype(), b.shape(), nullptr, b.weak()}};
  return promote_types(t).dtype;
}

// Integer errors found inside the loops (which may run in an OpenMP region)
// are flagged, and thrown once the loops are done.
void throw_flagged(OpId id) {
  if (id == OpId::mod) throw Error("integer modulo by zero");
  if (id == OpId::floordiv) throw Error("integer floor division by zero");
  throw Error("pow: integers to negative integer powers are not allowed");
}

// ---- kernels ----
template <OpId Id, class F, BinaryKind K>
void binary_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const char* name = op_name(Id);
  int failed = 0;
  const F f = functor_of<F>(Id, attrs, &failed);
  if constexpr (K == BinaryKind::compare) {
    const DType cd = compute_dtype(in[0], in[1]);
    ew::check_cpu_dtype(name, cd);
    visit_dtype(cd, [&]<class T>() { ew::map<bool, T, T>(out[0], ew::kCheapGrain, f, in[0], in[1]); });
  } else if constexpr (K == BinaryKind::logical) {
    ew::map<bool, bool, bool>(out[0], ew::kCheapGrain, f, in[0], in[1]);
  } else if constexpr (K == BinaryKind::floating) {
    if (out[0].dtype() == DType::f64) ew::map<double, double, double>(out[0], ew::kCostlyGrain, f, in[0], in[1]);
    else {
      ew::check_cpu_dtype(name, out[0].dtype());
      ew::map<float, float, float>(out[0], ew::kCostlyGrain, f, in[0], in[1]);
    }
  } else {
    ew::check_cpu_dtype(name, out[0].dtype());
    constexpr bool costly = Id == OpId::pow || Id == OpId::mod || Id == OpId::floordiv;
    constexpr int64_t grain = costly ? ew::kCostlyGrain : ew::kCheapGrain;
    visit_dtype(out[0].dtype(), [&]<class T>() {
      if constexpr (std::is_same_v<T, bool> && K != BinaryKind::arith) {
        throw Error(std::string(name) + ": not defined for bool tensors");  // the type rule stops this first
      } else if constexpr (K == BinaryKind::true_div && !std::is_floating_point_v<T>) {
        throw Error("internal: div computes in a float dtype");
      } else {
        ew::map<T, T, T>(out[0], grain, f, in[0], in[1]);
      }
    });
    if (__atomic_load_n(&failed, __ATOMIC_RELAXED)) throw_flagged(Id);
  }
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
  const Tensor &x_in = a.inputs[0], &e_in = a.inputs[1], &out = a.outputs[0], &g = a.grads[0];
  // A host number alone computes in the default float dtype (log(10.0) and
  // 0.1 - 1 in f32): in the result's dtype here, or an f64 gradient of
  // 10.0 ** z had f32's digits.
  auto in_result_dtype = [&](const Tensor& t) {
    static const OpDef& cast = op(OpId::cast);
    return t.weak() ? call(cast, {t}, Attrs{{"dtype", out.dtype()}}) : t;
  };
  const Tensor x = in_result_dtype(x_in), e = in_result_dtype(e_in);
  Tensor gx, gexp;
  if (wants(x_in)) gx = fit(where(eq(e, num(0)), num(0), mul(mul(g, e), pow(x, sub(e, num(1))))), x_in);
  if (wants(e_in))
    gexp = fit(where(logical_and(eq(x, num(0)), ge(e, num(0))), num(0), mul(mul(g, out), log(x))), e_in);
  return {gx, gexp};
}

// Python's a % b = a - floor(a / b) * b: d/da = 1, d/db = -floor(a / b).
std::vector<Tensor> mod_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &y = a.inputs[1], &g = a.grads[0];
  return {fit(g, x), wants(y) ? fit(neg(mul(g, floor(div(x, y)))), y) : Tensor()};
}

// floor(a / b) is piecewise constant: a defined zero for each float operand,
// as PyTorch's floor_divide (not "no gradient", so that a chain through it
// still differentiates).
std::vector<Tensor> floordiv_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &y = a.inputs[1];
  return {wants(x) ? bw::zeros_like(x) : Tensor(), wants(y) ? bw::zeros_like(y) : Tensor()};
}

// relu_backward(g, y) passes g where y is not <= 0: linear in g, through the same
// mask; piecewise constant in y (a defined zero, as floordiv's). So relu's
// second derivatives still flow.
std::vector<Tensor> relu_backward_backward(const BackwardArgs& a) {
  const Tensor &g = a.inputs[0], &y = a.inputs[1], &G = a.grads[0];
  return {wants(g) ? fit(relu_backward(G, y), g) : Tensor(), wants(y) ? bw::zeros_like(y) : Tensor()};
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

// inplace_input = 0: the output may overwrite `a` when a pass finds their
// types (dtype and shape) equal; the kernels read a[i] before writing out[i].
// A comparison's bool output never has an operand's type to reuse.
template <OpId Id, class F, BinaryKind K>
OpDef binary_def(bool commutative, BackwardRule backward, std::vector<AttrSpec> attrs) {
  constexpr bool bool_out = K == BinaryKind::compare || K == BinaryKind::logical;
  return {.id = Id, .num_inputs = 2, .type_rule = binary_rule<Id, K>, .cpu = binary_kernel<Id, F, K>,
          .backward = backward, .elementwise = true, .tile = tile_kernels<Id, F, 2>(),
          .inplace_input = bool_out ? -1 : 0, .commutative = commutative, .attrs = std::move(attrs)};
}

}  // namespace

void register_binary_ops(Registry& r) {
#define NN_BINARY_ENTRY(id, F, kind, commutative, builtin, backward, ...)              \
  r.add(binary_def<OpId::id, math::F, BinaryKind::kind>(commutative, backward,          \
                                                         {__VA_OPT__(NN_ATTR_SPEC(__VA_ARGS__))}));
  NN_BINARY_OPS(NN_BINARY_ENTRY)
#undef NN_BINARY_ENTRY
  detail::register_where_ops(r);
}

#define NN_BINARY_FUNCTION(id, F, kind, commutative, builtin, backward, ...)                          \
  Tensor id(const Tensor& a, const Tensor& b __VA_OPT__(, NN_ATTR_ARG(__VA_ARGS__))) {                 \
    return call(op(OpId::id), {a, b} __VA_OPT__(, call_attrs(op(OpId::id), NN_ATTR_NAME(__VA_ARGS__)))); \
  }
NN_BINARY_OPS(NN_BINARY_FUNCTION)
#undef NN_BINARY_FUNCTION

}  // namespace nn::backend
