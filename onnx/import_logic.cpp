// Import entries of the comparisons, logic, selection, variadic and cast ops
// (import_table.h).
#include <cmath>
#include <limits>

#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"
#include "onnx/tensor_proto.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

Outs xor_entry(const NodeContext& n) { return {ne(n.input(0), n.input(1))}; }

Outs is_inf(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const bool pos = n.attr_int("detect_positive", 1) != 0, negative = n.attr_int("detect_negative", 1) != 0;
  const Tensor p = eq(x, like(INFINITY, x)), m = eq(x, like(-INFINITY, x));
  if (pos && negative) return {logical_or(p, m)};
  if (pos) return {p};
  if (negative) return {m};
  return {logical_and(p, m)};  // all false
}

Outs where_entry(const NodeContext& n) { return {where(n.input(0), n.input(1), n.input(2))}; }

// Max, Min, Sum, Mean: any number of inputs, broadcast together.
template <Tensor (*F)(const Tensor&, const Tensor&)>
Tensor fold(const NodeContext& n) {
  if (n.num_inputs() == 0) n.fail("needs at least one input");
  Tensor y = n.input(0);
  for (size_t i = 1; i < n.num_inputs(); ++i) y = F(y, n.input(i));
  return y;
}
template <Tensor (*F)(const Tensor&, const Tensor&)>
Outs variadic(const NodeContext& n) {
  return {fold<F>(n)};
}
Outs mean_entry(const NodeContext& n) {
  const Tensor s = fold<add>(n);
  return {div(s, like(double(n.num_inputs()), s))};
}

// Opset < 11 gives the bounds as attributes, later as optional inputs.
Outs clip_entry(const NodeContext& n) {
  Tensor y = n.input(0);
  if (n.opset() < 11) {
    const double lo = n.attr_float("min", -std::numeric_limits<double>::infinity());
    const double hi = n.attr_float("max", std::numeric_limits<double>::infinity());
    return {minimum(maximum(y, like(lo, y)), like(hi, y))};
  }
  if (n.has_input(1)) y = maximum(y, astype(n.input(1), y.dtype()));
  if (n.has_input(2)) y = minimum(y, astype(n.input(2), y.dtype()));
  return {y};
}

// nn holds ONNX's narrow integers in i32 (u32 in i64): a cast to one of
// them wraps the values into its range as a C cast does, so the values are
// the type's though the dtype is wider.
Tensor cast_to(const NodeContext& n, const Tensor& x, int to) {
  const auto dt = dtype_of(to);
  if (!dt) n.fail("casting to " + onnx_type_name(to) + " is not supported: nn has no such dtype");
  Tensor y = astype(x, *dt);
  using P = onnx::TensorProto;
  double lo = 0, span = 0;
  switch (to) {
    case P::UINT8: span = 256; break;
    case P::INT8: lo = -128, span = 256; break;
    case P::UINT16: span = 65536; break;
    case P::INT16: lo = -32768, span = 65536; break;
    case P::UINT32: span = 4294967296.0; break;
    default: return y;
  }
  return add(mod(sub(y, like(lo, y)), like(span, y)), like(lo, y));
}

Outs cast_entry(const NodeContext& n) {
  if (!n.has_attr("to")) n.fail("attribute to is missing");
  return {cast_to(n, n.input(0), int(n.attr_int("to", 0)))};
}
// The target's ONNX type when the model gives it (u8 wraps as u8), else its nn dtype.
Outs cast_like_entry(const NodeContext& n) {
  if (const int to = n.input_type(1)) return {cast_to(n, n.input(0), to)};
  return {astype(n.input(0), n.input(1).dtype())};
}

// A per-axis [K] tensor shaped to broadcast along `axis` of x.
Tensor along(const NodeContext& n, const Tensor& v, const Tensor& x) {
  if (v.ndim() == 0 || v.numel() == 1) return reshape(v, {});
  const int64_t axis = norm_axis(n, n.attr_int("axis", 1), x.ndim());
  std::vector<int64_t> s(size_t(x.ndim()), 1);
  s[size_t(axis)] = v.numel();
  return reshape(v, s);
}

// The range of the zero point's type (uint8 when absent): values held in i32.
std::pair<double, double> quant_range(const NodeContext& n) {
  using P = onnx::TensorProto;
  const int t = n.has_input(2) ? n.input_type(2) : int(P::UINT8);
  if (t == P::UINT8) return {0, 255};
  if (t == P::INT8) return {-128, 127};
  n.fail("the zero point's type " + onnx_type_name(t) + " is not supported (uint8 or int8)");
}

// (x - zero_point) * scale, per tensor or per slice along `axis`.
Outs dequantize_linear(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const Tensor scale = along(n, n.input(1), x);
  const Tensor zp = n.has_input(2) ? along(n, astype(n.input(2), DType::i64), x) : scalar_int(0);
  return {mul(astype(sub(astype(x, DType::i64), zp), scale.dtype()), scale)};
}

// saturate(round(x / scale) + zero_point), rounding half to even.
Outs quantize_linear(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const auto [lo, hi] = quant_range(n);
  const Tensor scale = along(n, n.input(1), x);
  const Tensor zp = n.has_input(2) ? along(n, astype(n.input(2), scale.dtype()), x) : scalar(0, scale.dtype());
  const Tensor q = add(round(div(astype(x, scale.dtype()), scale)), zp);
  return {astype(minimum(maximum(q, like(lo, q)), like(hi, q)), DType::i32)};
}

// u8 quantization of x over [min(0, min x), max(0, max x)]: y, its scale
// and zero point (ONNX's function body).
Outs dynamic_quantize_linear(const NodeContext& n) {
  const Tensor x = n.input(0);
  if (x.dtype() != DType::f32) n.fail("x must be f32");
  const Tensor lo = minimum(min(x), like(0, x)), hi = maximum(max(x), like(0, x));
  const Tensor scale = div(sub(hi, lo), like(255, x));
  const Tensor zp = round(minimum(maximum(sub(like(0, x), div(lo, scale)), like(0, x)), like(255, x)));
  const Tensor q = add(round(div(x, scale)), zp);
  return {astype(minimum(maximum(q, like(0, q)), like(255, q)), DType::i32), scale, astype(zp, DType::i32)};
}

Outs identity(const NodeContext& n) { return {n.input(0)}; }

const ImportEntry entries[] = {
    {"Equal", binary<eq>},
    {"Less", binary<lt>},
    {"LessOrEqual", binary<le>},
    {"Greater", binary<gt>},
    {"GreaterOrEqual", binary<ge>},
    {"And", binary<logical_and>},
    {"Or", binary<logical_or>},
    {"Xor", xor_entry},
    {"Not", unary<logical_not>},
    {"IsNaN", unary<isnan>},
    {"IsInf", is_inf},
    {"Where", where_entry},
    {"Max", variadic<maximum>},
    {"Min", variadic<minimum>},
    {"Sum", variadic<add>},
    {"Mean", mean_entry},
    {"Clip", clip_entry},
    {"Cast", cast_entry},
    {"CastLike", cast_like_entry},
    {"DequantizeLinear", dequantize_linear},
    {"QuantizeLinear", quantize_linear},
    {"DynamicQuantizeLinear", dynamic_quantize_linear},
    {"Identity", identity},
};

}  // namespace

std::span<const ImportEntry> logic_imports() { return entries; }

}  // namespace nn::onnx_io
