// Tests of the creation ops (scalars, full, arange, linspace, eye, host
// values) and the random ops on the Philox generator: known-answer vectors of
// Philox4x32-10 (Random123's kat_vectors), first values worked out from those
// words by hand, determinism under a seed, independence from the thread
// count, and the statistics of randn and the range of randint.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/philox.h"
#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::equal(static_cast<const char*>(a.raw_data()), static_cast<const char*>(a.raw_data()) + a.nbytes(),
                    static_cast<const char*>(b.raw_data()));
}

}  // namespace

TEST_CASE("scalar and scalar_int") {
  Tensor s = scalar(2.5, DType::f32);
  CHECK(s.shape() == Shape{});
  CHECK(s.dtype() == DType::f32);
  CHECK_FALSE(s.weak());
  CHECK(s.item_double() == 2.5);
  Tensor w = scalar(2.5, DType::f64, true);
  CHECK(w.weak());
  CHECK(w.type().weak);
  Tensor big = scalar_int((int64_t(1) << 62) + 1);  // exact: no trip through double
  CHECK(big.dtype() == DType::i64);
  CHECK(big.item_int() == (int64_t(1) << 62) + 1);
  CHECK(scalar_int(3, DType::i32, true).weak());
  CHECK(scalar(-1.9, DType::i32).item_int() == -1);
  CHECK(scalar(0.5, DType::boolean).item_bool());
}

TEST_CASE("full, zeros, ones") {
  Tensor f = full({2, 3}, 7.5);
  CHECK(f.dtype() == DType::f32);
  CHECK(f.shape() == Shape{2, 3});
  check_values(f, {7.5, 7.5, 7.5, 7.5, 7.5, 7.5});
  Tensor z = zeros({4}, DType::i32);
  CHECK(z.dtype() == DType::i32);
  check_values(z, {0, 0, 0, 0});
  check_values(ones({2}, DType::boolean), {1, 1});
  check_values(ones({}, DType::f64), {1});
  CHECK(ones({}).shape() == Shape{});
  CHECK(zeros({0, 5}).numel() == 0);
  Tensor large = ones({100000}, DType::i64);  // over the threads
  std::vector<double> lv = vals(large);
  CHECK(std::all_of(lv.begin(), lv.end(), [](double v) { return v == 1; }));
  CHECK_THROWS_WITH_AS(zeros({2, -1}), "full: negative dimension -1 in shape [2, -1]", Error);
  CHECK(zeros({1}).device() == cpu_device());
  const OpDef& d = op("full");
  CHECK(d.num_inputs == 0);
  CHECK(d.effect == Effect::pure);
  // An integer value attribute stays exact for large integers.
  Tensor exact = call(d, std::span<const Tensor>(), Attrs{{"shape", Shape{1}}, {"dtype", DType::i64}, {"int_value", int64_t(1) << 60}});
  CHECK(exact.item_int() == int64_t(1) << 60);
}

TEST_CASE("from_doubles and from_ints") {
  Tensor a = from_doubles({1.5, -2, 3}, {3}, DType::f64);
  check_values(a, {1.5, -2, 3});
  Tensor b = from_ints({1, 2, 3, 4, 5, 6}, {2, 3}, DType::i32);
  CHECK(b.shape() == Shape{2, 3});
  check_values(b, {1, 2, 3, 4, 5, 6});
  CHECK(from_ints({int64_t(1) << 53 | 1}, {1}, DType::i64).item_int() == (int64_t(1) << 53 | 1));
  CHECK_THROWS_WITH_AS(from_doubles({1, 2, 3, 4, 5}, {2, 3}, DType::f32), "tensor: 5 values do not fill shape [2, 3]",
                       Error);
  CHECK(from_doubles({}, {0}, DType::f32).numel() == 0);
}

TEST_CASE("arange: NumPy lengths") {
  check_values(arange(0, 5, 1, DType::i64), {0, 1, 2, 3, 4});
  CHECK(arange(0, 5, 1, DType::i64).dtype() == DType::i64);
  // ceil((2 - 1) / 0.3) = ceil(3.33) = 4 values
  check_values(arange(1, 2, 0.3, DType::f32), {1, 1.3, 1.6, 1.9});
  check_values(arange(5, 0, -2, DType::i32), {5, 3, 1});
  check_values(arange(0, 10, 3, DType::i64), {0, 3, 6, 9});
  check_values(arange(-1, 1, 0.5, DType::f64), {-1, -0.5, 0, 0.5});
  CHECK(arange(0, 0, 1, DType::f32).shape() == Shape{0});
  CHECK(arange(0, -3, 1, DType::f32).shape() == Shape{0});
  CHECK_THROWS_WITH_AS(arange(0, 1, 0, DType::f32), "arange: step must not be zero", Error);
  CHECK_THROWS_AS(arange(0, 1e300, 1e-300, DType::f32), Error);
  CHECK_THROWS_AS(arange(0, std::numeric_limits<double>::quiet_NaN(), 1, DType::f32), Error);
  Tensor big = arange(0, 100000, 1, DType::i64);
  CHECK(big.numel() == 100000);
  CHECK(vals(big)[99999] == 99999);
}

TEST_CASE("linspace") {
  check_values(linspace(0, 1, 5), {0, 0.25, 0.5, 0.75, 1});
  check_values(linspace(2, -1, 4, DType::f64), {2, 1, 0, -1});
  check_values(linspace(3, 7, 1), {3});
  CHECK(linspace(0, 1, 0).shape() == Shape{0});
  check_values(linspace(0, 3, 3, DType::i64), {0, 1, 3});  // 0, 1.5, 3 rounded down
  // The end point is exact even where start + i * step would miss it.
  CHECK(vals(linspace(0.1, 0.7, 7, DType::f64)).back() == 0.7);
  CHECK_THROWS_WITH_AS(linspace(0, 1, -1), "linspace: the number of points must not be negative, got -1", Error);
}

TEST_CASE("eye") {
  Tensor e = eye(3);
  CHECK(e.shape() == Shape{3, 3});
  CHECK(e.dtype() == DType::f32);
  check_values(e, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  check_values(eye(2, DType::i32), {1, 0, 0, 1});
  CHECK(eye(0).shape() == Shape{0, 0});
  CHECK_THROWS_AS(eye(-2), Error);
}

TEST_CASE("Philox4x32-10 known answers (Random123 kat_vectors)") {
  using P = Philox4x32;
  CHECK(P::generate({0, 0, 0, 0}, {0, 0}) == P::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(P::generate({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        P::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(P::generate({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        P::Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
  static_assert(P::at(0, 0)[0] == 0x6627e8d5u);  // computable at compile time
}

TEST_CASE("random ops: first values under seed 0 follow the published block") {
  // Seed 0, value 0 is the block of counter 0 under key 0:
  // 6627e8d5 e169c58d bc57ac4c 9b00dbd8.
  manual_seed(0);
  CHECK(vals(rand({1}))[0] == 6694888.0 / 16777216.0);  // (0x6627e8d5 >> 8) / 2^24
  manual_seed(0);
  CHECK(vals(rand({1}, DType::f64))[0] == doctest::Approx(0.3990464708489645).epsilon(1e-15));
  manual_seed(0);
  CHECK(vals(randint(0, 10, {1}))[0] == 8);  // floor(0xe169c58d6627e8d5 / 2^64 * 10)
  manual_seed(0);
  CHECK(vals(randint(-3, 4, {1}))[0] == 3);
  manual_seed(0);
  CHECK(vals(randn({1}, DType::f64))[0] == doctest::Approx(-0.12151797595308224).epsilon(1e-14));
}

TEST_CASE("random ops are deterministic under a seed and advance the offset") {
  manual_seed(42);
  Tensor a = rand({1000});
  Tensor a2 = rand({1000});
  manual_seed(42);
  Tensor b = rand({1000});
  CHECK(same_bits(a, b));
  CHECK_FALSE(same_bits(a, a2));  // the second draw continues the stream
  // A value depends on its position in the stream only: one draw of 20 is two of 10.
  manual_seed(7);
  std::vector<double> whole = vals(randn({20}));
  manual_seed(7);
  std::vector<double> first = vals(randn({10})), second = vals(randn({10}));
  first.insert(first.end(), second.begin(), second.end());
  CHECK(whole == first);
  manual_seed(43);
  CHECK_FALSE(same_bits(rand({1000}), b));
  for (const char* name : {"rand", "randn", "randint"}) {
    CHECK(op(name).effect == Effect::random);
    CHECK(op(name).num_inputs == 0);
  }
}

TEST_CASE("random ops do not depend on the thread count") {
  const int prev = num_threads();
  Tensor r[2], n[2], k[2];
  const int counts[2] = {1, 4};
  for (int i = 0; i < 2; ++i) {
    set_num_threads(counts[i]);
    manual_seed(2024);
    r[i] = rand({200001});
    n[i] = randn({300, 333}, DType::f64);
    k[i] = randint(-50, 50, {100003}, DType::i32);
  }
  set_num_threads(prev);
  CHECK(same_bits(r[0], r[1]));
  CHECK(same_bits(n[0], n[1]));
  CHECK(same_bits(k[0], k[1]));
}

TEST_CASE("rand range and randn moments") {
  manual_seed(1);
  std::vector<double> u = vals(rand({100000}));
  double lo = 1, hi = 0, sum = 0;
  for (double v : u) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  CHECK(lo >= 0.0);
  CHECK(hi < 1.0);
  CHECK(std::abs(sum / double(u.size()) - 0.5) < 0.01);

  for (DType d : {DType::f32, DType::f64}) {
    std::vector<double> z = vals(randn({100000}, d));
    double m = 0, sq = 0;
    for (double v : z) m += v;
    m /= double(z.size());
    for (double v : z) sq += (v - m) * (v - m);
    double sd = std::sqrt(sq / double(z.size()));
    INFO("dtype " << dtype_name(d) << ": mean " << m << ", std " << sd);
    CHECK(std::abs(m) < 0.02);  // 0 within ~6 standard errors (1 / sqrt(1e5) = 0.003)
    CHECK(std::abs(sd - 1) < 0.02);
    CHECK(std::all_of(z.begin(), z.end(), [](double v) { return std::isfinite(v); }));
  }
}

TEST_CASE("randint range and dtypes") {
  manual_seed(3);
  Tensor k = randint(-3, 4, {10000});
  CHECK(k.dtype() == DType::i64);
  std::vector<double> v = vals(k);
  int seen[7] = {};
  for (double x : v) {
    REQUIRE(x >= -3);
    REQUIRE(x <= 3);
    ++seen[int(x) + 3];
  }
  for (int c : seen) CHECK(c > 1200);  // each of 7 values about 1429 times
  CHECK(randint(0, 2, {5}, DType::i32).dtype() == DType::i32);
  CHECK(randint(0, 2, {5}, DType::f32).dtype() == DType::f32);
  // The full int64 range does not overflow.
  const int64_t mn = std::numeric_limits<int64_t>::min(), mx = std::numeric_limits<int64_t>::max();
  CHECK(randint(mn, mx, {10}).numel() == 10);
  CHECK_THROWS_WITH_AS(randint(5, 5, {3}), "randint: lo must be less than hi, got lo=5, hi=5", Error);
  CHECK_THROWS_WITH_AS(randint(0, 5, {3}, DType::boolean), "randint: the dtype must be a float or integer dtype, not bool",
                       Error);
  CHECK_THROWS_WITH_AS(rand({3}, DType::i64), "rand: the dtype must be a float dtype, not i64", Error);
  // f16 and bf16 draw the f32 numbers and round them (as on a GPU).
  for (DType d : {DType::f16, DType::bf16}) {
    manual_seed(7);
    const Tensor wide = randn({5});
    manual_seed(7);
    const Tensor narrow = randn({5}, d);
    CHECK(narrow.dtype() == d);
    CHECK(vals<float>(astype(narrow, DType::f32)) == vals<float>(astype(astype(wide, d), DType::f32)));
  }
  CHECK_THROWS_WITH_AS(randn({-3}), "randn: negative dimension -3 in shape [-3]", Error);
  CHECK(rand({0}).numel() == 0);
}
