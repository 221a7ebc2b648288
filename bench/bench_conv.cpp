// bench_conv: the two convolutions of the CNN benchmark (LeNet-like: conv
// 20@5x5 on 1x28x28, maxpool 2, conv 50@5x5 on 20x12x12, maxpool 2, fc 500,
// fc 10; batch 64) through the registry ops: forward, the weight and bias
// gradients, and the input gradient, each the median of many runs. Then a
// whole eager training step of that network (forward, softmax cross-entropy,
// backend::grad over the tape, SGD update), the figure to hold against
// PyTorch's CPU step on the same threads (~16.6 ms on 2 threads).
//
//   bench_conv [threads=2] [batch=64] [repetitions=50]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backend/autograd.h"
#include "backend/device.h"
#include "backend/nn_ops.h"

using namespace nn::backend;

namespace {

double median_ms(int reps, const std::function<void()>& f) {
  for (int i = 0; i < 3; ++i) f();  // warm-up: threads, caches, the pool
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Attrs conv_attrs() {
  return Attrs{{"stride", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{0, 0}},
               {"dilation", std::vector<int64_t>{1, 1}}, {"groups", int64_t(1)}};
}

void bench_layer(const char* name, int64_t n, int64_t c, int64_t hw, int64_t o, int64_t k, int reps) {
  Tensor x = randn({n, c, hw, hw}), w = mul(randn({o, c, k, k}), scalar(0.1, DType::f32)), b = zeros({o});
  Tensor y = conv2d(x, w, b);
  Tensor dy = randn(y.shape());
  Attrs ai = conv_attrs(), aw = conv_attrs();
  ai.set("input_shape", x.shape());
  aw.set("weight_shape", w.shape());
  const OpDef &di = op("conv2d_backward_input"), &dw = op("conv2d_backward_weight");
  const double fwd = median_ms(reps, [&] { y = conv2d(x, w, b); });
  const double bw = median_ms(reps, [&] {
    call(dw, {dy, x}, aw);
    sum(dy, std::vector<int64_t>{0, 2, 3});
  });
  const double bi = median_ms(reps, [&] { call(di, {dy, w}, ai); });
  const double gflop = 2.0 * double(y.numel()) * double(c * k * k) * 1e-9;  // one pass: multiply-adds x 2
  std::printf("%-34s forward %7.3f ms (%5.1f GFLOP/s)  weight+bias grad %7.3f ms  input grad %7.3f ms\n", name, fwd,
              gflop / fwd * 1e3, bw, bi);
}

// One eager SGD step of the CNN; returns the loss.
struct Cnn {
  std::vector<Tensor> p;  // conv1 w, b, conv2 w, b, fc1 w, b, fc2 w, b
  Cnn() {
    auto init = [](Shape s, int64_t fan_in) { return mul(randn(s), scalar(1.0 / std::sqrt(double(fan_in)), DType::f32)); };
    p = {init({20, 1, 5, 5}, 25),  zeros({20}), init({50, 20, 5, 5}, 500), zeros({50}),
         init({800, 500}, 800),    zeros({500}), init({500, 10}, 500),     zeros({10})};
    for (auto& t : p) t = param(t);
  }
  Tensor step(const Tensor& x, const Tensor& y, double lr) {
    Tensor h = max_pool2d(relu(conv2d(x, p[0], p[1])), pair(2));
    h = max_pool2d(relu(conv2d(h, p[2], p[3])), pair(2));
    h = relu(add(matmul(reshape(h, {h.shape()[0], -1}), p[4]), p[5]));
    Tensor loss = softmax_cross_entropy(add(matmul(h, p[6]), p[7]), y);
    std::vector<Tensor> g = grad(loss, p);
    NoGradGuard no_grad;
    for (size_t i = 0; i < p.size(); ++i) {
      Tensor upd = sub(detach(p[i]), mul(g[i], scalar(lr, DType::f32, true)));
      std::copy(upd.data<float>(), upd.data<float>() + upd.numel(), p[i].data<float>());
    }
    return loss;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int64_t batch = argc > 2 ? std::atoll(argv[2]) : 64;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 50;
  setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
  set_num_threads(threads);
  manual_seed(0);
  std::printf("bench_conv: %d threads, batch %lld, median of %d runs\n", threads, (long long)batch, reps);
  bench_layer("conv1 1x28x28 -> 20@5x5 (24x24)", batch, 1, 28, 20, 5, reps);
  bench_layer("conv2 20x12x12 -> 50@5x5 (8x8)", batch, 20, 12, 50, 5, reps);

  Cnn net;
  Tensor x = rand({batch, 1, 28, 28}), y = randint(0, 10, {batch});
  Tensor loss;
  const double step = median_ms(reps, [&] { loss = net.step(x, y, 0.01); });
  std::printf("CNN training step (eager, tape)    %7.3f ms  (loss %.4f; PyTorch CPU, 2 threads: ~16.6 ms)\n", step,
              loss.item_double());
  // The same step with OpenBLAS's own thread pool held at one thread, so
  // that every op's parallelism comes from the one OpenMP team (the conv
  // kernels already run that way). With two pools on few cores, each pool's
  // idle threads spin while the other works and steal its cores; this row
  // shows what that costs.
  openblas_set_num_threads(1);
  const double step1 = median_ms(reps, [&] { loss = net.step(x, y, 0.01); });
  std::printf("  same, OpenBLAS pool at 1 thread  %7.3f ms\n", step1);
  openblas_set_num_threads(threads);
  return 0;
}
