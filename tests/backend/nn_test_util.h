// Helpers for the neural-network op tests (test_nn_*.cpp): on top of
// tensor_test_util.h (tensors from host values and back), deterministic
// random tensors, approximate comparison, and a finite-difference check of
// an op's backward rule that calls OpDef::backward directly, so it does not
// depend on the autodiff tape.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/autograd.h"
#include "backend/nn_ops.h"
#include "tensor_test_util.h"

namespace nntest {
using namespace nn::backend;

// Uniform in [lo, hi), deterministic by seed, of any float dtype.
inline Tensor rnd(const Shape& s, DType dt = DType::f64, uint64_t seed = 1, double lo = -1, double hi = 1) {
  std::mt19937_64 gen(seed * 7919 + uint64_t(s.numel()));
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(size_t(s.numel()));
  for (auto& x : v) x = u(gen);
  return from_doubles(v, s, dt);
}

// Every element within atol + rtol |expected|; the first misses are reported.
inline void check_close(const std::vector<double>& got, const std::vector<double>& want, double rtol = 1e-5,
                        double atol = 1e-6) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok = (std::isnan(want[i]) && std::isnan(got[i])) || std::abs(got[i] - want[i]) <= atol + rtol * std::abs(want[i]);
    if (!ok && ++bad <= 5) msg << "[" << i << "] got " << got[i] << ", want " << want[i] << "\n";
  }
  CHECK_MESSAGE(bad == 0, msg.str());
}

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// L = sum_k <W_k, out_k> over the float outputs in `weighted`, with fixed
// weights W_k; the backward rule gets W_k as the gradient of output k (zeros
// for the other outputs, as the tape gives unused outputs).
struct BackwardCheck {
  double eps = 1e-6, rtol = 1e-6, atol = 1e-7;
  std::vector<int> weighted{0};
};

inline void check_backward(const char* name, std::vector<Tensor> inputs, const Attrs& attrs,
                           BackwardCheck o = {}) {
  INFO("backward of ", name);
  const OpDef& d = op(name);
  REQUIRE(bool(d.backward));
  Tensors out = dispatch(d, inputs, attrs);
  std::vector<Tensor> w(out.size());
  for (size_t k = 0; k < out.size(); ++k) {
    bool weighted = std::find(o.weighted.begin(), o.weighted.end(), int(k)) != o.weighted.end();
    w[k] = weighted ? rnd(out[k].shape(), out[k].dtype(), 100 + k, 0.5, 1.5) : zeros(out[k].shape(), out[k].dtype());
  }
  auto loss = [&](const std::vector<Tensor>& in) {
    Tensors y = dispatch(d, in, attrs);
    double l = 0;
    for (int k : o.weighted) {
      std::vector<double> a = vals(y[size_t(k)]), b = vals(w[size_t(k)]);
      for (size_t i = 0; i < a.size(); ++i) l += a[i] * b[i];
    }
    return l;
  };
  std::vector<Tensor> g;
  {
    NoGradGuard no_grad;  // as under the tape
    g = d.backward(BackwardArgs{inputs, out, attrs, w});
  }
  REQUIRE(g.size() == inputs.size());
  std::vector<Tensor> work;
  for (auto& t : inputs) work.push_back(copy_of(t));
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("input ", i, " ", inputs[i].type().str());
    if (!is_floating(inputs[i].dtype())) {
      CHECK_FALSE(g[i].defined());
      continue;
    }
    REQUIRE(inputs[i].dtype() == DType::f64);
    REQUIRE(g[i].defined());
    REQUIRE(g[i].shape() == inputs[i].shape());
    REQUIRE(g[i].dtype() == DType::f64);
    const std::vector<double> ga = vals(g[i]);
    double* x = work[i].data<double>();
    int bad = 0;
    std::ostringstream msg;
    msg.precision(12);
    for (int64_t e = 0; e < inputs[i].numel(); ++e) {
      const double saved = x[e];
      x[e] = saved + o.eps;
      const double up = loss(work);
      x[e] = saved - o.eps;
      const double down = loss(work);
      x[e] = saved;
      const double num = (up - down) / (2 * o.eps);
      if (!(std::abs(num - ga[size_t(e)]) <= o.atol + o.rtol * std::max(std::abs(num), std::abs(ga[size_t(e)]))) &&
          ++bad <= 5)
        msg << "element " << e << ": analytic " << ga[size_t(e)] << ", numeric " << num << "\n";
    }
    CHECK_MESSAGE(bad == 0, msg.str());
  }
}

inline AttrValue pr(int64_t a, int64_t b) { return std::vector<int64_t>{a, b}; }

}  // namespace nntest
