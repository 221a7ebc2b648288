// Reductions: sum prod max min argmax argmin and the composites mean var std
// logsumexp norm. Expected values are worked out by hand or by closed formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

TEST_CASE("sum over all, one and several axes") {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor all = sum(x);
  CHECK(all.shape() == Shape{});
  CHECK(all.dtype() == DType::f32);
  CHECK(vals<float>(all) == std::vector<float>{21});

  CHECK(vals<float>(sum(x, std::vector<int64_t>{0})) == std::vector<float>{5, 7, 9});
  CHECK(vals<float>(sum(x, std::vector<int64_t>{1})) == std::vector<float>{6, 15});
  Tensor last = sum(x, std::vector<int64_t>{-1}, /*keepdims=*/true);
  CHECK(last.shape() == Shape{2, 1});
  CHECK(vals<float>(last) == std::vector<float>{6, 15});
  CHECK(sum(x, std::nullopt, true).shape() == Shape{1, 1});

  // y[i, j, k] = 12i + 4j + k.
  Tensor y = iota({2, 3, 4});
  // Over (0, 2): sum over i, k of 12i + 4j + k = 48 + 32j + 12.
  Tensor s02 = sum(y, std::vector<int64_t>{0, -1});
  CHECK(s02.shape() == Shape{3});
  CHECK(vals<float>(s02) == std::vector<float>{60, 92, 124});
  CHECK(sum(y, std::vector<int64_t>{2, 0}, true).shape() == Shape{1, 3, 1});
  // Over the middle axis: 36i + 12 + 3k.
  Tensor s1 = sum(y, std::vector<int64_t>{1});
  CHECK(s1.shape() == Shape{2, 4});
  CHECK(vals<float>(s1) == std::vector<float>{12, 15, 18, 21, 48, 51, 54, 57});
  // Over the leading axis: 12 + 8j + 2k.
  CHECK(vals<float>(sum(y, std::vector<int64_t>{0})) ==
        std::vector<float>{12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});
  // No axes: a copy in the result dtype.
  CHECK(vals<float>(sum(x, std::vector<int64_t>{})) == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("sum dtypes: ints and bools give i64, floats keep theirs") {
  Tensor i = make<int32_t>({1, 2, 3, -10}, {4});
  CHECK(sum(i).dtype() == DType::i64);
  CHECK(vals<int64_t>(sum(i)) == std::vector<int64_t>{-4});
  Tensor b = make<bool>({true, false, true, true}, {2, 2});
  CHECK(vals<int64_t>(sum(b, std::vector<int64_t>{1})) == std::vector<int64_t>{1, 2});
  Tensor d = make<double>({0.5, 0.25}, {2});
  CHECK(sum(d).dtype() == DType::f64);
  CHECK(vals<double>(sum(d)) == std::vector<double>{0.75});
  CHECK(vals<int64_t>(prod(make<int64_t>({2, 3, 4}, {3}))) == std::vector<int64_t>{24});
}

TEST_CASE("0-d and empty tensors") {
  Tensor s = make<float>({2.5f}, {});
  CHECK(vals<float>(sum(s)) == std::vector<float>{2.5f});
  CHECK(vals<float>(max(s)) == std::vector<float>{2.5f});
  CHECK(vals<int64_t>(argmax(s)) == std::vector<int64_t>{0});

  Tensor e = Tensor::empty({0, 3}, DType::f32);
  CHECK(vals<float>(sum(e, std::vector<int64_t>{0})) == std::vector<float>{0, 0, 0});
  CHECK(vals<float>(prod(e, std::vector<int64_t>{0})) == std::vector<float>{1, 1, 1});
  CHECK(sum(e, std::vector<int64_t>{1}).shape() == Shape{0});
  CHECK(vals<float>(sum(e)) == std::vector<float>{0});
  CHECK(vals<int64_t>(sum(Tensor::empty({0}, DType::i32))) == std::vector<int64_t>{0});
  CHECK(max(e, std::vector<int64_t>{1}).shape() == Shape{0});  // nothing to reduce per row, no rows

  CHECK_THROWS_WITH_AS(max(e), "max: cannot reduce over axis 0 of size 0 in f32[0, 3] (max of no elements is undefined)",
                       Error);
  CHECK_THROWS_WITH_AS(min(e, std::vector<int64_t>{0}),
                       "min: cannot reduce over axis 0 of size 0 in f32[0, 3] (min of no elements is undefined)", Error);
  CHECK_THROWS_WITH_AS(argmax(e), "argmax: cannot take the argmax of an empty tensor f32[0, 3]", Error);
  CHECK_THROWS_WITH_AS(argmin(e, 0), "argmin: cannot take the argmin over axis 0 of size 0 in f32[0, 3]", Error);
}

TEST_CASE("axis errors name the op, the axis and the type") {
  Tensor x = iota({2, 3});
  CHECK_THROWS_WITH_AS(sum(x, std::vector<int64_t>{2}), "sum: axis 2 is out of range for f32[2, 3] (valid axes are -2..1)",
                       Error);
  CHECK_THROWS_WITH_AS(mean(x, std::vector<int64_t>{-3}),
                       "mean: axis -3 is out of range for f32[2, 3] (valid axes are -2..1)", Error);
  CHECK_THROWS_WITH_AS(max(x, std::vector<int64_t>{1, -1}), "max: axis -1 appears twice in axes [1, -1] for f32[2, 3]",
                       Error);
  CHECK_THROWS_WITH_AS(argmax(x, 5), "argmax: axis 5 is out of range for f32[2, 3] (valid axes are -2..1)", Error);
  CHECK_THROWS_WITH_AS(sum(make<float>({1}, {}), std::vector<int64_t>{0}),
                       "sum: axis 0 is out of range for f32[] (it has no axes)", Error);
}

TEST_CASE("prod, max and min") {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(vals<float>(prod(x, std::vector<int64_t>{1})) == std::vector<float>{6, 120});
  CHECK(vals<float>(prod(x, std::vector<int64_t>{0})) == std::vector<float>{4, 10, 18});

  Tensor y = make<float>({3, -1, 7, 2, 9, -4}, {2, 3});
  CHECK(vals<float>(max(y)) == std::vector<float>{9});
  CHECK(vals<float>(min(y)) == std::vector<float>{-4});
  CHECK(vals<float>(max(y, std::vector<int64_t>{0})) == std::vector<float>{3, 9, 7});
  CHECK(vals<float>(min(y, std::vector<int64_t>{-1}, true)) == std::vector<float>{-1, -4});
  CHECK(max(y, std::vector<int64_t>{-1}, true).shape() == Shape{2, 1});

  Tensor i = make<int32_t>({5, -7, 2}, {3});
  CHECK(max(i).dtype() == DType::i32);
  CHECK(vals<int32_t>(max(i)) == std::vector<int32_t>{5});
  CHECK(vals<int32_t>(min(i)) == std::vector<int32_t>{-7});
  Tensor b = make<bool>({false, true, true, true}, {2, 2});
  CHECK(vals<bool>(max(b, std::vector<int64_t>{1})) == std::vector<bool>{true, true});
  CHECK(vals<bool>(min(b, std::vector<int64_t>{1})) == std::vector<bool>{false, true});

  // NaN propagates, as NumPy; -inf/inf are ordinary values.
  Tensor n = make<double>({1, kNaN, 3, -kInf, 2, kInf}, {2, 3});
  auto mx = vals<double>(max(n, std::vector<int64_t>{1}));
  CHECK(std::isnan(mx[0]));
  CHECK(mx[1] == kInf);
  auto mn0 = vals<double>(min(n, std::vector<int64_t>{0}));
  CHECK(mn0[0] == -kInf);
  CHECK(std::isnan(mn0[1]));
  CHECK(mn0[2] == 3);
}

TEST_CASE("argmax and argmin: first occurrence, NaN wins, i64") {
  Tensor x = make<float>({1, 5, 5, 0, 0, 2}, {2, 3});
  Tensor flat = argmax(x);
  CHECK(flat.dtype() == DType::i64);
  CHECK(flat.shape() == Shape{});
  CHECK(vals<int64_t>(flat) == std::vector<int64_t>{1});
  CHECK(vals<int64_t>(argmin(x)) == std::vector<int64_t>{3});
  CHECK(argmax(x, std::nullopt, true).shape() == Shape{1, 1});
  CHECK(vals<int64_t>(argmax(x, 1)) == std::vector<int64_t>{1, 2});
  CHECK(vals<int64_t>(argmin(x, -1)) == std::vector<int64_t>{0, 0});
  CHECK(vals<int64_t>(argmax(x, 0)) == std::vector<int64_t>{0, 0, 0});
  CHECK(vals<int64_t>(argmin(x, 0)) == std::vector<int64_t>{1, 1, 1});
  CHECK(argmax(x, 0, true).shape() == Shape{1, 3});

  // Middle axis of [2, 3, 2]: x[i, j, k]; ties keep the first j.
  Tensor y = make<int64_t>({1, 9, 4, 9, 4, 0, /**/ 7, 7, 7, 8, 7, 9}, {2, 3, 2});
  CHECK(vals<int64_t>(argmax(y, 1)) == std::vector<int64_t>{1, 0, 0, 2});
  CHECK(vals<int64_t>(argmin(y, 1)) == std::vector<int64_t>{0, 2, 0, 0});

  Tensor n = make<float>({1, float(kNaN), 3, float(kNaN)}, {4});
  CHECK(vals<int64_t>(argmax(n)) == std::vector<int64_t>{1});
  CHECK(vals<int64_t>(argmin(n)) == std::vector<int64_t>{1});
  Tensor b = make<bool>({false, false, true}, {3});
  CHECK(vals<int64_t>(argmax(b)) == std::vector<int64_t>{2});
}

TEST_CASE("long reductions: parallel paths and f32 accuracy") {
  // A million copies of 0.1f: accumulating in f32 would drift by about 1%.
  const int64_t n = 1 << 20;
  Tensor x = make(std::vector<float>(size_t(n), 0.1f), {n});
  CHECK(std::abs(double(vals<float>(sum(x))[0]) - double(0.1f) * double(n)) < 0.02);
  CHECK(vals<float>(max(x))[0] == 0.1f);

  // Column sums of a tall matrix: x[i, j] = i % 7 + j over 7000 rows, so each
  // column sums to 1000 * 21 + 7000 j.
  const int64_t rows = 7000, cols = 300;
  std::vector<int32_t> v(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) v[size_t(i * cols + j)] = int32_t(i % 7 + j);
  Tensor m = make(v, {rows, cols});
  auto cs = vals<int64_t>(sum(m, std::vector<int64_t>{0}));
  auto rs = vals<int64_t>(sum(m, std::vector<int64_t>{1}));
  bool cols_ok = true, rows_ok = true;
  for (int64_t j = 0; j < cols; ++j) cols_ok = cols_ok && cs[size_t(j)] == 21000 + 7000 * j;
  // Row i: 300 (i % 7) + 299 * 300 / 2.
  for (int64_t i = 0; i < rows; ++i) rows_ok = rows_ok && rs[size_t(i)] == 300 * (i % 7) + 44850;
  CHECK(cols_ok);
  CHECK(rows_ok);
  auto am = vals<int64_t>(argmax(m, 0));  // the first row with i % 7 == 6
  CHECK(am[0] == 6);
  CHECK(am[299] == 6);
}

TEST_CASE("a sum keeping the innermost axis folds the rows in order, whatever their count") {
  // A bias's gradient in nChw16c: [N, C/16, H, W, 16] over N, H and W. Each
  // result adds its rows in a double, four rows to a pass (reduction.cpp's
  // fold_rows), the last rows of a count that is not a multiple of four
  // included. The values, 1 + k 2^-23, have 24 significant bits, so their
  // sum in a double is exact and rounds once to the f32 result; an f32
  // accumulator would round at almost every step, and a row left out shows.
  for (int64_t n : {1, 3, 5, 17}) {
    INFO("n=", n);
    const Shape s{n, 2, 3, 5, 16};
    std::vector<float> v(size_t(s.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 1.0f + std::ldexp(float(i % 97), -23) * float(1 + i % 3);
    const auto got = vals<float>(sum(make(v, s), std::vector<int64_t>{0, 2, 3}));
    REQUIRE(got.size() == 32);
    bool same = true;
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t l = 0; l < 16; ++l) {
        double want = 0;
        for (int64_t b = 0; b < n; ++b)
          for (int64_t p = 0; p < 15; ++p) want += double(v[size_t(((b * 2 + c) * 15 + p) * 16 + l)]);
        same = same && got[size_t(c * 16 + l)] == float(want);
      }
    CHECK(same);
  }
}

TEST_CASE("mean, var, std") {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(vals<float>(mean(x)) == std::vector<float>{3.5f});
  CHECK(vals<float>(mean(x, std::vector<int64_t>{0})) == std::vector<float>{2.5f, 3.5f, 4.5f});
  CHECK(mean(x, std::vector<int64_t>{1}, true).shape() == Shape{2, 1});
  Tensor i = make<int64_t>({1, 2}, {2});
  CHECK(mean(i).dtype() == DType::f32);
  CHECK(vals<float>(mean(i)) == std::vector<float>{1.5f});
  CHECK(mean(make<double>({1, 2}, {2})).dtype() == DType::f64);

  // Rows [1 2 3] and [4 5 6]: squared deviations sum to 2 each.
  auto pop = vals<float>(var(x, std::vector<int64_t>{1}));
  CHECK(pop[0] == doctest::Approx(2.0 / 3));
  CHECK(pop[1] == doctest::Approx(2.0 / 3));
  auto sample = vals<float>(var(x, std::vector<int64_t>{1}, false, 1));
  CHECK(sample[0] == doctest::Approx(1.0));
  // All six: mean 3.5, squared deviations sum to 17.5.
  CHECK(vals<float>(var(x))[0] == doctest::Approx(17.5 / 6));
  CHECK(vals<float>(nn::backend::std(x, std::nullopt, false, 1))[0] == doctest::Approx(std::sqrt(17.5 / 5)));
  CHECK(nn::backend::std(x, std::vector<int64_t>{0}, true).shape() == Shape{1, 3});
  CHECK(vals<float>(nn::backend::std(x, std::vector<int64_t>{0}))[0] == doctest::Approx(1.5));
  Tensor vi = var(make<int32_t>({1, 3}, {2}));
  CHECK(vi.dtype() == DType::f32);
  CHECK(vals<float>(vi)[0] == doctest::Approx(1.0));
}

TEST_CASE("mean, var and std of f16 and bf16 divide before rounding, once") {
  auto as64 = [](const Tensor& t) { return vals(astype(t, DType::f64)); };
  // 66 values of 1000: their sum, 66000, is past f16's largest (65504), and
  // rounded to f16 first it made the mean, the variance and std inf.
  Tensor h = astype(full({66}, 1000.0), DType::f16);
  CHECK(mean(h).dtype() == DType::f16);
  CHECK(as64(mean(h)) == std::vector<double>{1000});
  CHECK(as64(var(h)) == std::vector<double>{0});
  CHECK(as64(nn::backend::std(h)) == std::vector<double>{0});
  CHECK(as64(mean(reshape(h, {2, 33}), std::vector<int64_t>{1})) == std::vector<double>{1000, 1000});
  // 2048 + 2 + 1 = 2051, an f16 tie that rounds to 2052: 2051 / 3 =
  // 683.67 rounds to 683.5 (f16 counts in halves there); 2052 / 3 gave 684.
  CHECK(as64(mean(astype(t32({2048, 2, 1}), DType::f16))) == std::vector<double>{683.5});
  // 0, 300, 0, 300: the squared deviations (22500 each) sum to 90000, past
  // f16, and the sample variance is 90000 / 3 = 30000 (PyTorch 1.13's f16 var).
  Tensor v = var(astype(t32({0, 300, 0, 300}), DType::f16), std::nullopt, false, 1);
  CHECK(v.dtype() == DType::f16);
  CHECK(as64(v) == std::vector<double>{30000});
  // bf16 keeps f32's range: 1, 2, 4 have mean 7/3, which bf16 (steps of 2^-6 there) rounds to 149/64.
  Tensor b = mean(astype(t32({1, 2, 4}), DType::bf16));
  CHECK(b.dtype() == DType::bf16);
  CHECK(as64(b) == std::vector<double>{149.0 / 64});
}

TEST_CASE("logsumexp is stable, norm is L2") {
  Tensor big = make<float>({1000, 1000, 0, 0}, {2, 2});
  auto l = vals<float>(logsumexp(big, std::vector<int64_t>{1}));
  CHECK(l[0] == doctest::Approx(1000 + std::log(2.0)));
  CHECK(l[1] == doctest::Approx(std::log(2.0)));
  CHECK(logsumexp(big, std::vector<int64_t>{-1}, true).shape() == Shape{2, 1});
  CHECK(vals<float>(logsumexp(big, std::vector<int64_t>{0}))[1] == doctest::Approx(1000));
  // log(e^1 + e^2 + e^3) = 3 + log(1 + e^-1 + e^-2).
  CHECK(vals<double>(logsumexp(make<double>({1, 2, 3}, {3})))[0] ==
        doctest::Approx(3 + std::log(1 + std::exp(-1.0) + std::exp(-2.0))));
  // All -inf: -inf, not NaN.
  CHECK(vals<float>(logsumexp(make<float>({float(-kInf), float(-kInf)}, {2})))[0] == -float(kInf));
  CHECK(vals<float>(logsumexp(Tensor::empty({0}, DType::f32)))[0] == -float(kInf));
  CHECK(logsumexp(make<int64_t>({0, 0}, {2})).dtype() == DType::f32);

  CHECK(vals<float>(norm(make<float>({3, 4}, {2})))[0] == doctest::Approx(5));
  Tensor m = make<int64_t>({3, 4, 6, 8}, {2, 2});
  Tensor rn = norm(m, std::vector<int64_t>{1}, true);
  CHECK(rn.dtype() == DType::f32);
  CHECK(rn.shape() == Shape{2, 1});
  CHECK(vals<float>(rn) == std::vector<float>{5, 10});
}
