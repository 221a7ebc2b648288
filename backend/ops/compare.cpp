// Elementwise ops with bool results or bool inputs: the comparisons
// eq ne lt le gt ge (computed in the operands' promoted dtype), logical_and
// and logical_or (any dtype, read as `!= 0`), where(cond, a, b) (3-way
// broadcast, a and b promoted), and clip as a composite of maximum/minimum.
// Registered through register_binary_ops (ops/binary.cpp). Only `where`
// is differentiable (in a and b); comparisons and logical ops give bools.
#include <array>

#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/elementwise_math.h"
#include "backend/ops/tile.h"
#include "backend/ops/type_rules.h"

namespace nn::backend {
namespace detail {
void register_compare_ops(Registry& r);
}

namespace {

// The maths is elementwise_math.h's; each op adds its name.
struct Eq : math::Eq { static constexpr const char* name = "eq"; };
struct Ne : math::Ne { static constexpr const char* name = "ne"; };
struct Lt : math::Lt { static constexpr const char* name = "lt"; };
struct Le : math::Le { static constexpr const char* name = "le"; };
struct Gt : math::Gt { static constexpr const char* name = "gt"; };
struct Ge : math::Ge { static constexpr const char* name = "ge"; };
struct And : math::And { static constexpr const char* name = "logical_and"; };
struct Or : math::Or { static constexpr const char* name = "logical_or"; };

// Broadcast shape, bool result (weak only when every operand is).
template <class Op>
OutTypes bool_rule(std::span<const TensorType> in, const Attrs&) {
  return {{DType::boolean, broadcast_shape(Op::name, in), operands_device(in), promote_types(in).weak}};
}

// The dtype the comparison runs in: the operands' promotion (SPEC §3), so
// that i64 tensor < 2.5 compares in f32 and i32 < 3 stays in i32.
DType compute_dtype(const Tensor& a, const Tensor& b) {
  const std::array<TensorType, 2> t{TensorType{a.dtype(), {}, nullptr, a.weak()},
                                    TensorType{b.dtype(), {}, nullptr, b.weak()}};
  return promote_types(t).dtype;
}

template <class Op>
void compare_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  DType cd = compute_dtype(in[0], in[1]);
  ew::check_cpu_dtype(Op::name, cd);
  visit_dtype(cd, [&]<class T>() { ew::map<bool, T, T>(out[0], ew::kCheapGrain, Op{}, in[0], in[1]); });
}

template <class Op>
void logical_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  ew::map<bool, bool, bool>(out[0], ew::kCheapGrain, Op{}, in[0], in[1]);
}

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

template <class Op>
OpDef compare_def(bool commutative) {
  return {.name = Op::name, .num_inputs = 2, .type_rule = bool_rule<Op>, .cpu = compare_kernel<Op>,
          .elementwise = true, .tile = tile::kernels<Op, 2>(), .commutative = commutative};
}

Tensor run2(const OpDef& def, const Tensor& a, const Tensor& b) { return call(def, {a, b}); }

}  // namespace

void detail::register_compare_ops(Registry& r) {
  r.add(compare_def<Eq>(true));
  r.add(compare_def<Ne>(true));
  r.add(compare_def<Lt>(false));
  r.add(compare_def<Le>(false));
  r.add(compare_def<Gt>(false));
  r.add(compare_def<Ge>(false));
  r.add({.name = And::name, .num_inputs = 2, .type_rule = bool_rule<And>, .cpu = logical_kernel<And>,
         .elementwise = true, .tile = tile::kernels<And, 2>(), .commutative = true});
  r.add({.name = Or::name, .num_inputs = 2, .type_rule = bool_rule<Or>, .cpu = logical_kernel<Or>,
         .elementwise = true, .tile = tile::kernels<Or, 2>(), .commutative = true});
  // where(c, a, b) may overwrite a (the gradient a relu's backward passes on).
  r.add({.name = "where", .num_inputs = 3, .type_rule = where_rule, .cpu = where_kernel, .backward = where_backward,
         .elementwise = true, .tile = tile::kernels<WhereStep, 3>(), .inplace_input = 1});
}

Tensor eq(const Tensor& a, const Tensor& b) { static const OpDef& d = op("eq"); return run2(d, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { static const OpDef& d = op("ne"); return run2(d, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { static const OpDef& d = op("lt"); return run2(d, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { static const OpDef& d = op("le"); return run2(d, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { static const OpDef& d = op("gt"); return run2(d, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { static const OpDef& d = op("ge"); return run2(d, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) {
  static const OpDef& d = op("logical_and");
  return run2(d, a, b);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  static const OpDef& d = op("logical_or");
  return run2(d, a, b);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  static const OpDef& d = op("where");
  return call(d, {cond, a, b});
}

// A composite: maximum then minimum, so lo > hi gives hi (as NumPy), NaN in x
// stays NaN, and tracing records two nodes that autodiff already knows.
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi) { return minimum(maximum(x, lo), hi); }

}  // namespace nn::backend
