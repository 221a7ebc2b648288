// Import entries of the elementwise arithmetic and maths ops (import_table.h):
// ONNX's broadcasting is NumPy's, as nn's. Activations nn has no op for are
// composed from the ops it has.
#include <cmath>

#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

// C's truncating integer quotient from Python's flooring one: ONNX's Div of
// integers rounds toward zero.
Tensor int_div(const Tensor& a, const Tensor& b) {
  const Tensor q = floordiv(a, b), r = mod(a, b);
  const Tensor zero = like(0, r);
  const Tensor inexact = logical_and(ne(r, zero), ne(lt(a, like(0, a)), lt(b, like(0, b))));
  return where(inexact, add(q, like(1, q)), q);
}

// INT8 and INT16 results one past the type's top (-128 / -1, Abs(-128),
// Neg(-128)) wrap to its bottom, as ONNX's kernels give them: nn holds such
// values in i32, where they do not.
Tensor wrap_narrow_signed(const NodeContext& n, const Tensor& r) {
  using P = onnx::TensorProto;
  const int t = n.input_type(0) ? n.input_type(0) : n.input_type(1);
  if ((t != P::INT8 && t != P::INT16) || !is_integral(r.dtype())) return r;
  const Tensor top = like(t == P::INT8 ? 127 : 32767, r);
  return where(gt(r, top), sub(r, like(t == P::INT8 ? 256 : 65536, r)), r);
}

Outs div_entry(const NodeContext& n) {
  const Tensor &a = n.input(0), &b = n.input(1);
  if (is_integral(a.dtype()) && is_integral(b.dtype())) return {wrap_narrow_signed(n, int_div(a, b))};
  return {div(a, b)};
}

template <Tensor (*F)(const Tensor&)>
Outs wrapping_unary(const NodeContext& n) {
  return {wrap_narrow_signed(n, F(n.input(0)))};
}

// fmod = 0: the remainder takes the divisor's sign (nn's mod, Python's %);
// fmod = 1: the dividend's (C's fmod), made from it exactly.
Outs mod_entry(const NodeContext& n) {
  const Tensor &a = n.input(0), &b = n.input(1);
  const int64_t fmod = n.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) n.fail("attribute fmod=" + std::to_string(fmod) + " must be 0 or 1");
  if (fmod == 0 && is_floating(a.dtype())) n.fail("fmod=0 needs integer inputs (ONNX)");
  const Tensor r = mod(a, b);
  if (fmod == 0) return {r};
  const Tensor wrong_sign = logical_and(ne(r, like(0, r)), ne(lt(r, like(0, r)), lt(a, like(0, a))));
  return {where(wrong_sign, sub(r, b), r)};
}

// The result has the base's dtype, whatever the exponent's.
Outs pow_entry(const NodeContext& n) {
  const Tensor &x = n.input(0), &y = n.input(1);
  if (is_integral(x.dtype()) && is_floating(y.dtype())) return {astype(pow(astype(x, y.dtype()), y), x.dtype())};
  return {astype(pow(x, astype(y, promote(x.dtype(), y.dtype()))), x.dtype())};
}

Outs reciprocal(const NodeContext& n) { return {div(like(1, n.input(0)), n.input(0))}; }
Outs tan_entry(const NodeContext& n) { return {div(sin(n.input(0)), cos(n.input(0)))}; }
Outs sinh_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  return {mul(sub(exp(x), exp(neg(x))), like(0.5, x))};
}
Outs cosh_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  return {mul(add(exp(x), exp(neg(x))), like(0.5, x))};
}
// sign(x) log(|x| + sqrt(x^2 + 1)): odd, and no cancellation for negative x.
Outs asinh_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const Tensor a = abs(x);
  return {mul(sign(x), log(add(a, sqrt(add(mul(a, a), like(1, x))))))};
}
Outs acosh_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  return {log(add(x, sqrt(sub(mul(x, x), like(1, x)))))};
}
Outs atanh_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  return {mul(log(div(add(like(1, x), x), sub(like(1, x), x))), like(0.5, x))};
}

Outs leaky_relu_entry(const NodeContext& n) { return {leaky_relu(n.input(0), n.attr_float("alpha", 0.01))}; }

Tensor elu_of(const Tensor& x, double alpha) {
  return where(gt(x, like(0, x)), x, mul(expm1(x), like(alpha, x)));
}
Outs elu_entry(const NodeContext& n) { return {elu_of(n.input(0), n.attr_float("alpha", 1.0))}; }
Outs selu_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const double alpha = n.attr_float("alpha", 1.67326319217681884765625);
  const double gamma = n.attr_float("gamma", 1.05070102214813232421875);
  return {mul(elu_of(x, alpha), like(gamma, x))};
}
Outs celu_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const double alpha = n.attr_float("alpha", 1.0);
  if (alpha == 0) n.fail("attribute alpha must not be 0");
  const Tensor neg_part = mul(expm1(div(x, like(alpha, x))), like(alpha, x));
  return {add(maximum(x, like(0, x)), minimum(neg_part, like(0, x)))};
}
Tensor hard_sigmoid_of(const Tensor& x, double alpha, double beta) {
  return minimum(maximum(add(mul(x, like(alpha, x)), like(beta, x)), like(0, x)), like(1, x));
}
Outs hard_sigmoid_entry(const NodeContext& n) {
  return {hard_sigmoid_of(n.input(0), n.attr_float("alpha", 0.2), n.attr_float("beta", 0.5))};
}
Outs hard_swish_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  return {mul(x, hard_sigmoid_of(x, 1.0 / 6, 0.5))};
}
Outs softsign_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  return {div(x, add(abs(x), like(1, x)))};
}
Outs thresholded_relu_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  return {where(gt(x, like(n.attr_float("alpha", 1.0), x)), x, like(0, x))};
}
Outs shrink_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const double bias = n.attr_float("bias", 0), lambd = n.attr_float("lambd", 0.5);
  const Tensor zero = like(0, x);
  return {where(lt(x, like(-lambd, x)), add(x, like(bias, x)),
                where(gt(x, like(lambd, x)), sub(x, like(bias, x)), zero))};
}
// Before opset 7 a 1-d slope is per channel (x's axis 1); later it broadcasts.
Outs prelu_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  Tensor slope = n.input(1);
  if (n.opset() < 7 && slope.ndim() == 1 && slope.numel() > 1 && x.ndim() >= 2 && x.shape()[1] == slope.numel()) {
    std::vector<int64_t> s(size_t(x.ndim() - 1), 1);
    s[0] = slope.numel();
    slope = reshape(slope, s);
  }
  return {where(lt(x, like(0, x)), mul(x, slope), x)};
}

// ONNX's unsigned (and INT8, INT16) Add, Sub and Mul wrap modulo 2^bits; nn
// holds u8, u16, i8 and i16 in i32 and u32 in i64 (element_types.h refuses
// u64), so the result is
// worked out in i64 and reduced into the type's range. A u32 product may pass
// i64: it is put together from the 16-bit halves of one factor.
template <Tensor (*F)(const Tensor&, const Tensor&)>
Outs wrapping_binary(const NodeContext& n) {
  using P = onnx::TensorProto;
  const int t = n.input_type(0) ? n.input_type(0) : n.input_type(1);
  const bool narrow_signed = t == P::INT8 || t == P::INT16;
  if ((t != P::UINT8 && t != P::UINT16 && t != P::UINT32 && !narrow_signed) || !is_integral(n.input(0).dtype()))
    return {F(n.input(0), n.input(1))};
  const double span = t == P::UINT8 || t == P::INT8 ? 256.0 : t == P::UINT16 || t == P::INT16 ? 65536.0 : 4294967296.0;
  if (narrow_signed) {  // into [-span/2, span/2): shifted up, reduced, shifted back
    const Tensor a = astype(n.input(0), DType::i64), b = astype(n.input(1), DType::i64);
    const Tensor half = like(span / 2, a);
    return {astype(sub(mod(add(F(a, b), half), like(span, a)), half), n.input(0).dtype())};
  }
  const Tensor a = astype(n.input(0), DType::i64), b = astype(n.input(1), DType::i64);
  const Tensor m = like(span, a);
  Tensor r;
  if (t == P::UINT32 && n.node().op_type() == "Mul") {
    const Tensor half = like(65536, a), a_lo = mod(a, half), a_hi = floordiv(a, half);
    r = add(mul(a_lo, b), mul(mod(mul(a_hi, mod(b, m)), m), half));  // a_lo * b < 2^48; (a_hi * b mod 2^32) * 2^16 < 2^48
  } else {
    r = F(a, b);
  }
  return {astype(mod(r, m), n.input(0).dtype())};
}

const ImportEntry entries[] = {
    {"Add", wrapping_binary<add>},
    {"Sub", wrapping_binary<sub>},
    {"Mul", wrapping_binary<mul>},
    {"Div", div_entry},
    {"Mod", mod_entry},
    {"Pow", pow_entry},
    {"MatMul", binary<matmul>},
    {"Abs", wrapping_unary<abs>},
    {"Neg", wrapping_unary<neg>},
    {"Sign", unary<sign>},
    {"Floor", unary<floor>},
    {"Ceil", unary<ceil>},
    {"Round", unary<round>},
    {"Exp", unary<exp>},
    {"Log", unary<log>},
    {"Sqrt", unary<sqrt>},
    {"Reciprocal", reciprocal},
    {"Sin", unary<sin>},
    {"Cos", unary<cos>},
    {"Tan", tan_entry},
    {"Sinh", sinh_entry},
    {"Cosh", cosh_entry},
    {"Asinh", asinh_entry},
    {"Acosh", acosh_entry},
    {"Atanh", atanh_entry},
    {"Tanh", unary<tanh>},
    {"Erf", unary<erf>},
    {"Sigmoid", unary<sigmoid>},
    {"Relu", unary<relu>},
    {"LeakyRelu", leaky_relu_entry},
    {"Elu", elu_entry},
    {"Selu", selu_entry},
    {"Celu", celu_entry},
    {"HardSigmoid", hard_sigmoid_entry},
    {"HardSwish", hard_swish_entry},
    {"Softplus", unary<softplus>},
    {"Softsign", softsign_entry},
    {"ThresholdedRelu", thresholded_relu_entry},
    {"Shrink", shrink_entry},
    {"PRelu", prelu_entry},
};

}  // namespace

std::span<const ImportEntry> elementwise_imports() { return entries; }

}  // namespace nn::onnx_io
