// gradcheck: compares the gradients autodiff gives (backend::grad, which
// runs the ops' backward rules) with central finite differences, in f64.
// Reusable for any op with a backward rule; test_gradients.cpp checks every
// differentiable op of the core families with it.
//
// Use:
//   #include "backend/gradcheck.h"   // tests/ is on the include path
//   using namespace nn::backend;
//
//   TEST_CASE("gradient of my_op") {
//     // f: tensors -> a one-element tensor, built from ops.h calls. Inputs
//     // arrive as params (the autodiff pass) or as plain tensors (the
//     // finite-difference passes); f must not care which.
//     auto f = [](const std::vector<Tensor>& in) { return gc::weighted_sum(my_op(in[0], in[1])); };
//     CHECK_GRADS(f, {gc::random({2, 3}), gc::random({3}, 0.5, 2.0)});
//   }
//
// - Float inputs must be f64 (gc::random makes them); each is checked
//   element by element, so keep them small (tens of elements).
// - Integer and bool inputs (ids, masks) are passed through unchanged and
//   must get no gradient.
// - gc::weighted_sum(t) reduces a result with fixed random weights, so a
//   rule that mixes up which output element's gradient goes where fails
//   (a plain sum would give every element the same gradient, 1).
// - Inputs must stay a few eps away from kinks (relu at 0, ties in max,
//   floor at integers): random values do, with probability ~1 - 1e-5.
// - An element passes when |analytic - numeric| <= atol + rtol * max(|a|, |n|);
//   the defaults (eps 1e-6, rtol 1e-6, atol 1e-7) suit functions whose value
//   and gradients are of order 1..100.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/autograd.h"
#include "backend/ops.h"
#include "tensor_test_util.h"

namespace nn::backend::gc {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Options {
  double eps = 1e-6;
  double rtol = 1e-6;
  double atol = 1e-7;
};

struct Result {
  bool ok = true;
  std::string message;  // the first failures, readable in a test log
  double max_abs_err = 0;
};

// A deterministic f64 tensor, uniform in [lo, hi): the same shape and seed
// give the same values, independent of the global generator.
inline Tensor random(const Shape& shape, double lo = -1.0, double hi = 1.0, uint64_t seed = 0) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 12345;
  for (int64_t d : shape) s = s * 31 + uint64_t(d);
  std::mt19937_64 gen(s);
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor t = Tensor::empty(shape, DType::f64);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = u(gen);
  return t;
}

// sum(t * w) with fixed weights in [0.5, 1.5) of t's shape (t cast to f64
// first when it is f32), so each output element has its own gradient.
inline Tensor weighted_sum(const Tensor& t) {
  Tensor w = random(t.shape(), 0.5, 1.5, 777);
  Tensor x = t.dtype() == DType::f64 ? t : astype(t, DType::f64);
  return sum(mul(x, w));
}

inline double value_of(const Fn& f, const std::vector<Tensor>& in) {
  Tensor y = f(in);
  REQUIRE(y.numel() == 1);
  return y.item_double();
}

inline Result check(const Fn& f, const std::vector<Tensor>& inputs, Options o = {}) {
  Result r;
  std::ostringstream msg;
  int failures = 0;
  auto fail = [&](const std::string& s) {
    r.ok = false;
    if (++failures <= 8) msg << s << "\n";
  };

  // Analytic: float inputs become params.
  std::vector<Tensor> params, wrt;
  for (const Tensor& t : inputs) {
    if (is_floating(t.dtype())) {
      REQUIRE_MESSAGE(t.dtype() == DType::f64, "gradcheck inputs must be f64, got " << t.type().str());
      params.push_back(param(t));
      wrt.push_back(params.back());
    } else {
      params.push_back(t);
    }
  }
  Tensor y = f(params);
  if (y.numel() != 1) {
    r.ok = false;
    r.message = "f gave " + y.type().str() + ", not a one-element tensor";
    return r;
  }
  std::vector<Tensor> analytic = grad(y, wrt);

  // Numeric: perturb one element at a time of a copy, grad mode off.
  NoGradGuard no_grad;
  std::vector<Tensor> work;
  for (const Tensor& t : inputs) work.push_back(nntest::copy_of(t));
  size_t k = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!is_floating(inputs[i].dtype())) continue;
    const Tensor& a = analytic[k++];
    if (a.shape() != inputs[i].shape() || a.dtype() != inputs[i].dtype()) {
      fail("input " + std::to_string(i) + ": gradient is " + a.type().str() + ", input is " +
           inputs[i].type().str());
      continue;
    }
    double* x = work[i].data<double>();
    const double* ga = a.data<double>();
    for (int64_t e = 0; e < inputs[i].numel(); ++e) {
      const double saved = x[e];
      x[e] = saved + o.eps;
      const double up = value_of(f, work);
      x[e] = saved - o.eps;
      const double down = value_of(f, work);
      x[e] = saved;
      const double numeric = (up - down) / (2 * o.eps);
      const double err = std::abs(ga[e] - numeric);
      r.max_abs_err = std::max(r.max_abs_err, err);
      if (!(err <= o.atol + o.rtol * std::max(std::abs(ga[e]), std::abs(numeric)))) {
        std::ostringstream s;
        s.precision(12);
        s << "input " << i << " element " << e << ": analytic " << ga[e] << ", numeric " << numeric;
        fail(s.str());
      }
    }
  }
  if (failures > 8) msg << "... and " << failures - 8 << " more\n";
  r.message = msg.str();
  return r;
}

}  // namespace nn::backend::gc

// CHECK_GRADS(f, inputs[, options]): checks f's gradients at the inputs;
// the failures go to the test log. Variadic so that commas in a lambda's
// capture list or an initializer list need no extra parentheses.
#define CHECK_GRADS(...)                                     \
  do {                                                       \
    auto gc_result_ = ::nn::backend::gc::check(__VA_ARGS__); \
    CHECK_MESSAGE(gc_result_.ok, gc_result_.message);        \
  } while (0)
