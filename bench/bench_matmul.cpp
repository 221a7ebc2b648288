// bench_matmul: an N×N f32 matmul through backend::matmul (dispatch, type
// rule, output from the caching pool, one sgemm) against cblas_sgemm called
// directly on the same operands, with the same thread count. Prints GFLOP/s
// of both and their ratio; the goal is a ratio of at least 90%.
//
//   bench_matmul [N=1024] [threads=2] [repetitions=30]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/median.h"
#include "backend/device.h"
#include "backend/ops.h"

using namespace nn::backend;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

using nn::bench::median;

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 1024;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 30;
  // Both paths use the same number of threads: the direct call OpenBLAS's
  // own pool, the backend the OpenMP team over single-threaded OpenBLAS
  // (set_num_threads); each path sets its mode before it runs.
  setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
  set_num_threads(threads);

  Tensor a = Tensor::empty({n, n}, DType::f32), b = Tensor::empty({n, n}, DType::f32);
  for (int64_t i = 0; i < n * n; ++i) {
    a.data<float>()[i] = float((i * 7) % 13) * 0.1f - 0.6f;
    b.data<float>()[i] = float((i * 5) % 11) * 0.1f - 0.5f;
  }
  Tensor direct_out = Tensor::empty({n, n}, DType::f32);
  float* c = direct_out.data<float>();
  auto direct = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f, a.data<float>(), int(n),
                b.data<float>(), int(n), 0.0f, c, int(n));
  };
  Tensor last;
  auto through_backend = [&] { last = matmul(a, b); };

  // Each path runs in its own phase with its threading mode set once:
  // switching OpenBLAS's pool between calls costs more than a product.
  std::vector<double> t_direct, t_backend;
  openblas_set_num_threads(threads);
  for (int i = 0; i < 3; ++i) direct();  // warm-up: threads, caches
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    direct();
    t_direct.push_back(seconds_since(t0));
  }
  set_num_threads(threads);
  for (int i = 0; i < 3; ++i) through_backend();  // warm-up: threads, the pool
  for (int r = 0; r < reps; ++r) {
    last = Tensor();  // give the result back to the pool, as a script's temporaries are
    auto t0 = std::chrono::steady_clock::now();
    through_backend();
    t_backend.push_back(seconds_since(t0));
  }

  double max_diff = 0;
  for (int64_t i = 0; i < n * n; ++i) max_diff = std::max(max_diff, double(std::abs(last.data<float>()[i] - c[i])));

  const double flops = 2.0 * double(n) * double(n) * double(n);
  const double md = median(t_direct), mb = median(t_backend);
  const double bd = *std::min_element(t_direct.begin(), t_direct.end());
  const double bb = *std::min_element(t_backend.begin(), t_backend.end());
  std::printf("matmul f32 %lldx%lld @ %lldx%lld, %d threads, %d repetitions\n", (long long)n, (long long)n,
              (long long)n, (long long)n, threads, reps);
  std::printf("  cblas_sgemm direct : median %8.3f ms  %7.1f GFLOP/s   best %8.3f ms  %7.1f GFLOP/s\n", md * 1e3,
              flops / md * 1e-9, bd * 1e3, flops / bd * 1e-9);
  std::printf("  backend::matmul    : median %8.3f ms  %7.1f GFLOP/s   best %8.3f ms  %7.1f GFLOP/s\n", mb * 1e3,
              flops / mb * 1e-9, bb * 1e3, flops / bb * 1e-9);
  std::printf("  ratio backend/direct: median %.1f%%, best %.1f%% (goal >= 90%%); max |difference| %g\n",
              100.0 * md / mb, 100.0 * bd / bb, max_diff);
  return 0;
}
