// Batch norm's CPU kernels on activations in the nChw16c layout
// (backend/ops/blocked_layout.h): batch_norm_train, batch_norm_backward and
// batch_norm_apply with `blocked`, x held as [N, C/16, H, W, 16]. The same
// formulas as the NCHW kernels of nn_norm.cpp, with the 16 channels of a
// block side by side in each row of 16 values. The work is split into
// (sample, channel block) planes, so that 16 channels still use every core;
// each plane's sums are kept apart and added in sample order, so results do
// not depend on the thread count. Statistics accumulate in double.
#include "backend/ops/batch_norm_blocked.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "backend/ops/blocked_layout.h"
#include "backend/ops/elementwise_math.h"
#include "backend/parallel.h"

namespace nn::backend {
namespace {

using Lanes = std::array<double, kChannelBlock>;

// x [N, CB, H, W, 16]: n samples, cb channel blocks, s = H * W rows of 16.
struct Planes {
  int64_t n = 0, cb = 0, s = 0;
  explicit Planes(const Shape& x) : n(x[0]), cb(x[1]), s(x[2] * x[3]) {}
  int64_t count() const { return n * s; }  // values per channel
  int64_t size() const { return s * kChannelBlock; }
  // Runs f(plane, block) for every plane (n, b), plane = n * cb + b.
  template <class F>
  void each(F f) const {
    parallel_for(n * cb, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, size())),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t p = lo; p < hi; ++p) f(p, p % cb);
                 });
  }
  // Per channel block, the lanes' sums of the planes' partial sums, in sample order.
  std::vector<Lanes> add_up(const std::vector<Lanes>& partial) const {
    std::vector<Lanes> total(size_t(cb), Lanes{});
    for (int64_t p = 0; p < n * cb; ++p)
      for (int64_t l = 0; l < kChannelBlock; ++l) total[size_t(p % cb)][size_t(l)] += partial[size_t(p)][size_t(l)];
    return total;
  }
};

// Per lane, the sum over plane p's rows of f(row, lane).
template <class F>
Lanes plane_sum(const Planes& g, F f) {
  Lanes s{};
  for (int64_t i = 0; i < g.s; ++i)
    for (int64_t l = 0; l < kChannelBlock; ++l) s[size_t(l)] += f(i * kChannelBlock + l, l);
  return s;
}

// y = (x - mean) * scale + beta per channel, in T, as bn_normalize.
template <class T>
void normalize_planes(const Planes& g, const T* x, T* y, const T* mean, const T* scale, const T* beta) {
  g.each([&](int64_t p, int64_t b) {
    const T *xs = x + p * g.size(), *mu = mean + b * kChannelBlock, *sc = scale + b * kChannelBlock,
            *be = beta + b * kChannelBlock;
    T* ys = y + p * g.size();
    for (int64_t i = 0; i < g.s; ++i)
      for (int64_t l = 0; l < kChannelBlock; ++l) {
        const int64_t k = i * kChannelBlock + l;
        ys[k] = (xs[k] - mu[l]) * sc[l] + be[l];
      }
  });
}

template <class T>
std::vector<T> scales(const T* gamma, const T* var, int64_t c, double eps) {
  std::vector<T> s(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) s[size_t(i)] = math::BatchNormScale{eps}(gamma[i], var[i]);
  return s;
}

template <class T>
void train(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  const Planes g(in[0].shape());
  const T *x = in[0].data<T>(), *gamma = in[1].data<T>(), *beta = in[2].data<T>();
  T *mean = out[1].data<T>(), *var = out[2].data<T>();
  const double m = double(g.count());
  std::vector<Lanes> partial(size_t(g.n * g.cb));
  // Two passes (mean, then squared deviations): no cancellation.
  g.each([&](int64_t p, int64_t) {
    const T* xs = x + p * g.size();
    partial[size_t(p)] = plane_sum(g, [&](int64_t k, int64_t) { return double(xs[k]); });
  });
  std::vector<Lanes> mu = g.add_up(partial);
  for (Lanes& b : mu)
    for (double& v : b) v = m > 0 ? v / m : 0.0;
  g.each([&](int64_t p, int64_t b) {
    const T* xs = x + p * g.size();
    const Lanes& u = mu[size_t(b)];
    partial[size_t(p)] = plane_sum(g, [&](int64_t k, int64_t l) {
      const double d = double(xs[k]) - u[size_t(l)];
      return d * d;
    });
  });
  const std::vector<Lanes> q = g.add_up(partial);
  for (int64_t c = 0; c < g.cb * kChannelBlock; ++c) {
    const size_t b = size_t(c / kChannelBlock), l = size_t(c % kChannelBlock);
    mean[c] = T(mu[b][l]);
    var[c] = T(m > 0 ? q[b][l] / m : 0.0);
  }
  const std::vector<T> scale = scales(gamma, var, g.cb * kChannelBlock, eps);
  normalize_planes(g, x, out[0].data<T>(), mean, scale.data(), beta);
}

template <class T>
void apply(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  const Planes g(in[0].shape());
  const std::vector<T> scale = scales(in[1].data<T>(), in[4].data<T>(), g.cb * kChannelBlock, eps);
  normalize_planes(g, in[0].data<T>(), out[0].data<T>(), in[3].data<T>(), scale.data(), in[2].data<T>());
}

// dx = a dy + b x + k per channel, as the NCHW kernel.
template <class T>
void backward(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  const Planes g(in[1].shape());
  const T *dy = in[0].data<T>(), *x = in[1].data<T>(), *gamma = in[2].data<T>();
  const T *mean = in[3].data<T>(), *var = in[4].data<T>();
  T *dx = out[0].data<T>(), *dgamma = out[1].data<T>(), *dbeta = out[2].data<T>();
  const int64_t channels = g.cb * kChannelBlock;
  const double m = double(g.count());
  std::vector<Lanes> partial_dy(size_t(g.n * g.cb)), partial_dyx(size_t(g.n * g.cb));
  g.each([&](int64_t p, int64_t b) {
    const T *ds = dy + p * g.size(), *xs = x + p * g.size(), *mu = mean + b * kChannelBlock;
    partial_dy[size_t(p)] = plane_sum(g, [&](int64_t k, int64_t) { return double(ds[k]); });
    partial_dyx[size_t(p)] =
        plane_sum(g, [&](int64_t k, int64_t l) { return double(ds[k]) * (double(xs[k]) - double(mu[l])); });
  });
  const std::vector<Lanes> sdy = g.add_up(partial_dy), sdyx_raw = g.add_up(partial_dyx);
  std::vector<double> ad(static_cast<size_t>(channels)), bd(ad), kd(ad);
  for (int64_t c = 0; c < channels; ++c) {
    const size_t blk = size_t(c / kChannelBlock), l = size_t(c % kChannelBlock);
    const double mu = double(mean[c]), rstd = 1.0 / std::sqrt(double(var[c]) + eps);
    const double sdyx = sdyx_raw[blk][l] * rstd;  // sum(dy * xhat)
    dbeta[c] = T(sdy[blk][l]), dgamma[c] = T(sdyx);
    if (m == 0) continue;
    ad[size_t(c)] = double(gamma[c]) * rstd;
    bd[size_t(c)] = -ad[size_t(c)] * sdyx * rstd / m;
    kd[size_t(c)] = -ad[size_t(c)] * sdy[blk][l] / m - bd[size_t(c)] * mu;
  }
  if (m == 0) return;
  g.each([&](int64_t p, int64_t b) {
    const T *ds = dy + p * g.size(), *xs = x + p * g.size();
    const double *pa = ad.data() + b * kChannelBlock, *pb = bd.data() + b * kChannelBlock,
                 *pk = kd.data() + b * kChannelBlock;
    T* o = dx + p * g.size();
    for (int64_t i = 0; i < g.s; ++i)
      for (int64_t l = 0; l < kChannelBlock; ++l) {
        const int64_t e = i * kChannelBlock + l;
        o[e] = T(pa[l] * double(ds[e]) + pb[l] * double(xs[e]) + pk[l]);
      }
  });
}

}  // namespace

void bn_train_blocked(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  if (out[0].dtype() == DType::f64) train<double>(in, out, eps);
  else train<float>(in, out, eps);
}

void bn_apply_blocked(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  if (out[0].dtype() == DType::f64) apply<double>(in, out, eps);
  else apply<float>(in, out, eps);
}

void bn_backward_blocked(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  if (out[0].dtype() == DType::f64) backward<double>(in, out, eps);
  else backward<float>(in, out, eps);
}

}  // namespace nn::backend
