// Tests of the CPU's float exp, tanh, sigmoid and erf (ops/float_math.h) through
// the ops that use them: their error in ulps against double-precision libm
// over a sweep of every 509th float, their special values, and the same
// bits whether an element goes through the vectorised loop or alone, and
// whichever vector width the loop was built for.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/ops/float_math.h"
#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

namespace {

// Every 509th bit pattern (a prime stride, so the sweep meets every
// exponent and many mantissas): positive and negative floats, subnormals,
// infinities and NaNs, 8.4 million in all.
std::vector<float> float_sweep() {
  std::vector<float> v;
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 509) v.push_back(std::bit_cast<float>(uint32_t(b)));
  return v;
}

// |got - want| in units of the last place of want rounded to float (the
// spacing of floats there; the smallest subnormal's at zero).
double ulps(float got, double want) {
  const float w = float(want);
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(w)) return got == w ? 0 : 1e9;
  const double spacing = w == 0 ? std::ldexp(1.0, -149) : double(std::nextafter(std::fabs(w), INFINITY)) - std::fabs(w);
  return std::fabs(double(got) - want) / spacing;
}

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }

// The largest error of op over the sweep against ref.
double worst_ulps(Tensor (*op)(const Tensor&), double (*ref)(double)) {
  const std::vector<float> x = float_sweep();
  const std::vector<float> y = vals<float>(op(make(x, Shape{int64_t(x.size())})));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(y[i], ref(double(x[i]))));
  return worst;
}

Tensor exp_op(const Tensor& t) { return exp(t); }
Tensor tanh_op(const Tensor& t) { return tanh(t); }
Tensor sigmoid_op(const Tensor& t) { return sigmoid(t); }
Tensor erf_op(const Tensor& t) { return erf(t); }
double exp_ref(double x) { return std::exp(x); }
double tanh_ref(double x) { return std::tanh(x); }
double erf_ref(double x) { return std::erf(x); }

}  // namespace

TEST_CASE("float exp, tanh, sigmoid and erf: within 2, 3, 3 and 3 ulp of double libm everywhere") {
  CHECK(worst_ulps(exp_op, exp_ref) <= 2);
  CHECK(worst_ulps(tanh_op, tanh_ref) <= 3);
  CHECK(worst_ulps(sigmoid_op, sigmoid_ref) <= 3);
  CHECK(worst_ulps(erf_op, erf_ref) <= 3);
}

TEST_CASE("float exp, tanh, sigmoid and erf: special values") {
  const float inf = INFINITY, nan = NAN;
  // exp: e^88.72 = 3.40e38 is the last finite one; e^-103.2 = 2^-149 the
  // smallest subnormal (rounding half way up), e^-87 = 1.65e-38 normal.
  std::vector<float> e = vals<float>(exp(make<float>({inf, -inf, nan, -0.f, 88.72f, 88.73f, -103.2f, -120.f, -87.f}, {9})));
  CHECK(e[0] == inf);
  CHECK(e[1] == 0);
  CHECK(std::isnan(e[2]));
  CHECK(e[3] == 1);
  CHECK(ulps(e[4], std::exp(double(88.72f))) <= 2);
  CHECK(e[5] == inf);
  CHECK(e[6] == std::ldexp(1.f, -149));
  CHECK(e[7] == 0);
  CHECK(ulps(e[8], std::exp(-87.0)) <= 2);

  std::vector<float> t = vals<float>(tanh(make<float>({inf, -inf, nan, -0.f, 0.f, 1e-30f, -1e-42f, 9.5f, -40.f}, {9})));
  CHECK(t[0] == 1);
  CHECK(t[1] == -1);
  CHECK(std::isnan(t[2]));
  CHECK((t[3] == 0 && std::signbit(t[3])));  // tanh(-0) is -0
  CHECK((t[4] == 0 && !std::signbit(t[4])));
  CHECK(t[5] == 1e-30f);  // tanh x = x to float precision for tiny x, subnormals too
  CHECK(t[6] == -1e-42f);
  CHECK(t[7] == 1);
  CHECK(t[8] == -1);

  std::vector<float> s = vals<float>(sigmoid(make<float>({inf, -inf, nan, 0.f, -200.f, 200.f, -90.f}, {7})));
  CHECK(s[0] == 1);
  CHECK(s[1] == 0);
  CHECK(std::isnan(s[2]));
  CHECK(s[3] == 0.5f);
  CHECK(s[4] == 0);
  CHECK(s[5] == 1);
  CHECK(ulps(s[6], sigmoid_ref(-90.0)) <= 3);  // 8.2e-40: a subnormal, from e^-90 / (1 + e^-90)

  // erf: odd, 1 from about 3.9 on; the two forms meet at 1 (erf 1 = 0.8427007929497149).
  std::vector<float> r = vals<float>(erf(make<float>({inf, -inf, nan, -0.f, 1e-40f, 1.f, 0.99999994f, -4.5f}, {8})));
  CHECK(r[0] == 1);
  CHECK(r[1] == -1);
  CHECK(std::isnan(r[2]));
  CHECK((r[3] == 0 && std::signbit(r[3])));
  CHECK(ulps(r[4], std::erf(double(1e-40f))) <= 3);  // 2 x / sqrt(pi), a subnormal
  CHECK(ulps(r[5], 0.8427007929497149) <= 3);
  CHECK(ulps(r[6], std::erf(double(0.99999994f))) <= 3);
  CHECK(r[7] == -1);
}

TEST_CASE("float exp, tanh, sigmoid and erf: an element alone gives the vectorised loop's bits") {
  // 1001 values: the loop runs in vectors of 4 with a scalar remainder; each
  // element again as a tensor of one runs the scalar code alone.
  std::vector<float> x;
  for (int i = 0; i <= 1000; ++i) x.push_back(float(i - 500) * 0.0371f);
  const Tensor xs = make(x, Shape{int64_t(x.size())});
  for (auto op : {exp_op, tanh_op, sigmoid_op, erf_op}) {
    const std::vector<float> all = vals<float>(op(xs));
    for (size_t i = 0; i < x.size(); ++i) {
      const float one = vals<float>(op(make<float>({x[i]}, {1})))[0];
      REQUIRE(std::bit_cast<uint32_t>(one) == std::bit_cast<uint32_t>(all[i]));
    }
  }
}

TEST_CASE("float exp, tanh, sigmoid and erf: the loops built for this CPU give the baseline build's bits") {
  // The ops run the loop built for the widest vectors this CPU has
  // (backend/simd_clones.h: AVX2 where there is one); this file is built
  // for the x86-64 baseline and calls the same functions one by one.
  std::vector<float> x;
  for (int i = 0; i <= 20000; ++i) x.push_back(float(i - 10000) * 0.00731f);
  const Tensor xs = make(x, Shape{int64_t(x.size())});
  const std::pair<Tensor (*)(const Tensor&), float (*)(float)> pairs[] = {
      {exp_op, float_math::exp}, {tanh_op, float_math::tanh}, {sigmoid_op, float_math::sigmoid}, {erf_op, float_math::erf}};
  for (auto [op, scalar] : pairs) {
    const std::vector<float> all = vals<float>(op(xs));
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) differ += std::bit_cast<uint32_t>(all[i]) != std::bit_cast<uint32_t>(scalar(x[i]));
    CHECK(differ == 0);
  }
}
