// Benchmark of elementwise ops: (1) eager overhead per op on tiny tensors,
// `x = x * 1.0001 + 0.0001` on 4 floats through backend::mul/add with weak
// scalars made once; (2) bandwidth of adding two 16M-float tensors against
// a memcpy of the same bytes (add moves 3 buffers: two read, one written;
// memcpy moves 2). Run with OMP_NUM_THREADS=2 for the figures the goals name
// (≤ 0.9 µs per op; add ≥ 70% of memcpy's rate).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "backend/ops.h"

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

void bench_bandwidth() {
  const int64_t n = int64_t(1) << 24;  // 16M floats, 64 MiB a buffer
  const double mib = double(n) * sizeof(float);
  Tensor a = full({n}, 1.5), b = full({n}, 2.5);
  Tensor out = add(a, b);  // warm-up: the pool now holds a block of this size

  const int reps = 10;
  double t_add = best_of(reps, [&] { out = add(a, b); });
  std::vector<float> src(size_t(n), 1.0f), dst(size_t(n), 0.0f);
  double t_copy = best_of(reps, [&] { std::memcpy(dst.data(), src.data(), size_t(mib)); });

  double add_gbs = 3 * mib / t_add / 1e9, copy_gbs = 2 * mib / t_copy / 1e9;
  std::printf("add of two 16M-element f32 tensors: %.2f ms, %.2f GB/s (3 buffers moved)\n", t_add * 1e3, add_gbs);
  std::printf("memcpy of 64 MiB:                   %.2f ms, %.2f GB/s (2 buffers moved)\n", t_copy * 1e3, copy_gbs);
  std::printf("add / memcpy rate: %.0f%% (goal >= 70%%), threads: %d\n", 100 * add_gbs / copy_gbs, num_threads());
  std::printf("  out[0] = %.1f, dst[0] = %.1f\n", out.data<float>()[0], double(dst[0]));
}

}  // namespace

int main() {
  bench_overhead();
  bench_bandwidth();
  return 0;
}
