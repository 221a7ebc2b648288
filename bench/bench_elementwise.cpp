// Benchmark of elementwise ops: (1) eager overhead per op on tiny tensors,
// `x = x * 1.0001 + 0.0001` on 4 floats through backend::mul/add with weak
// scalars made once; (2) the rate of each kernel (add, mul, relu, relu's
// backward, where, exp, sigmoid, and a graph's fused SGD update) on
// 16M-float tensors against a memcpy, in GB/s of the buffers each moves
// (add: two read, one written; memcpy: one each). Run with OMP_NUM_THREADS=2 for the figures the goals name
// (≤ 0.9 µs per op; memory-bound kernels ≥ 70% of memcpy's rate).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "backend/dispatch.h"
#include "backend/op_registry.h"
#include "backend/ops.h"
#include "backend/ops/fused_program.h"

using namespace nn::backend;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Best of `reps` runs of f, in seconds: the least disturbed run.
template <class F>
double best_of(int reps, F f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

void bench_overhead() {
  const int iters = 20000;
  Tensor x = from_doubles({1, 2, 3, 4}, {4}, DType::f32);
  // Host numbers as the interpreter wraps them: weak 0-d f64 tensors.
  const Tensor scale = scalar(1.0001, DType::f64, true), shift = scalar(0.0001, DType::f64, true);
  for (int i = 0; i < 1000; ++i) x = add(mul(x, scale), shift);  // warm the pool and the caches
  double best = best_of(5, [&] {
    for (int i = 0; i < iters; ++i) x = add(mul(x, scale), shift);
  });
  double us_per_op = best / (2.0 * iters) * 1e6;
  std::printf("eager overhead: %.3f us per op (4-element f32, %d iterations of mul + add; goal <= 0.9)\n", us_per_op,
              iters);
  std::printf("  x[0] = %.6f (keeps the loop honest)\n", double(x.data<float>()[0]));
}

// The fused node graph mode makes of SGD with momentum and weight decay
// (prelude.nn's _sgd_update): m = 0.9 m + (g + 1e-5 p); p -= lr m, with m
// and p written in place, as a graph's state updates are.
Attrs sgd_program(int64_t n) {
  using A = FusedProgram::Arg;
  auto p = std::make_shared<FusedProgram>();
  p->shape = Shape({n});
  p->num_inputs = 4;  // g, p, m, lr
  p->immediates = {1e-5, 0.9};
  auto step = [&](const char* name, A a, A b) { p->steps.push_back({&op(name), {}, {a, b}, DType::f32}); };
  step("mul", {A::Kind::immediate, 0}, {A::Kind::input, 1});
  step("add", {A::Kind::input, 0}, {A::Kind::step, 0});
  step("mul", {A::Kind::input, 2}, {A::Kind::immediate, 1});
  step("add", {A::Kind::step, 2}, {A::Kind::step, 1});
  step("mul", {A::Kind::input, 3}, {A::Kind::step, 3});
  step("sub", {A::Kind::input, 1}, {A::Kind::step, 4});
  p->outputs = {3, 5};
  return Attrs{{"program", ProgramPtr(std::move(p))}};
}

// Each kernel's rate in GB/s (bytes it reads and writes over its time, the
// best of 10 runs) on 16M-element f32 tensors, 64 MiB a buffer, against a
// memcpy of 64 MiB (one thread: glibc's memcpy; the kernels use all).
// ReLU's backward is relu_backward(g, y), what autodiff records for relu.
void bench_bandwidth() {
  const int64_t n = int64_t(1) << 24;
  const double mib = double(n) * sizeof(float);
  const Tensor a = full({n}, 1.5), b = full({n}, -2.5), c = gt(a, b);
  const Tensor param = full({n}, 0.5), momentum = full({n}, 0.0), lr = scalar(0.01, DType::f32);
  const Attrs sgd = sgd_program(n);
  std::vector<float> src(size_t(n), 1.0f), dst(size_t(n), 0.0f);
  const int reps = 10;
  const double t_copy = best_of(reps, [&] { std::memcpy(dst.data(), src.data(), size_t(mib)); });
  const double copy_gbs = 2 * mib / t_copy / 1e9;
  std::printf("memcpy of 64 MiB: %.2f ms, %.2f GB/s (2 buffers moved)\n", t_copy * 1e3, copy_gbs);
  std::printf("%-36s %9s %9s %9s\n", "kernel (16M f32)", "ms", "GB/s", "/memcpy");
  struct Kernel {
    const char* name;
    double buffers;  // 64 MiB buffers moved (a bool buffer is a quarter)
    std::function<Tensor()> run;
  };
  const Kernel kernels[] = {
      {"add(a, b)", 3, [&] { return add(a, b); }},
      {"mul(a, b)", 3, [&] { return mul(a, b); }},
      {"relu(a)", 2, [&] { return relu(a); }},
      {"relu_backward(g, y) (relu's grad)", 3, [&] { return relu_backward(a, b); }},
      {"where(c, a, b)", 3.25, [&] { return where(c, a, b); }},
      {"exp(a)", 2, [&] { return exp(a); }},
      {"sigmoid(a)", 2, [&] { return sigmoid(a); }},
      {"fused SGD update (6 steps, in place)", 5, [&] {
         std::vector<Tensor> in{a, param, momentum, lr}, out{momentum, param};
         op("fused").cpu(in, out, sgd);
         return param;
       }},
  };
  double worst = 1e30;
  for (const Kernel& k : kernels) {
    Tensor out = k.run();  // warm-up: the pool now holds a block of this size
    const double t = best_of(reps, [&] { out = k.run(); });
    const double gbs = k.buffers * mib / t / 1e9;
    std::printf("%-36s %9.2f %9.2f %8.0f%%\n", k.name, t * 1e3, gbs, 100 * gbs / copy_gbs);
    if (std::strncmp(k.name, "exp", 3) && std::strncmp(k.name, "sigmoid", 7)) worst = std::min(worst, gbs / copy_gbs);
  }
  std::printf("memory-bound kernels (all but exp, sigmoid) at >= %.0f%% of memcpy's rate (goal >= 70%%), threads: %d\n",
              100 * worst, num_threads());
  std::printf("  dst[0] = %.1f\n", double(dst[0]));
}

}  // namespace

int main() {
  bench_overhead();
  bench_bandwidth();
  return 0;
}
