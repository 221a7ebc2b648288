// Element types of tensors and the promotion rules of SPEC §3.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "backend/error.h"

namespace nn::backend {

enum class DType : uint8_t { f32, f64, i32, i64, boolean, f16, bf16 };

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: return 4;
    case DType::f64: case DType::i64: return 8;
    case DType::boolean: return 1;
    case DType::f16: case DType::bf16: return 2;
  }
  return 0;
}
constexpr bool is_floating(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16;
}
constexpr bool is_integral(DType t) { return t == DType::i32 || t == DType::i64; }

// bool < integer < floating: the category decides whether a weak (host
// number) operand may change a tensor's dtype.
enum class Category : uint8_t { boolean = 0, integral = 1, floating = 2 };
constexpr Category category(DType t) {
  return t == DType::boolean ? Category::boolean
         : is_integral(t)    ? Category::integral
                             : Category::floating;
}

std::string_view dtype_name(DType t);   // "f32", "bool", ...
bool parse_dtype(std::string_view name, DType& out);

// Promotion of two tensor dtypes (PyTorch's table for our dtypes).
DType promote(DType a, DType b);
// Promotion where an operand is weak (a host number wrapped as a 0-d tensor):
// a weak operand only widens the category, never the width within it.
DType promote_weak(DType a, bool a_weak, DType b, bool b_weak);

// Default dtype of a category: f32 for floats, i64 for integers.
constexpr DType default_dtype(Category c) {
  return c == Category::floating ? DType::f32 : c == Category::integral ? DType::i64 : DType::boolean;
}

// Calls f.template operator()<T>() with T the C++ type of dtype t: the
// five dtypes with CPU kernels. f16 and bf16 have none (backend/half.h has
// their conversions): they throw, never reach f as another type.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f32: return f.template operator()<float>();
    case DType::f64: return f.template operator()<double>();
    case DType::i32: return f.template operator()<int32_t>();
    case DType::i64: return f.template operator()<int64_t>();
    case DType::boolean: return f.template operator()<bool>();
    default: break;
  }
  throw Error(std::string(dtype_name(t)) + " tensors have no CPU kernels");
}

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<bool>() { return DType::boolean; }

}  // namespace nn::backend
