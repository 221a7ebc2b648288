// exp, tanh, sigmoid and erf of a float written as branch-free arithmetic, so
// that the compiler vectorises the loops that call them (libm's expf and
// tanhf are calls, one element at a time: they were a third of a fused
// LSTM cell's time). Only +, -, *, / and bit moves, no fused multiply-add:
// a vectorised loop and its scalar remainder give the same bits, so a fused
// kernel equals the op run alone. Always inlined: a call in a loop would keep
// it scalar. Host code only; CUDA keeps its own.
//
// Accuracy, checked against double-precision libm over every float
// (tests/backend/test_float_math.cpp samples it): exp within 2 ulp,
// tanh, sigmoid and erf within 3; inf, -inf, NaN, -0 and subnormal results
// as libm gives them.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace nn::backend::float_math {

constexpr float kLog2e = 1.44269504088896341f;
// ln 2 in two parts: the first has 9 significant bits, so n * kLn2Hi is
// exact for the |n| <= 150 that occur.
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
// Adding and subtracting 1.5 * 2^23 rounds a float below 2^22 to an integer.
constexpr float kRound = 12582912.0f;

// e^r - 1 for |r| <= ln2 / 2: the Taylor series to r^7 (the rest is below
// 2e-8 of the result).
__attribute__((always_inline)) inline float expm1_reduced(float r) {
  const float q = 1.f / 120 + r * (1.f / 720 + r * (1.f / 5040));
  return r + r * r * (0.5f + r * (1.f / 6 + r * (1.f / 24 + r * q)));
}

// 2^k for -126 <= k <= 127, made in the exponent bits.
__attribute__((always_inline)) inline float pow2(int k) { return std::bit_cast<float>(uint32_t(k + 127) << 23); }

// x = n ln2 + r with n an integer and |r| <= ln2 / 2; x must be finite and
// below 2^21 in magnitude.
struct Reduced {
  int n;
  float r;
};
__attribute__((always_inline)) inline Reduced reduce(float x) {
  const float n = (x * kLog2e + kRound) - kRound;
  return {int(n), (x - n * kLn2Hi) - n * kLn2Lo};
}

__attribute__((always_inline)) inline float exp(float x) {
  // Beyond [-104, 89] the result is 0 or inf anyway; a NaN is computed as 0
  // and given back at the end.
  float c = x < -104.f ? -104.f : x;
  c = c > 89.f ? 89.f : c;
  c = c == c ? c : 0.f;
  const Reduced v = reduce(c);
  // 2^n in two factors, each a normal float, so that results below 2^-126
  // (n down to -150) and up to 2^128 come out of the last product rounded once.
  const int h = v.n >> 1;
  const float y = (1.f + expm1_reduced(v.r)) * pow2(h) * pow2(v.n - h);
  return x == x ? y : x;
}

// tanh |x| = e / (e + 2) with e = e^(2|x|) - 1, computed as
// (2^n - 1) + 2^n (e^r - 1): exact steps but one, so small |x| keeps its
// relative accuracy. Beyond |x| = 10 the result rounds to 1.
__attribute__((always_inline)) inline float tanh(float x) {
  float a = std::fabs(x);
  a = a < 10.f ? a : 10.f;  // a NaN becomes 10 here, and is given back at the end
  const Reduced v = reduce(2.f * a);
  const float s = pow2(v.n);
  const float e = (s - 1.f) + s * expm1_reduced(v.r);
  const float t = e / (e + 2.f);
  return x == x ? std::copysign(t, x) : x;
}

// 1 / (1 + e^-x), from e^-|x| so that nothing overflows and the small side
// keeps its precision: x >= 0 gives 1 / (1 + e), x < 0 gives e / (1 + e).
__attribute__((always_inline)) inline float sigmoid(float x) {
  const float e = exp(x < 0.f ? x : -x);
  const float d = 1.f + e;
  return x < 0.f ? e / d : 1.f / d;
}

// erf x: below |x| = 1, x P(x^2); above, 1 - e^(-x^2) Q(1 / |x|), both
// polynomials fitted to erf to below 2e-9 and 1e-7 relative (Q to
// erfc(x) e^(x^2) over [1, 4]; past 4, erf rounds to 1). Both forms are
// computed and one chosen, so that the loop stays branch-free.
__attribute__((always_inline)) inline float erf(float x) {
  float a = std::fabs(x);
  const float s = a * a;
  const float small =
      a * (1.128379226f +
           s * (-3.761262894e-1f +
                s * (1.128361151e-1f +
                     s * (-2.685476840e-2f + s * (5.189987365e-3f + s * (-8.023829432e-4f + s * 7.896614261e-5f))))));
  a = a < 4.f ? a : 4.f;  // a NaN becomes 4 here, and is given back at the end
  a = a > 1.f ? a : 1.f;
  const float u = 1.f / a;
  const float q =
      2.471402695e-4f +
      u * (5.594130158e-1f +
           u * (3.949035332e-2f +
                u * (-4.621255398e-1f +
                     u * (4.751142561e-1f +
                          u * (-2.108043432e-1f + u * (-3.075686516e-3f + u * (4.138684273e-2f + u * -1.206245180e-2f)))))));
  const float large = 1.f - exp(-(a * a)) * q;
  const float y = std::fabs(x) < 1.f ? small : large;
  return x == x ? std::copysign(y, x) : x;
}

}  // namespace nn::backend::float_math
