// Helpers of the GPU tests: the GPU under test (each test case returns at
// once, saying so, where there is none), random inputs made on the CPU, and
// the one comparison every test makes: run a function on CPU tensors and on
// GPU copies of them, and check that every output agrees (integers and bools
// exactly, floats within a tolerance, NaN with NaN).
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "backend/autograd.h"
#include "backend/nn_ops.h"

namespace nngpu {
using namespace nn::backend;

// The GPU, or null; the first call without one prints why the GPU tests skip.
inline Device* gpu() {
  static Device* d = [] {
    Device* g = find_device("cuda");
    if (!g)
      std::printf("GPU tests skipped: %s\n", device_unavailable_reason("cuda").c_str());
    return g;
  }();
  return d;
}

#define NN_NEED_GPU()            \
  do {                           \
    if (!::nngpu::gpu()) return; \
  } while (0)

inline Tensor on(Device* d, const Tensor& t) { return t.defined() ? to_device(t, d) : t; }
inline Tensor on_cpu(const Tensor& t) { return on(cpu_device(), t); }

// Uniform values in [lo, hi) of the given dtype, from a generator seeded
// here (the global one is left where it was).
inline Tensor random(const Shape& s, double lo = -2, double hi = 2, DType dtype = DType::f32, uint64_t seed = 7) {
  const RngState saved = rng_state();
  manual_seed(seed);
  DeviceScope cpu(cpu_device());
  Tensor u = rand(s, DType::f64);
  set_rng_state(saved);
  return astype(add(mul(u, scalar(hi - lo, DType::f64, true)), scalar(lo, DType::f64, true)), dtype);
}

// Integers in [lo, hi).
inline Tensor random_ints(const Shape& s, int64_t lo, int64_t hi, DType dtype = DType::i64, uint64_t seed = 11) {
  const RngState saved = rng_state();
  manual_seed(seed);
  DeviceScope cpu(cpu_device());
  Tensor t = randint(lo, hi, s, dtype);
  set_rng_state(saved);
  return t;
}

// a (from the CPU) and b (from the GPU) hold the same values.
inline void check_same(const Tensor& a, const Tensor& b_gpu, double rtol, double atol, const std::string& what) {
  INFO(what);
  REQUIRE(b_gpu.defined() == a.defined());
  if (!a.defined()) return;
  CHECK(b_gpu.device() == gpu());
  Tensor b = on_cpu(b_gpu);
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.shape() == b.shape());
  Tensor x = astype(a, DType::f64), y = astype(b, DType::f64);
  const double *p = x.data<double>(), *q = y.data<double>();
  const bool exact = !is_floating(a.dtype());
  int shown = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const bool ok = exact ? p[i] == q[i]
                          : (p[i] == q[i] || (std::isnan(p[i]) && std::isnan(q[i])) ||
                             std::abs(p[i] - q[i]) <= atol + rtol * std::abs(p[i]));
    if (!ok && shown++ < 5) {
      INFO("element " << i << ": cpu " << p[i] << ", gpu " << q[i]);
      CHECK(ok);
    }
  }
  CHECK(shown == 0);
}

// ||b - a|| / ||a|| of a (from the CPU) and b (from the GPU), in f64.
inline double relative_error(const Tensor& a, const Tensor& b_gpu) {
  const Tensor ref = astype(a, DType::f64), got = astype(on_cpu(b_gpu), DType::f64);
  return norm(sub(got, ref)).item_double() / norm(ref).item_double();
}

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// f on cpu_in with the CPU as the default device, then on gpu_in with the
// GPU as the default device (so that creation ops inside f make GPU
// tensors); the random generator starts both runs at the same position.
inline std::pair<std::vector<Tensor>, std::vector<Tensor>> run_on_both(const Fn& f, const std::vector<Tensor>& cpu_in,
                                                                       const std::vector<Tensor>& gpu_in) {
  const RngState start = rng_state();
  std::vector<Tensor> a, b;
  {
    DeviceScope scope(cpu_device());
    a = f(cpu_in);
  }
  set_rng_state(start);
  {
    DeviceScope scope(gpu());
    b = f(gpu_in);
  }
  REQUIRE(a.size() == b.size());
  return {a, b};
}

// f on the CPU inputs and on their GPU copies: every output agrees.
inline void same_on_gpu(const std::string& what, const Fn& f, const std::vector<Tensor>& cpu_in, double rtol = 1e-5,
                        double atol = 1e-6) {
  std::vector<Tensor> gpu_in;
  for (const Tensor& t : cpu_in) gpu_in.push_back(on(gpu(), t));
  const auto [a, b] = run_on_both(f, cpu_in, gpu_in);
  for (size_t i = 0; i < a.size(); ++i) check_same(a[i], b[i], rtol, atol, what + ", output " + std::to_string(i));
}

// The loss f gives and its gradients with respect to the float inputs, on
// both devices (backward rules run on the GPU as they do on the CPU).
inline void same_grads_on_gpu(const std::string& what, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                              const std::vector<Tensor>& cpu_in, double rtol = 1e-4, double atol = 1e-5) {
  same_on_gpu(
      what,
      [&](const std::vector<Tensor>& in) {
        std::vector<Tensor> ps, wrt;
        for (const Tensor& t : in) {
          ps.push_back(is_floating(t.dtype()) ? param(t) : t);
          if (is_floating(t.dtype())) wrt.push_back(ps.back());
        }
        Tensor loss = f(ps);
        std::vector<Tensor> out{loss};
        for (Tensor& g : grad(loss, wrt)) out.push_back(g);
        return out;
      },
      cpu_in, rtol, atol);
}

// A loss that weighs each element differently, so that gradients routed
// to the wrong element show (a plain sum gives every element gradient 1).
inline Tensor weighted_sum(const Tensor& y) {
  Tensor w = add(mul(astype(arange(0, double(y.numel()), 1, DType::f64), y.dtype()),
                     scalar(0.37, DType::f64, true)),
                 scalar(0.5, DType::f64, true));
  return sum(mul(y, reshape(sin(w), y.shape().vec())));
}

// The message of the Error f throws, "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace nngpu
