// Batch norm's CPU kernels on activations in the nChw16c layout
// (backend/ops/blocked_layout.h): batch_norm_train, batch_norm_backward and
// batch_norm_apply with `blocked`, x held as [N, C/16, H, W, 16]. The same
// formulas as the NCHW kernels of nn_norm.cpp, with the 16 channels of a
// block side by side in each row of 16 values. The work is split into
// (sample, channel block) planes, so that 16 channels still use every core;
// each plane's sums are kept apart and added in sample order, so results do
// not depend on the thread count. Statistics accumulate in double. The f32
// backward runs through oneDNN where it can (batch_norm_onednn.h).
#include "backend/ops/batch_norm_blocked.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "backend/ops/batch_norm_onednn.h"
#include "backend/ops/blocked_layout.h"
#include "backend/ops/elementwise_math.h"
#include "backend/ops/elementwise.h"
#include "backend/parallel.h"
#include "backend/simd_clones.h"

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

// The loops over one plane's rows of 16 lanes, each lane a channel. Their
// 16-wide bodies with local accumulators map lanes onto vector registers;
// the f32 forms are built for AVX2 too (backend/simd_clones.h: the same bits).
template <class T>
inline void sum_rows_of(const T* x, int64_t rows, double* out) {
  double s[kChannelBlock] = {};
  for (int64_t i = 0; i < rows; ++i, x += kChannelBlock)
    for (int l = 0; l < kChannelBlock; ++l) s[l] += double(x[l]);
  std::copy(s, s + kChannelBlock, out);
}

// Per lane, the sum of (x - mu)^2.
template <class T>
inline void square_dev_rows_of(const T* x, int64_t rows, const double* mu, double* out) {
  double m[kChannelBlock], s[kChannelBlock] = {};
  std::copy(mu, mu + kChannelBlock, m);
  for (int64_t i = 0; i < rows; ++i, x += kChannelBlock)
    for (int l = 0; l < kChannelBlock; ++l) s[l] += (double(x[l]) - m[l]) * (double(x[l]) - m[l]);
  std::copy(s, s + kChannelBlock, out);
}

// Per lane, the sums of dy and of dy (x - mu).
template <class T>
inline void grad_sums_rows_of(const T* dy, const T* x, int64_t rows, const T* mu, double* sdy, double* sdyx) {
  double m[kChannelBlock], a[kChannelBlock] = {}, b[kChannelBlock] = {};
  for (int l = 0; l < kChannelBlock; ++l) m[l] = double(mu[l]);
  for (int64_t i = 0; i < rows; ++i, dy += kChannelBlock, x += kChannelBlock)
    for (int l = 0; l < kChannelBlock; ++l) {
      a[l] += double(dy[l]);
      b[l] += double(dy[l]) * (double(x[l]) - m[l]);
    }
  std::copy(a, a + kChannelBlock, sdy);
  std::copy(b, b + kChannelBlock, sdyx);
}

// y = (x - mu) * scale + beta in T, as bn_normalize.
template <class T>
inline void normalize_rows_of(const T* x, T* y, int64_t rows, const T* mu, const T* scale, const T* beta) {
  T m[kChannelBlock], sc[kChannelBlock], be[kChannelBlock];
  std::copy(mu, mu + kChannelBlock, m);
  std::copy(scale, scale + kChannelBlock, sc);
  std::copy(beta, beta + kChannelBlock, be);
  for (int64_t i = 0; i < rows; ++i, x += kChannelBlock, y += kChannelBlock)
    for (int l = 0; l < kChannelBlock; ++l) y[l] = (x[l] - m[l]) * sc[l] + be[l];
}

// dx = a dy + b (x - mean) + k in T, as the NCHW kernel.
template <class T>
inline void dx_rows_of(const T* dy, const T* x, T* dx, int64_t rows, const T* pa, const T* pb, const T* pk,
                       const T* pmu) {
  T a[kChannelBlock], b[kChannelBlock], k[kChannelBlock], mu[kChannelBlock];
  std::copy(pa, pa + kChannelBlock, a);
  std::copy(pb, pb + kChannelBlock, b);
  std::copy(pk, pk + kChannelBlock, k);
  std::copy(pmu, pmu + kChannelBlock, mu);
  for (int64_t i = 0; i < rows; ++i, dy += kChannelBlock, x += kChannelBlock, dx += kChannelBlock)
    for (int l = 0; l < kChannelBlock; ++l) dx[l] = a[l] * dy[l] + b[l] * (x[l] - mu[l]) + k[l];
}

NN_SIMD_CLONES NN_FLATTEN void sum_rows(const float* x, int64_t rows, double* out) { sum_rows_of(x, rows, out); }
NN_SIMD_CLONES NN_FLATTEN void square_dev_rows(const float* x, int64_t rows, const double* mu, double* out) {
  square_dev_rows_of(x, rows, mu, out);
}
NN_SIMD_CLONES NN_FLATTEN void grad_sums_rows(const float* dy, const float* x, int64_t rows, const float* mu,
                                              double* sdy, double* sdyx) {
  grad_sums_rows_of(dy, x, rows, mu, sdy, sdyx);
}
NN_SIMD_CLONES NN_FLATTEN void normalize_rows(const float* x, float* y, int64_t rows, const float* mu,
                                              const float* scale, const float* beta) {
  normalize_rows_of(x, y, rows, mu, scale, beta);
}
NN_SIMD_CLONES NN_FLATTEN void dx_rows(const float* dy, const float* x, float* dx, int64_t rows, const float* a,
                                       const float* b, const float* k, const float* mu) {
  dx_rows_of(dy, x, dx, rows, a, b, k, mu);
}
void sum_rows(const double* x, int64_t rows, double* out) { sum_rows_of(x, rows, out); }
void square_dev_rows(const double* x, int64_t rows, const double* mu, double* out) {
  square_dev_rows_of(x, rows, mu, out);
}
void grad_sums_rows(const double* dy, const double* x, int64_t rows, const double* mu, double* sdy, double* sdyx) {
  grad_sums_rows_of(dy, x, rows, mu, sdy, sdyx);
}
void normalize_rows(const double* x, double* y, int64_t rows, const double* mu, const double* scale,
                    const double* beta) {
  normalize_rows_of(x, y, rows, mu, scale, beta);
}
void dx_rows(const double* dy, const double* x, double* dx, int64_t rows, const double* a, const double* b,
             const double* k, const double* mu) {
  dx_rows_of(dy, x, dx, rows, a, b, k, mu);
}

template <class T>
void normalize_planes(const Planes& g, const T* x, T* y, const T* mean, const T* scale, const T* beta) {
  g.each([&](int64_t p, int64_t b) {
    const int64_t c = b * kChannelBlock;
    normalize_rows(x + p * g.size(), y + p * g.size(), g.s, mean + c, scale + c, beta + c);
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
  g.each([&](int64_t p, int64_t) { sum_rows(x + p * g.size(), g.s, partial[size_t(p)].data()); });
  std::vector<Lanes> mu = g.add_up(partial);
  for (Lanes& b : mu)
    for (double& v : b) v = m > 0 ? v / m : 0.0;
  g.each([&](int64_t p, int64_t b) {
    square_dev_rows(x + p * g.size(), g.s, mu[size_t(b)].data(), partial[size_t(p)].data());
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

// dx = a dy + b (x - mean) + k per channel, as the NCHW kernel.
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
    grad_sums_rows(dy + p * g.size(), x + p * g.size(), g.s, mean + b * kChannelBlock, partial_dy[size_t(p)].data(),
                   partial_dyx[size_t(p)].data());
  });
  const std::vector<Lanes> sdy = g.add_up(partial_dy), sdyx_raw = g.add_up(partial_dyx);
  std::vector<T> ad(static_cast<size_t>(channels)), bd(ad), kd(ad);
  for (int64_t c = 0; c < channels; ++c) {
    const size_t blk = size_t(c / kChannelBlock), l = size_t(c % kChannelBlock);
    const double rstd = 1.0 / std::sqrt(double(var[c]) + eps);
    const double sdyx = sdyx_raw[blk][l] * rstd;  // sum(dy * xhat)
    dbeta[c] = T(sdy[blk][l]), dgamma[c] = T(sdyx);
    if (m == 0) continue;
    const double a = double(gamma[c]) * rstd;
    ad[size_t(c)] = T(a);
    bd[size_t(c)] = T(-a * sdyx * rstd / m);
    kd[size_t(c)] = T(-a * sdy[blk][l] / m);
  }
  if (m == 0) return;
  g.each([&](int64_t p, int64_t b) {
    const int64_t c = b * kChannelBlock;
    dx_rows(dy + p * g.size(), x + p * g.size(), dx + p * g.size(), g.s, ad.data() + c, bd.data() + c, kd.data() + c,
            mean + c);
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
  if (out[0].dtype() == DType::f64) return backward<double>(in, out, eps);
  auto f = [](const Tensor& t) { return t.data<float>(); };
  if (!onednn_batch_norm_backward(plain_shape(in[1].shape()), eps, f(in[0]), f(in[1]), f(in[2]), f(in[3]), f(in[4]),
                                  out[0].data<float>(), out[1].data<float>(), out[2].data<float>()))
    backward<float>(in, out, eps);
}

}  // namespace nn::backend
