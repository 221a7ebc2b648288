// where(cond, a, b) (3-way broadcast, a and b promoted; differentiable in a
// and b), and clip as a composite of where, maximum and minimum. Registered through
// register_binary_ops (ops/binary.cpp).

#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/tile.h"
#include "backend/ops/type_rules.h"

namespace nn::backend {
namespace detail {
void register_where_ops(Registry& r);
}

namespace {

OutTypes where_rule(std::span<const TensorType> in, const Attrs&) {
  Promoted p = promote_types(in.subspan(1));
  return {{p.dtype, broadcast_shape("where", in), operands_device(in), p.weak}};
}

void where_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  ew::check_cpu_dtype("where", out[0].dtype());
  visit_dtype(out[0].dtype(), [&]<class T>() {
    ew::map<T, bool, T, T>(out[0], ew::kCheapGrain, [](bool c, T a, T b) { return c ? a : b; }, in[0], in[1], in[2]);
  });
}

// where as a fused step: the condition is 0 or 1 in the compute dtype (a
// NaN condition holds, as its conversion to bool does).
struct WhereStep {
  template <class T> T operator()(T c, T a, T b) const { return c != T(0) ? a : b; }
};

// The gradient goes to a where cond holds and to b elsewhere; cond gets none.
std::vector<Tensor> where_backward(const BackwardArgs& args) {
  const Tensor &c = args.inputs[0], &a = args.inputs[1], &b = args.inputs[2], &g = args.grads[0];
  const Tensor zero = bw::num(0);
  return {Tensor(), bw::wants(a) ? bw::fit(where(c, g, zero), a) : Tensor(),
          bw::wants(b) ? bw::fit(where(c, zero, g), b) : Tensor()};
}

}  // namespace

void detail::register_where_ops(Registry& r) {
  // where(c, a, b) may overwrite a (the gradient a relu's backward passes on).
  r.add({.id = OpId::where, .num_inputs = 3, .type_rule = where_rule, .cpu = where_kernel, .backward = where_backward,
         .elementwise = true, .tile = tile::kernels<WhereStep, 3>(), .inplace_input = 1});
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return call(op(OpId::where), {cond, a, b});
}

// A composite of ops autodiff knows, with PyTorch clamp's values and
// gradients: the value is minimum(maximum(x, lo), hi) (lo > hi gives hi, a
// NaN anywhere gives NaN); x gets the gradient where lo <= x <= hi (at a
// bound too: maximum alone would split it), lo where x < lo <= hi, hi where
// x > hi or lo > hi, and none of them where a NaN is involved (maximum's
// rule gave a NaN x's gradient to x and to the bounds).
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  const Tensor value = minimum(maximum(x, lo), hi);
  // NaN there, with no gradient (an integer clip has no NaN, nor a gradient).
  const Tensor nan = is_floating(value.dtype()) ? mul(value, scalar(0.0, DType::f64, /*weak=*/true)) : value;
  // lo > hi sends every x to hi but a NaN one (x == x is false there).
  const Tensor to_hi = logical_or(gt(x, hi), logical_and(gt(lo, hi), eq(x, x)));
  const Tensor to_lo = logical_and(lt(x, lo), le(lo, hi));
  return where(logical_and(ge(x, lo), le(x, hi)), x, where(to_lo, lo, where(to_hi, hi, nan)));
}

}  // namespace nn::backend
