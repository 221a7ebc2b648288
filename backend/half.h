// f16 (IEEE binary16) and bf16 (bfloat16) on the host. Their kernels are
// the GPU's; on the CPU such a tensor is storage that can be cast, moved,
// printed and read as a number, always through float: a value is widened
// exactly and narrowed with one rounding to nearest, ties to even, as the
// GPU's conversion instructions round.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/dtype.h"

namespace nn::backend {

constexpr bool is_half_float(DType t) { return t == DType::f16 || t == DType::bf16; }

inline uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
inline float float_of_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return float_of_bits(sign | 0x7f800000 | (mant << 13));        // infinity, NaN
  if (exp != 0) return float_of_bits(sign | ((exp + 112) << 23) | (mant << 13));  // rebias 15 to 127
  const float sub = float(mant) * 0x1p-24f;                                       // subnormal: exact
  return sign ? -sub : sub;
}

inline uint16_t float_to_half(float f) {
  const uint32_t x = float_bits(f) & 0x7fffffff;
  const uint16_t sign = uint16_t((float_bits(f) >> 16) & 0x8000);
  if (x > 0x7f800000) return sign | 0x7e00 | uint16_t((x >> 13) & 0x3ff);  // NaN stays NaN, made quiet
  if (x >= 0x477ff000) return sign | 0x7c00;  // from 65520, halfway past the largest half (65504): infinity
  if (x >= 0x38800000) {                       // normal half: rebias, round off 13 bits
    const uint32_t m = x - 0x38000000;
    return sign | uint16_t((m + 0xfff + ((m >> 13) & 1)) >> 13);
  }
  // Below 2^-14: a multiple of 2^-24. The value is mant * 2^(exp - 150).
  const int shift = 126 - int(x >> 23);
  if (shift > 24) return sign;  // below 2^-25: zero
  const uint32_t mant = (x & 0x7fffff) | 0x800000, q = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  return sign | uint16_t(q + (rest > half || (rest == half && (q & 1))));
}

inline float bf16_to_float(uint16_t b) { return float_of_bits(uint32_t(b) << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // NaN stays NaN, made quiet
  return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

// A double as the float from which f16 and bf16 round exactly as from the
// double itself: rounded toward zero, its last bit set when that was
// inexact ("round to odd", Boldo and Melquiond). Rounding a double to
// nearest float first and then to f16 rounds twice (1.0004882821813226
// became 1.0, not 1.0009765625); f32's 24 bits keep the two extra bits
// beyond f16's 11 and bf16's 8 that round to odd needs.
inline float float_rounded_to_odd(double d) {
  float f = float(d);
  if (double(f) == d || d != d) return f;  // exact, or NaN
  if (f == f && (f > 0 ? double(f) > d : double(f) < d)) f = std::nextafter(f, 0.0f);  // toward zero
  return float_of_bits(float_bits(f) | 1);
}

// Element i of f16 or bf16 memory, and its store.
inline float load_half_float(DType t, const void* p, int64_t i) {
  const uint16_t b = static_cast<const uint16_t*>(p)[i];
  return t == DType::f16 ? half_to_float(b) : bf16_to_float(b);
}
inline void store_half_float(DType t, void* p, int64_t i, float v) {
  static_cast<uint16_t*>(p)[i] = t == DType::f16 ? float_to_half(v) : float_to_bf16(v);
}
// The same for a double (or an integer), rounded once.
inline void store_half_exact(DType t, void* p, int64_t i, double v) { store_half_float(t, p, i, float_rounded_to_odd(v)); }

}  // namespace nn::backend
