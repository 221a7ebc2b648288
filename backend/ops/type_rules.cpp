// Shared type-rule helpers: broadcasting, promotion and their messages.
#include "backend/ops/type_rules.h"

#include <algorithm>
#include <optional>

namespace nn::backend {

std::string describe_operands(std::span<const TensorType> in) {
  std::string s;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i) s += in.size() == 2 ? " with " : i + 1 == in.size() ? " and " : ", ";
    s += in[i].str();
  }
  return s;
}

Shape broadcast_shape(std::string_view op, std::span<const TensorType> in) {
  if (in.empty()) return Shape();
  // Fast path for the common cases, equal shapes and tensor-with-0-d (a host
  // number): the widest shape is the answer when every other operand equals
  // it or has no dims. Eager overhead on tiny tensors is spent here.
  size_t widest = 0;
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].shape.ndim() > in[widest].shape.ndim()) widest = i;
  bool simple = true;
  for (size_t i = 0; i < in.size() && simple; ++i)
    simple = in[i].shape.ndim() == 0 || in[i].shape == in[widest].shape;
  if (simple) return in[widest].shape;

  int nd = 0;
  for (auto& t : in) nd = std::max(nd, t.shape.ndim());
  Shape out;
  for (int d = 0; d < nd; ++d) out.push_back(1);
  for (int back = 1; back <= nd; ++back) {
    int64_t extent = 1;
    size_t owner = 0;  // operand that set `extent`, for the message
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in[i].shape;
      if (back > s.ndim()) continue;
      int64_t e = s[s.ndim() - back];
      if (e == 1 || e == extent) continue;
      if (extent == 1) {
        extent = e;
        owner = i;
        continue;
      }
      throw Error(std::string(op) + ": cannot broadcast " + describe_operands(in) + " (dimension " +
                  std::to_string(-back) + ": " + std::to_string(in[owner].shape[in[owner].shape.ndim() - back]) +
                  " != " + std::to_string(e) + ")");
    }
    out[nd - back] = extent;
  }
  return out;
}

Promoted promote_types(std::span<const TensorType> in) {
  std::optional<DType> dims, zero_d, host;
  for (auto& t : in) {
    std::optional<DType>& tier = t.weak ? host : t.shape.ndim() == 0 ? zero_d : dims;
    tier = tier ? promote(*tier, t.dtype) : t.dtype;
  }
  // Only host numbers: the category's default dtype (2.5 * 2 computes in f32, as in JAX).
  if (!dims && !zero_d) return {default_dtype(category(host.value_or(DType::boolean))), true};
  // PyTorch's combine_categories: the lower tier only where it raises the category.
  auto with_lower = [](std::optional<DType> higher, std::optional<DType> lower) {
    if (!higher || !lower) return higher ? higher : lower;
    if (is_floating(*higher)) return higher;
    if (*higher == DType::boolean || is_floating(*lower)) return std::optional(promote(*higher, *lower));
    return higher;
  };
  if (host) host = default_dtype(category(*host));
  return {*with_lower(dims, with_lower(zero_d, host)), false};
}

Device* operands_device(std::span<const TensorType> in) {
  for (auto& t : in)
    if (t.device) return t.device;
  return cpu_device();
}

TensorType elementwise_type(std::string_view op, std::span<const TensorType> in) {
  Promoted p = promote_types(in);
  return {p.dtype, broadcast_shape(op, in), operands_device(in), p.weak};
}

void throw_dtype_error(std::string_view op, std::string_view what, std::span<const TensorType> in) {
  std::string got;
  for (size_t i = 0; i < in.size(); ++i) got += (i ? ", " : "") + in[i].str();
  throw Error(std::string(op) + ": " + std::string(what) + " (got " + got + ")");
}

}  // namespace nn::backend
