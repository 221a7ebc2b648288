// bench_norm_pool: batch norm and max pooling, nn's kernels against oneDNN's
// primitives on the shapes of the bench models: the figures behind which of
// them nn runs (backend/ops/batch_norm_onednn.h, docs/neural-ops.md).
//
// Batch norm on ResNet-8's activations (batch 32): the registry ops as nn
// runs them (NCHW, and nChw16c as in its graphs, with oneDNN on and off),
// and oneDNN's primitive called directly in both layouts. Max pooling 2x2
// on LeNet's (batch 64): nn's op, and oneDNN's primitive (training form,
// with its workspace) in NCHW and nChw16c. Each figure is the median of
// many runs, in microseconds.
//
//   bench_norm_pool [threads=2] [repetitions=200]
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "backend/dispatch.h"
#include "backend/nn_ops.h"
#include "backend/onednn.h"
#include "backend/op_registry.h"
#include "common/median.h"

using namespace nn::backend;
using dnnl::memory;
using tag = memory::format_tag;

namespace {

int repetitions = 200;

double median_us(const std::function<void()>& f) {
  for (int i = 0; i < 5; ++i) f();  // warm-up: primitives, caches, the pool
  std::vector<double> t;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return nn::bench::median(t);
}

dnnl::engine engine(dnnl::engine::kind::cpu, 0);
dnnl::stream stream(engine);

memory filled(const memory::desc& d, float scale) {
  memory m(d, engine);
  float* p = static_cast<float*>(m.get_data_handle());
  for (size_t i = 0; i < d.get_size() / sizeof(float); ++i) p[i] = float((i * 7919) % 97) * scale - 0.4f;
  return m;
}

// oneDNN's batch norm, forward (training) and backward, in layout t.
std::pair<double, double> onednn_batch_norm(const memory::dims& d, tag t) {
  const memory::desc act(d, memory::data_type::f32, t);
  const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  const dnnl::batch_normalization_forward::primitive_desc fpd({dnnl::prop_kind::forward_training, act, 1e-5f, flags},
                                                              engine);
  const dnnl::batch_normalization_backward::primitive_desc bpd({dnnl::prop_kind::backward, act, act, 1e-5f, flags},
                                                               engine, fpd);
  memory x = filled(act, 0.01f), dy = filled(act, 0.02f), y(act, engine), dx(act, engine);
  memory scale = filled(fpd.weights_desc(), 0.01f), shift = filled(fpd.weights_desc(), 0.01f);
  memory mean(fpd.mean_desc(), engine), var(fpd.variance_desc(), engine);
  memory dscale(bpd.diff_weights_desc(), engine), dshift(bpd.diff_weights_desc(), engine);
  const dnnl::batch_normalization_forward forward(fpd);
  const dnnl::batch_normalization_backward backward(bpd);
  const double f = median_us([&] {
    forward.execute(stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}, {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift},
                             {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}});
    stream.wait();
  });
  const double b = median_us([&] {
    backward.execute(stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_SCALE, scale},
                              {DNNL_ARG_SHIFT, shift}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var},
                              {DNNL_ARG_DIFF_SRC, dx}, {DNNL_ARG_DIFF_SCALE, dscale}, {DNNL_ARG_DIFF_SHIFT, dshift}});
    stream.wait();
  });
  return {f, b};
}

// nn's batch_norm_train and batch_norm_backward ops, blocked or NCHW.
std::pair<double, double> nn_batch_norm(int64_t n, int64_t c, int64_t h, bool blocked) {
  const Shape s = blocked ? Shape{n, c / 16, h, h, 16} : Shape{n, c, h, h};
  const Tensor x = randn(s), dy = randn(s), gamma = ones({c}), beta = zeros({c});
  Attrs a{{"eps", 1e-5}};
  if (blocked) a.set("blocked", true);
  Tensors stats;
  const double f = median_us([&] { stats = dispatch(op("batch_norm_train"), std::vector<Tensor>{x, gamma, beta}, a); });
  const double b = median_us(
      [&] { dispatch(op("batch_norm_backward"), std::vector<Tensor>{dy, x, gamma, stats[1], stats[2]}, a); });
  return {f, b};
}

void batch_norm(int64_t n, int64_t c, int64_t h) {
  const auto plain = nn_batch_norm(n, c, h, false);
  set_onednn_enabled(false);
  const auto blocked_nn = nn_batch_norm(n, c, h, true);
  set_onednn_enabled(true);
  const auto blocked = nn_batch_norm(n, c, h, true);
  const auto dnnl_plain = onednn_batch_norm({n, c, h, h}, tag::nchw);
  const auto dnnl_blocked = onednn_batch_norm({n, c, h, h}, tag::nChw16c);
  char label[64];
  std::snprintf(label, sizeof label, "batch norm %ldx%ldx%ldx%ld", long(n), long(c), long(h), long(h));
  std::printf("%-26s forward:  nn NCHW %6.1f, nn blocked %6.1f, oneDNN NCHW %6.1f, oneDNN blocked %6.1f us\n", label,
              plain.first, blocked.first, dnnl_plain.first, dnnl_blocked.first);
  std::printf("%-26s backward: nn NCHW %6.1f, nn blocked %6.1f (oneDNN off: %6.1f), oneDNN NCHW %6.1f, "
              "oneDNN blocked %6.1f us\n",
              "", plain.second, blocked.second, blocked_nn.second, dnnl_plain.second, dnnl_blocked.second);
}

// oneDNN's 2x2 max pooling (training: it keeps a workspace for the backward).
std::pair<double, double> onednn_max_pool(const memory::dims& d, tag t) {
  const memory::dims od{d[0], d[1], d[2] / 2, d[3] / 2};
  const memory::desc src(d, memory::data_type::f32, t), dst(od, memory::data_type::f32, t);
  const memory::dims k{2, 2}, none{0, 0};
  const dnnl::pooling_v2_forward::primitive_desc fpd(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::pooling_max, src, dst, k, k, none, none, none}, engine);
  const dnnl::pooling_v2_backward::primitive_desc bpd(
      {dnnl::algorithm::pooling_max, src, dst, k, k, none, none, none}, engine, fpd);
  memory x = filled(src, 0.01f), y(dst, engine), dy = filled(dst, 0.02f), dx(src, engine);
  memory ws(fpd.workspace_desc(), engine);
  const dnnl::pooling_v2_forward forward(fpd);
  const dnnl::pooling_v2_backward backward(bpd);
  const double f = median_us([&] {
    forward.execute(stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}, {DNNL_ARG_WORKSPACE, ws}});
    stream.wait();
  });
  const double b = median_us([&] {
    backward.execute(stream, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, dx}, {DNNL_ARG_WORKSPACE, ws}});
    stream.wait();
  });
  return {f, b};
}

// nn's max_pool2d and its backward, blocked (nChw16c) or NCHW.
std::pair<double, double> nn_max_pool(int64_t n, int64_t c, int64_t h, bool blocked) {
  const Tensor x = randn(blocked ? Shape{n, c / 16, h, h, 16} : Shape{n, c, h, h});
  Attrs a{{"kernel", std::vector<int64_t>{2, 2}}, {"stride", std::vector<int64_t>{2, 2}},
          {"padding", std::vector<int64_t>{0, 0}}};
  if (blocked) a.set("blocked", true);
  Tensors y;
  const double f = median_us([&] { y = dispatch(op("max_pool2d"), std::vector<Tensor>{x}, a); });
  Attrs ab = a;
  ab.set("input_shape", Shape{n, c, h, h});
  const Tensor dy = randn(y[0].shape());
  const double b = median_us([&] { dispatch(op("max_pool2d_backward"), std::vector<Tensor>{dy, y[1]}, ab); });
  return {f, b};
}

void max_pool(int64_t n, int64_t c, int64_t h) {
  const auto nn_plain = nn_max_pool(n, c, h, false);
  const auto nn_blocked = c % 16 == 0 ? nn_max_pool(n, c, h, true) : std::pair<double, double>{NAN, NAN};
  const auto plain = onednn_max_pool({n, c, h, h}, tag::nchw);
  const auto blocked = onednn_max_pool({n, c, h, h}, tag::nChw16c);
  char label[64];
  std::snprintf(label, sizeof label, "max pool 2x2 %ldx%ldx%ldx%ld", long(n), long(c), long(h), long(h));
  std::printf("%-26s forward:  nn NCHW %6.1f, nn blocked %6.1f, oneDNN NCHW %6.1f, oneDNN blocked %6.1f us\n",
              label, nn_plain.first, nn_blocked.first, plain.first, blocked.first);
  std::printf("%-26s backward: nn NCHW %6.1f, nn blocked %6.1f, oneDNN NCHW %6.1f, oneDNN blocked %6.1f us\n", "",
              nn_plain.second, nn_blocked.second, plain.second, blocked.second);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  if (argc > 2) repetitions = std::atoi(argv[2]);
  omp_set_num_threads(threads);
  if (!onednn_enabled()) {
    std::fprintf(stderr, "bench_norm_pool: oneDNN is off (NN_ONEDNN=0?) or could not be opened\n");
    return 1;
  }
  std::printf("bench_norm_pool: %d threads, median of %d runs\n", threads, repetitions);
  std::printf("== batch norm, ResNet-8's activations (batch 32)\n");
  batch_norm(32, 16, 32);
  batch_norm(32, 32, 16);
  batch_norm(32, 64, 8);
  std::printf("== max pooling, LeNet's (batch 64)\n");
  max_pool(64, 20, 24);
  max_pool(64, 50, 8);
  std::printf("== max pooling, the digits CNN's (batch 64)\n");
  max_pool(64, 16, 8);
  max_pool(64, 32, 4);
  return 0;
}
