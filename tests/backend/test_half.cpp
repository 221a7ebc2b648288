// f16 and bf16 on the host (backend/half.h): the conversions' bits against
// values worked out by hand from the formats (binary16: 5 exponent bits,
// 10 mantissa bits; bfloat16: float's upper 16 bits), rounding to nearest
// with ties to even; casts between them and the CPU dtypes; host numbers of
// those dtypes; and ops on them on the CPU (computed in f32, rounded once).
#include "backend/half.h"

#include <cmath>
#include <string>

#include "backend/tensor_test_util.h"

using namespace nntest;

namespace {
uint16_t h(float f) { return float_to_half(f); }
uint16_t b(float f) { return float_to_bf16(f); }
}  // namespace

TEST_CASE("float to f16 rounds to nearest, ties to even, and saturates to infinity past 65520") {
  CHECK(h(1.0f) == 0x3c00);
  CHECK(h(-2.0f) == 0xc000);
  CHECK(h(-0.0f) == 0x8000);
  CHECK(h(0.1f) == 0x2e66);       // 1.6 * 2^-4: mantissa 0.6 * 1024 = 614.4 -> 614
  CHECK(h(1.0f / 3) == 0x3555);   // 1.333.. * 2^-2: 0.333.. * 1024 = 341.33 -> 341
  CHECK(h(1 + 0x1p-11f) == 0x3c00);      // halfway between 1 and 1 + 2^-10: the even one
  CHECK(h(1 + 3 * 0x1p-11f) == 0x3c02);  // halfway between 0x3c01 and 0x3c02: the even one
  CHECK(h(2049.0f) == 0x6800);  // ulp 2 above 2048: 2049 ties down to 2048 (even)
  CHECK(h(2051.0f) == 0x6802);  // ties up to 2052
  CHECK(h(65504.0f) == 0x7bff);          // the largest half
  CHECK(h(65519.996f) == 0x7bff);        // just below halfway to 65536
  CHECK(h(65520.0f) == 0x7c00);          // halfway: rounds to the even "65536", infinity
  CHECK(h(1e10f) == 0x7c00);
  CHECK(h(-INFINITY) == 0xfc00);
  CHECK((h(NAN) & 0x7c00) == 0x7c00);
  CHECK((h(NAN) & 0x3ff) != 0);
  // Subnormals: multiples of 2^-24.
  CHECK(h(0x1p-14f) == 0x0400);          // the smallest normal
  CHECK(h(1023 * 0x1p-24f) == 0x03ff);   // the largest subnormal
  CHECK(h(0x1p-24f) == 0x0001);
  CHECK(h(0x1p-25f) == 0x0000);          // halfway between 0 and 2^-24: 0 is even
  CHECK(h(0x1.000002p-25f) == 0x0001);   // just above halfway
  CHECK(h(3 * 0x1p-25f) == 0x0002);      // halfway between 1 and 2 (units of 2^-24): 2
  CHECK(h(-5 * 0x1p-26f) == 0x8001);     // 1.25 units: 1
  CHECK(h(1e-30f) == 0x0000);
}

TEST_CASE("f16 to float is exact") {
  CHECK(half_to_float(0x3555) == 0.333251953125f);
  CHECK(half_to_float(0x2e66) == 0.0999755859375f);
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(half_to_float(0x0001) == 0x1p-24f);
  CHECK(half_to_float(0x8001) == -0x1p-24f);
  CHECK(half_to_float(0x03ff) == 1023 * 0x1p-24f);
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(half_to_float(0xfc00) == -INFINITY);
  CHECK(std::isnan(half_to_float(0x7e00)));
  // Every half survives the round trip through float.
  int bad = 0;
  for (uint32_t v = 0; v < 0x10000; ++v) {
    const float f = half_to_float(uint16_t(v));
    if (!std::isnan(f) && h(f) != v) ++bad;
  }
  CHECK(bad == 0);
}

TEST_CASE("float to bf16 keeps the upper 16 bits, rounded to nearest, ties to even") {
  CHECK(b(1.0f) == 0x3f80);
  CHECK(b(1 + 0x1p-8f) == 0x3f80);             // halfway between 1 and 1 + 2^-7: the even one
  CHECK(b(1 + 3 * 0x1p-8f) == 0x3f82);         // halfway between 0x3f81 and 0x3f82
  CHECK(b(1 + 0x1p-8f + 0x1p-20f) == 0x3f81);  // above halfway
  CHECK(b(0.1f) == 0x3dcd);                    // 0x3dcccccd: the lower half 0xcccd rounds up
  CHECK(b(-0.0f) == 0x8000);
  CHECK(b(3.4028235e38f) == 0x7f80);           // the largest float is past the largest bf16's halfway
  CHECK((b(NAN) & 0x7fc0) == 0x7fc0);
  CHECK(bf16_to_float(0x3dcd) == 0.10009765625f);
  CHECK(bf16_to_float(0xff80) == -INFINITY);
}

TEST_CASE("astype to and from f16 and bf16 on the CPU goes through float") {
  const Tensor x = t32({0.1, 1.0 / 3, 70000, -2049, -0.0, kNaN});
  Tensor x16 = astype(x, DType::f16);
  CHECK(x16.dtype() == DType::f16);
  CHECK(x16.device() == cpu_device());
  const auto* bits = static_cast<const uint16_t*>(x16.raw_data());
  CHECK(bits[0] == 0x2e66);
  CHECK(bits[1] == 0x3555);
  CHECK(bits[2] == 0x7c00);
  CHECK(bits[3] == 0xe800);  // -2048
  CHECK(bits[4] == 0x8000);
  check_values(astype(x16, DType::f64), {0.0999755859375, 0.333251953125, kInf, -2048, 0, kNaN}, 0);
  // f64 rounds once: 1 + 2^-11 + 2^-40 is past the tie between 1 and 1 + 2^-10
  // (f16), 1 + 2^-8 + 2^-32 past the one between 1 and 1 + 2^-7 (bf16); through
  // the nearest float (1 + 2^-11, 1 + 2^-8, ties) both would go down to 1.
  CHECK(static_cast<const uint16_t*>(astype(t64({0.1}), DType::f16).raw_data())[0] == 0x2e66);
  const double above_f16_tie = 1 + 0x1p-11 + 0x1p-40, above_bf16_tie = 1 + 0x1p-8 + 0x1p-32;
  CHECK(static_cast<const uint16_t*>(astype(t64({above_f16_tie}), DType::f16).raw_data())[0] == 0x3c01);
  CHECK(static_cast<const uint16_t*>(astype(t64({above_bf16_tie}), DType::bf16).raw_data())[0] == 0x3f81);
  CHECK(static_cast<const uint16_t*>(astype(t64({-above_bf16_tie}), DType::bf16).raw_data())[0] == 0xbf81);
  CHECK(static_cast<const uint16_t*>(astype(t64({1 + 0x1p-11}), DType::f16).raw_data())[0] == 0x3c00);  // a tie: even
  CHECK(static_cast<const uint16_t*>(scalar(above_f16_tie, DType::f16).raw_data())[0] == 0x3c01);  // host numbers too
  // Integers: 257 and 259 are halfway between bf16 neighbours (ulp 2 above 256).
  check_values(astype(astype(tint({257, 259, -3}), DType::bf16), DType::i64), {256, 260, -3}, 0);
  // To integers: truncation, NaN to 0, saturation; to bool: != 0.
  const Tensor odd = astype(t32({2.5, -2.5, kNaN, kInf, 0.5, -0.0}), DType::f16);
  CHECK(vals<int32_t>(astype(odd, DType::i32)) ==
        std::vector<int32_t>{2, -2, 0, 2147483647, 0, 0});
  CHECK(vals<bool>(astype(odd, DType::boolean)) == std::vector<bool>{true, true, true, true, true, false});
  // Between the two 16-bit formats: through float.
  CHECK(static_cast<const uint16_t*>(astype(x16, DType::bf16).raw_data())[0] == b(0.0999755859375f));
}

TEST_CASE("host numbers of f16 and bf16 hold the rounded value and read back as numbers") {
  const Tensor s = scalar(0.1, DType::f16);
  CHECK(s.dtype() == DType::f16);
  CHECK(s.item_double() == 0.0999755859375);
  CHECK(scalar_int(300, DType::bf16).item_int() == 300);
  CHECK(scalar_int(301, DType::bf16).item_double() == 300);  // ulp 2: 301 ties to 300 (even)
}

TEST_CASE("ops on f16 and bf16 tensors on the CPU compute in f32 and round once") {
  // 1 + 2^-11 lies halfway between the f16 neighbours 1 and 1 + 2^-10: it
  // rounds to the even one, 1.
  const Tensor one = astype(t32({1, 1}), DType::f16), tiny = astype(t32({0x1p-11f, 0x1p-10f}), DType::f16);
  const Tensor s = add(one, tiny);
  CHECK(s.dtype() == DType::f16);
  CHECK(vals<float>(astype(s, DType::f32)) == std::vector<float>{1.0f, 1.0f + 0x1p-10f});
  // exp(1) = 2.718281...; bf16 keeps 8 significant bits: 2 * (1 + 46/128) = 2.71875.
  CHECK(vals<float>(astype(exp(astype(t32({1}), DType::bf16)), DType::f32)) == std::vector<float>{2.71875f});
  // A sum accumulates wide: 1 + 2^-11 + 2^-11 = 1 + 2^-10 exactly, where
  // adding in f16 one by one would give 1 twice.
  const Tensor three = astype(t32({1, 0x1p-11f, 0x1p-11f}), DType::f16);
  CHECK(sum(three).dtype() == DType::f16);
  CHECK(astype(sum(three), DType::f32).item_double() == 1.0 + 0x1p-10);
  // A matmul of bf16 operands: [1 + 2^-7] x [1 + 2^-7] = 1 + 2^-6 + 2^-14,
  // which rounds to 1 + 2^-6 in bf16 (2^-14 is under half its ulp 2^-7).
  const Tensor a = astype(t32({1 + 0x1p-7f}), DType::bf16);
  const Tensor m = matmul(reshape(a, {1, 1}), reshape(a, {1, 1}));
  CHECK(m.dtype() == DType::bf16);
  CHECK(vals<float>(astype(m, DType::f32)) == std::vector<float>{1 + 0x1p-6f});
  // Creation ops fill in f32 and round: full(0.1) in f16 is 0.0999755859375.
  CHECK(astype(full(Shape{1}, 0.1, DType::f16), DType::f64).item_double() == 0.0999755859375);
}
