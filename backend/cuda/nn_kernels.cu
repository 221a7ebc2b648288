// Neural-network kernels (nn_kernels.h), written to give the CPU kernels'
// results (backend/ops/nn_softmax.cpp, nn_norm.cpp): the same formulas,
// double accumulators and NaN rules. Where the CPU rounds an intermediate
// to the tensor's type, M (math_t: float for f16 and bf16) stands for it.
// A row is one block of threads, a channel of batch norm is split over
// several; partial sums meet in a fixed tree and a fixed order.
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/nn_kernels.h"
#include "backend/ops/elementwise_math.h"

namespace nn::backend::cuda {
namespace {

constexpr int kRowThreads = 256;
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- softmax ----
// One block per line when lines are contiguous (inner == 1).
template <class T, bool Log>
__global__ void softmax_rows(const T* x, T* y, int64_t n) {
  __shared__ double shared[32];
  using M = math_t<T>;
  const T* xr = x + int64_t(blockIdx.x) * n;
  T* yr = y + int64_t(blockIdx.x) * n;
  double m = -kInf;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = nan_max(m, double(widen(xr[i])));
  m = block_max(m, shared);
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += double(M(exp(M(double(widen(xr[i])) - m))));
  s = block_sum(s, shared);
  if constexpr (Log) {
    const double log_s = log(s);  // (x - m) - log s: m + log s rounds to m for a huge m
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = narrow<T>((double(widen(xr[i])) - m) - log_s);
  } else {
    const double r = 1.0 / s;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      yr[i] = narrow<T>(double(M(exp(M(double(widen(xr[i])) - m)))) * r);
  }
}

// One thread per (outer, inner) line otherwise.
template <class T, bool Log>
__global__ void softmax_lines(const T* x, T* y, AxisLaunch g) {
  using M = math_t<T>;
  const int64_t lines = g.outer * g.inner;
  for (int64_t line = global_index(); line < lines; line += grid_stride()) {
    const int64_t o = line / g.inner, j = line % g.inner;
    const T* xl = x + o * g.n * g.inner + j;
    T* yl = y + o * g.n * g.inner + j;
    double m = -kInf;
    for (int64_t i = 0; i < g.n; ++i) m = nan_max(m, double(widen(xl[i * g.inner])));
    double s = 0;
    for (int64_t i = 0; i < g.n; ++i) s += double(M(exp(M(double(widen(xl[i * g.inner])) - m))));
    if constexpr (Log) {
      const double log_s = log(s);
      for (int64_t i = 0; i < g.n; ++i) yl[i * g.inner] = narrow<T>((double(widen(xl[i * g.inner])) - m) - log_s);
    } else {
      const double r = 1.0 / s;
      for (int64_t i = 0; i < g.n; ++i)
        yl[i * g.inner] = narrow<T>(double(M(exp(M(double(widen(xl[i * g.inner])) - m)))) * r);
    }
  }
}

template <class T, bool Log>
__global__ void softmax_grad_rows(const T* dy, const T* y, T* dx, int64_t n) {
  __shared__ double shared[32];
  const int64_t base = int64_t(blockIdx.x) * n;
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    s += Log ? double(widen(dy[base + i])) : double(widen(dy[base + i])) * double(widen(y[base + i]));
  s = block_sum(s, shared);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const int64_t k = base + i;
    if constexpr (Log) dx[k] = narrow<T>(double(widen(dy[k])) - exp(double(widen(y[k]))) * s);
    else dx[k] = narrow<T>(double(widen(y[k])) * (double(widen(dy[k])) - s));
  }
}

template <class T, bool Log>
__global__ void softmax_grad_lines(const T* dy, const T* y, T* dx, AxisLaunch g) {
  const int64_t lines = g.outer * g.inner;
  for (int64_t line = global_index(); line < lines; line += grid_stride()) {
    const int64_t o = line / g.inner, j = line % g.inner;
    const int64_t base = o * g.n * g.inner + j;
    double s = 0;
    for (int64_t i = 0; i < g.n; ++i) {
      const int64_t k = base + i * g.inner;
      s += Log ? double(widen(dy[k])) : double(widen(dy[k])) * double(widen(y[k]));
    }
    for (int64_t i = 0; i < g.n; ++i) {
      const int64_t k = base + i * g.inner;
      if constexpr (Log) dx[k] = narrow<T>(double(widen(dy[k])) - exp(double(widen(y[k]))) * s);
      else dx[k] = narrow<T>(double(widen(y[k])) * (double(widen(dy[k])) - s));
    }
  }
}

template <class T, bool Log>
void softmax_typed(const void* x, void* y, const AxisLaunch& g, cudaStream_t s) {
  if (g.inner == 1)
    softmax_rows<T, Log><<<unsigned(g.outer), kRowThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), g.n);
  else
    softmax_lines<T, Log><<<blocks_for(g.outer * g.inner), kThreads, 0, s>>>(static_cast<const T*>(x),
                                                                              static_cast<T*>(y), g);
}

template <class T, bool Log>
void softmax_grad_typed(const void* dy, const void* y, void* dx, const AxisLaunch& g, cudaStream_t s) {
  if (g.inner == 1)
    softmax_grad_rows<T, Log><<<unsigned(g.outer), kRowThreads, 0, s>>>(
        static_cast<const T*>(dy), static_cast<const T*>(y), static_cast<T*>(dx), g.n);
  else
    softmax_grad_lines<T, Log><<<blocks_for(g.outer * g.inner), kThreads, 0, s>>>(
        static_cast<const T*>(dy), static_cast<const T*>(y), static_cast<T*>(dx), g);
}

// ---- softmax cross-entropy ----
__device__ inline int64_t label_id(const void* labels, DType d, int64_t i) {
  return d == DType::i32 ? int64_t(static_cast<const int32_t*>(labels)[i]) : static_cast<const int64_t*>(labels)[i];
}

// The row's logsumexp as its max and the log of the sum shifted by it (not
// shifted when the max is not finite): x's log-probability is
// (x - max) - log_sum, where max + log_sum would round to max for a huge max.
struct RowLse {
  double max, log_sum;
  __device__ double log_prob(double x) const { return (x - max) - log_sum; }
};

template <class T>
__device__ inline RowLse row_lse(const T* xi, int64_t c, double* shared) {
  double m = -kInf;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x) m = nan_max(m, double(widen(xi[j])));
  m = block_max(m, shared);
  if (!isfinite(m)) return {m, 0};
  double s = 0;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x) s += exp(double(widen(xi[j])) - m);
  s = block_sum(s, shared);
  return {m, log(s)};
}

template <class T>
__global__ void ce_rows(CeLaunch l, double* row_loss) {
  __shared__ double shared[32];
  const int64_t i = blockIdx.x;
  const T* xi = static_cast<const T*>(l.logits) + i * l.c;
  const RowLse lse = row_lse(xi, l.c, shared);
  double loss = 0;
  if (l.ids) {
    const int64_t id = label_id(l.labels, l.label_dtype, i);
    if (id < 0 || id >= l.c) {
      if (threadIdx.x == 0) *l.flag = 1;
      loss = 0;
    } else {
      loss = -lse.log_prob(double(widen(xi[id])));
    }
  } else {
    const T* yi = static_cast<const T*>(l.labels) + i * l.c;
    double part = 0;
    for (int64_t j = threadIdx.x; j < l.c; j += blockDim.x)
      if (widen(yi[j]) != 0) part -= double(widen(yi[j])) * lse.log_prob(double(widen(xi[j])));
    loss = block_sum(part, shared);
  }
  if (threadIdx.x == 0) row_loss[i] = loss;
}

template <class T>
__global__ void ce_mean(const double* row_loss, int64_t n, T* out) {
  __shared__ double shared[32];
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += row_loss[i];
  s = block_sum(s, shared);
  if (threadIdx.x == 0) *out = narrow<T>(s / double(n));
}

template <class T>
__global__ void ce_grad_rows(CeLaunch l, const T* g_dev, double g_host, T* dx) {
  __shared__ double shared[32];
  const int64_t i = blockIdx.x;
  const T* xi = static_cast<const T*>(l.logits) + i * l.c;
  T* di = dx + i * l.c;
  using M = math_t<T>;
  const double scale = (g_dev ? double(widen(*g_dev)) : g_host) / double(l.n);
  const RowLse lse = row_lse(xi, l.c, shared);
  if (l.ids) {
    const int64_t id = label_id(l.labels, l.label_dtype, i);
    if (id < 0 || id >= l.c) {
      if (threadIdx.x == 0) *l.flag = 1;
      return;
    }
    for (int64_t j = threadIdx.x; j < l.c; j += blockDim.x) {
      const M v = M(scale * exp(lse.log_prob(double(widen(xi[j])))));
      di[j] = narrow<T>(j == id ? M(double(v) - scale) : v);
    }
  } else {
    const T* yi = static_cast<const T*>(l.labels) + i * l.c;
    double sy = 0;
    for (int64_t j = threadIdx.x; j < l.c; j += blockDim.x) sy += double(widen(yi[j]));
    sy = block_sum(sy, shared);
    for (int64_t j = threadIdx.x; j < l.c; j += blockDim.x)
      di[j] = narrow<T>(scale * (exp(lse.log_prob(double(widen(xi[j])))) * sy - double(widen(yi[j]))));
  }
}

// ---- batch norm: parts of channels, merged, then one thread per element ----
constexpr int kPartThreads = 256;

// The parts each channel is split into: about 1024 blocks in all, each
// folding at least 1024 values.
__host__ __device__ inline int64_t bn_parts(const BnLaunch& g) {
  const int64_t count = g.n * g.s;
  int64_t p = g.c > 0 ? (1024 + g.c - 1) / g.c : 1;
  const int64_t most = (count + 1023) / 1024;
  if (p > most) p = most;
  return p < 1 ? 1 : p;
}

// Element e of channel c's n * s values, in NCHW order.
__device__ inline int64_t bn_at(const BnLaunch& g, int64_t c, int64_t e) {
  const int64_t n = g.index32 ? int64_t(g.div[2].div(uint32_t(e))) : e / g.s;
  return (n * g.c + c) * g.s + (e - n * g.s);
}

// The channel of element i of x.
__device__ inline int64_t bn_channel(const BnLaunch& g, int64_t i) {
  if (g.index32) {
    const uint32_t q = g.div[2].div(uint32_t(i));
    return int64_t(q - g.div[1].div(q) * g.div[1].divisor);
  }
  return (i / g.s) % g.c;
}

// g with its dividers, for the launches below.
BnLaunch with_dividers(BnLaunch g) {
  const int64_t size[3] = {g.n, g.c, g.s};
  g.index32 = make_dividers(3, size, g.n * g.c * g.s, g.div);
  return g;
}

__device__ inline void part_range(const BnLaunch& g, int64_t part, int64_t parts, int64_t& b, int64_t& e) {
  const int64_t count = g.n * g.s, len = (count + parts - 1) / parts;
  b = part * len;
  e = b + len < count ? b + len : count;
  if (b > e) b = e;
}

// Part (blockIdx.x) of channel (blockIdx.y): its count, mean and sum of
// squared deviations (two passes over the part, which stays in cache).
template <class T>
__global__ void bn_stat_parts(BnLaunch g, const T* x, double* parts) {
  __shared__ double shared[32];
  const int64_t c = blockIdx.y, part = blockIdx.x, nparts = gridDim.x;
  int64_t b, e;
  part_range(g, part, nparts, b, e);
  double s = 0;
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) s += double(widen(x[bn_at(g, c, i)]));
  s = block_sum(s, shared);
  const double n = double(e - b), mu = n > 0 ? s / n : 0.0;
  double q = 0;
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) {
    const double d = double(widen(x[bn_at(g, c, i)])) - mu;
    q += d * d;
  }
  q = block_sum(q, shared);
  if (threadIdx.x == 0) {
    double* out = parts + (c * nparts + part) * 3;
    out[0] = n, out[1] = mu, out[2] = q;
  }
}

// Per channel: the parts merged (Chan et al.'s pairwise update), the
// statistics written, and the affine map each element needs (as M, the
// way the CPU kernel rounds it): y = (x - mu) * scale + beta. The
// statistics are stored as M too (f32 for f16 and bf16 x, as on the CPU).
template <class T>
__device__ inline void bn_affine(const BnLaunch& g, int64_t c, const T* gamma, const T* beta,
                                 const math_t<T>* mean, const math_t<T>* var, math_t<T>* affine) {
  affine[c * 3] = mean[c];
  affine[c * 3 + 1] = math::BatchNormScale{g.eps}(widen(gamma[c]), var[c]);
  affine[c * 3 + 2] = widen(beta[c]);
}

template <class T>
__global__ void bn_stat_merge(BnLaunch g, const double* parts, int64_t nparts, const T* gamma, const T* beta,
                              math_t<T>* mean, math_t<T>* var, math_t<T>* affine) {
  for (int64_t c = global_index(); c < g.c; c += grid_stride()) {
    double n = 0, mu = 0, m2 = 0;
    for (int64_t p = 0; p < nparts; ++p) {
      const double* q = parts + (c * nparts + p) * 3;
      if (q[0] == 0) continue;
      const double nb = q[0], delta = q[1] - mu, total = n + nb;
      mu += delta * nb / total;
      m2 += q[2] + delta * delta * n * nb / total;
      n = total;
    }
    const double v = n > 0 ? m2 / n : 0.0;
    mean[c] = math_t<T>(mu), var[c] = math_t<T>(v);
    bn_affine(g, c, gamma, beta, mean, var, affine);
  }
}

// The affine map of channel c from its statistics as stored (the scale
// from var as stored, as the CPU kernel has it): batch_norm_apply's
// from the saved statistics is batch_norm_train's bit for bit.
template <class T>
__global__ void bn_affine_of(BnLaunch g, const T* gamma, const T* beta, const math_t<T>* mean,
                             const math_t<T>* var, math_t<T>* affine) {
  for (int64_t c = global_index(); c < g.c; c += grid_stride()) bn_affine(g, c, gamma, beta, mean, var, affine);
}

template <class T>
__global__ void bn_apply(BnLaunch g, const T* x, const math_t<T>* affine, T* y) {
  const int64_t total = g.n * g.c * g.s;
  for (int64_t i = global_index(); i < total; i += grid_stride()) {
    const int64_t c = bn_channel(g, i);
    y[i] = narrow<T>((widen(x[i]) - affine[c * 3]) * affine[c * 3 + 1] + affine[c * 3 + 2]);
  }
}

// Per part: sum(dy) and sum(dy (x - mean)).
template <class T>
__global__ void bn_grad_parts(BnLaunch g, const T* dy, const T* x, const math_t<T>* mean, double* parts) {
  __shared__ double shared[32];
  const int64_t c = blockIdx.y, part = blockIdx.x, nparts = gridDim.x;
  int64_t b, e;
  part_range(g, part, nparts, b, e);
  const double mu = double(mean[c]);
  double sdy = 0, sdyx = 0;
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) {
    const int64_t k = bn_at(g, c, i);
    sdy += double(widen(dy[k]));
    sdyx += double(widen(dy[k])) * (double(widen(x[k])) - mu);
  }
  sdy = block_sum(sdy, shared);
  sdyx = block_sum(sdyx, shared);
  if (threadIdx.x == 0) {
    double* out = parts + (c * nparts + part) * 2;
    out[0] = sdy, out[1] = sdyx;
  }
}

// dgamma, dbeta, and dx = a dy + b x + k per channel.
template <class T>
__global__ void bn_grad_merge(BnLaunch g, const double* parts, int64_t nparts, const T* gamma,
                              const math_t<T>* var, T* dgamma, T* dbeta, double* coef, const math_t<T>* mean) {
  const double m = double(g.n * g.s);
  for (int64_t c = global_index(); c < g.c; c += grid_stride()) {
    double sdy = 0, sdyx = 0;
    for (int64_t p = 0; p < nparts; ++p) sdy += parts[(c * nparts + p) * 2], sdyx += parts[(c * nparts + p) * 2 + 1];
    const double rstd = 1.0 / sqrt(double(var[c]) + g.eps);
    sdyx *= rstd;
    dbeta[c] = narrow<T>(sdy), dgamma[c] = narrow<T>(sdyx);
    const double a = double(widen(gamma[c])) * rstd, b = m > 0 ? -a * sdyx * rstd / m : 0.0;
    coef[c * 3] = a, coef[c * 3 + 1] = b, coef[c * 3 + 2] = m > 0 ? -a * sdy / m - b * double(mean[c]) : 0.0;
  }
}

template <class T>
__global__ void bn_grad_apply(BnLaunch g, const T* dy, const T* x, const double* coef, T* dx) {
  const int64_t total = g.n * g.c * g.s;
  for (int64_t i = global_index(); i < total; i += grid_stride()) {
    const int64_t c = bn_channel(g, i);
    dx[i] = narrow<T>(coef[c * 3] * double(widen(dy[i])) + coef[c * 3 + 1] * double(widen(x[i])) + coef[c * 3 + 2]);
  }
}

// ---- layer norm: one block per row; dgamma/dbeta one thread per column ----
template <class T>
__global__ void ln_rows(LnLaunch g, const T* x, const T* gamma, const T* beta, T* y, T* mean, T* rstd) {
  __shared__ double shared[32];
  const int64_t r = blockIdx.x;
  const T* p = x + r * g.d;
  double s = 0;
  for (int64_t i = threadIdx.x; i < g.d; i += blockDim.x) s += double(widen(p[i]));
  s = block_sum(s, shared);
  const double mu = g.d ? s / double(g.d) : 0.0;
  double q = 0;
  for (int64_t i = threadIdx.x; i < g.d; i += blockDim.x) q += (double(widen(p[i])) - mu) * (double(widen(p[i])) - mu);
  q = block_sum(q, shared);
  const double rs = 1.0 / sqrt((g.d ? q / double(g.d) : 0.0) + g.eps);
  using M = math_t<T>;
  if (threadIdx.x == 0) mean[r] = narrow<T>(mu), rstd[r] = narrow<T>(rs);
  const M tmu = M(mu), trs = M(rs);
  T* o = y + r * g.d;
  for (int64_t i = threadIdx.x; i < g.d; i += blockDim.x)
    o[i] = narrow<T>((widen(p[i]) - tmu) * trs * widen(gamma[i]) + widen(beta[i]));
}

template <class T>
__global__ void ln_grad_rows(LnLaunch g, const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, T* dx) {
  __shared__ double shared[32];
  const int64_t r = blockIdx.x;
  const T *pd = dy + r * g.d, *px = x + r * g.d;
  const double mu = double(widen(mean[r])), rs = double(widen(rstd[r]));
  double sa = 0, sax = 0;
  for (int64_t i = threadIdx.x; i < g.d; i += blockDim.x) {
    const double a = double(widen(pd[i])) * double(widen(gamma[i]));
    sa += a;
    sax += a * (double(widen(px[i])) - mu) * rs;
  }
  sa = block_sum(sa, shared);
  sax = block_sum(sax, shared);
  const double ma = sa / double(g.d), max_ = sax / double(g.d);
  T* o = dx + r * g.d;
  for (int64_t i = threadIdx.x; i < g.d; i += blockDim.x) {
    const double xhat = (double(widen(px[i])) - mu) * rs;
    o[i] = narrow<T>(rs * (double(widen(pd[i])) * double(widen(gamma[i])) - ma - xhat * max_));
  }
}

template <class T>
__global__ void ln_grad_columns(LnLaunch g, const T* dy, const T* x, const T* mean, const T* rstd, T* dgamma, T* dbeta) {
  for (int64_t j = global_index(); j < g.d; j += grid_stride()) {
    double sg = 0, sb = 0;
    for (int64_t r = 0; r < g.rows; ++r) {
      const double d = double(widen(dy[r * g.d + j]));
      sb += d;
      sg += d * (double(widen(x[r * g.d + j])) - double(widen(mean[r]))) * double(widen(rstd[r]));
    }
    dgamma[j] = narrow<T>(sg), dbeta[j] = narrow<T>(sb);
  }
}

}  // namespace

void softmax_launch(const void* x, void* y, const AxisLaunch& g, bool log, cudaStream_t s) {
  if (g.outer * g.n * g.inner == 0) return;
  with_float_type(g.dtype, [&]<class T>() {
    if (log) softmax_typed<T, true>(x, y, g, s);
    else softmax_typed<T, false>(x, y, g, s);
  });
}

void softmax_backward_launch(const void* dy, const void* y, void* dx, const AxisLaunch& g, bool log, cudaStream_t s) {
  if (g.outer * g.n * g.inner == 0) return;
  with_float_type(g.dtype, [&]<class T>() {
    if (log) softmax_grad_typed<T, true>(dy, y, dx, g, s);
    else softmax_grad_typed<T, false>(dy, y, dx, g, s);
  });
}

void ce_launch(const CeLaunch& l, double* row_loss, void* loss, cudaStream_t s) {
  with_float_type(l.dtype, [&]<class T>() {
    if (l.n > 0) ce_rows<T><<<unsigned(l.n), 128, 0, s>>>(l, row_loss);
    ce_mean<T><<<1, 1024, 0, s>>>(row_loss, l.n, static_cast<T*>(loss));
  });
}

void ce_backward_launch(const CeLaunch& l, const void* g_dev, double g_host, void* dx, cudaStream_t s) {
  if (l.n * l.c == 0) return;
  with_float_type(l.dtype, [&]<class T>() {
    ce_grad_rows<T><<<unsigned(l.n), 128, 0, s>>>(l, static_cast<const T*>(g_dev), g_host, static_cast<T*>(dx));
  });
}

size_t bn_scratch_bytes(const BnLaunch& g) {
  // The parts (three doubles each), then three values per channel.
  return size_t(g.c * bn_parts(g) * 3) * sizeof(double) + size_t(g.c * 3) * sizeof(double);
}

void bn_train_launch(const BnLaunch& plain, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                     void* var, void* scratch, cudaStream_t s) {
  const BnLaunch g = with_dividers(plain);
  if (g.c == 0) return;
  const int64_t parts = bn_parts(g);
  double* part = static_cast<double*>(scratch);
  void* affine = part + g.c * parts * 3;
  with_float_type(g.dtype, [&]<class T>() {
    bn_stat_parts<T><<<dim3(unsigned(parts), unsigned(g.c)), kPartThreads, 0, s>>>(g, static_cast<const T*>(x), part);
    bn_stat_merge<T><<<blocks_for(g.c), kThreads, 0, s>>>(g, part, parts, static_cast<const T*>(gamma),
                                                          static_cast<const T*>(beta), static_cast<math_t<T>*>(mean),
                                                          static_cast<math_t<T>*>(var), static_cast<math_t<T>*>(affine));
    const int64_t total = g.n * g.c * g.s;
    if (total > 0)
      bn_apply<T><<<blocks_for(total), kThreads, 0, s>>>(g, static_cast<const T*>(x),
                                                         static_cast<const math_t<T>*>(affine),
                                                         static_cast<T*>(y));
  });
}

void bn_apply_launch(const BnLaunch& plain, const void* x, const void* gamma, const void* beta, const void* mean,
                     const void* var, void* y, void* scratch, cudaStream_t s) {
  const BnLaunch g = with_dividers(plain);
  const int64_t total = g.n * g.c * g.s;
  if (total == 0) return;
  with_float_type(g.dtype, [&]<class T>() {
    auto* affine = static_cast<math_t<T>*>(scratch);
    bn_affine_of<T><<<blocks_for(g.c), kThreads, 0, s>>>(g, static_cast<const T*>(gamma), static_cast<const T*>(beta),
                                                         static_cast<const math_t<T>*>(mean),
                                                         static_cast<const math_t<T>*>(var), affine);
    bn_apply<T><<<blocks_for(total), kThreads, 0, s>>>(g, static_cast<const T*>(x), affine, static_cast<T*>(y));
  });
}

void bn_backward_launch(const BnLaunch& plain, const void* dy, const void* x, const void* gamma, const void* mean,
                        const void* var, void* dx, void* dgamma, void* dbeta, void* scratch, cudaStream_t s) {
  const BnLaunch g = with_dividers(plain);
  if (g.c == 0) return;
  const int64_t parts = bn_parts(g);
  double* part = static_cast<double*>(scratch);
  double* coef = part + g.c * parts * 3;
  with_float_type(g.dtype, [&]<class T>() {
    bn_grad_parts<T><<<dim3(unsigned(parts), unsigned(g.c)), kPartThreads, 0, s>>>(
        g, static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const math_t<T>*>(mean), part);
    bn_grad_merge<T><<<blocks_for(g.c), kThreads, 0, s>>>(g, part, parts, static_cast<const T*>(gamma),
                                                          static_cast<const math_t<T>*>(var), static_cast<T*>(dgamma),
                                                          static_cast<T*>(dbeta), coef,
                                                          static_cast<const math_t<T>*>(mean));
    const int64_t total = g.n * g.c * g.s;
    if (total > 0)
      bn_grad_apply<T><<<blocks_for(total), kThreads, 0, s>>>(g, static_cast<const T*>(dy), static_cast<const T*>(x),
                                                              coef, static_cast<T*>(dx));
  });
}

void ln_launch(const LnLaunch& g, const void* x, const void* gamma, const void* beta, void* y, void* mean, void* rstd,
               cudaStream_t s) {
  if (g.rows == 0) return;
  with_float_type(g.dtype, [&]<class T>() {
    ln_rows<T><<<unsigned(g.rows), kRowThreads, 0, s>>>(g, static_cast<const T*>(x), static_cast<const T*>(gamma),
                                                        static_cast<const T*>(beta), static_cast<T*>(y),
                                                        static_cast<T*>(mean), static_cast<T*>(rstd));
  });
}

void ln_backward_launch(const LnLaunch& g, const void* dy, const void* x, const void* gamma, const void* mean,
                        const void* rstd, void* dx, void* dgamma, void* dbeta, cudaStream_t s) {
  with_float_type(g.dtype, [&]<class T>() {
    if (g.rows > 0)
      ln_grad_rows<T><<<unsigned(g.rows), kRowThreads, 0, s>>>(
          g, static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const T*>(gamma),
          static_cast<const T*>(mean), static_cast<const T*>(rstd), static_cast<T*>(dx));
    if (g.d > 0)
      ln_grad_columns<T><<<blocks_for(g.d), kThreads, 0, s>>>(g, static_cast<const T*>(dy), static_cast<const T*>(x),
                                                              static_cast<const T*>(mean),
                                                              static_cast<const T*>(rstd), static_cast<T*>(dgamma),
                                                              static_cast<T*>(dbeta));
  });
}

}  // namespace nn::backend::cuda
