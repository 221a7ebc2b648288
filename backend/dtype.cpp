// Names and promotion of element types.
#include "backend/dtype.h"

namespace nn::backend {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

bool parse_dtype(std::string_view n, DType& out) {
  for (DType t : {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean, DType::f16, DType::bf16})
    if (dtype_name(t) == n) { out = t; return true; }
  return false;
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  Category ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == Category::integral) return DType::i64;  // i32 with i64
  // Two different floats: the wider wins; f16 with bf16 gives f32 as in PyTorch.
  auto rank = [](DType t) { return t == DType::f64 ? 3 : t == DType::f32 ? 2 : 1; };
  if (rank(a) == 1 && rank(b) == 1) return DType::f32;
  return rank(a) >= rank(b) ? a : b;
}

DType promote_weak(DType a, bool a_weak, DType b, bool b_weak) {
  if (a_weak == b_weak) return promote(a, b);
  DType strong = a_weak ? b : a, weak = a_weak ? a : b;
  if (category(weak) <= category(strong)) return strong;
  return default_dtype(category(weak));
}

}  // namespace nn::backend
