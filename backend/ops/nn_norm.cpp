// Normalisation: batch_norm and layer_norm, each a fused forward op with a
// fused backward op, plus the in-place running-statistics update and the
// nn_ops.h functions.
//
//  - batch_norm_train (x, gamma, beta) -> (y, mean, var): normalises each
//    channel (axis 1) with the batch's mean and biased variance; mean and
//    var are outputs so that the backward and the running update need no
//    second pass; they are f32 for f16 and bf16 x (bn_stat_dtype).
//    batch_norm_backward (dy, x, gamma, mean, var) -> (dx, dgamma, dbeta).
//  - batch_norm_apply (x, gamma, beta, mean, var) -> y: batch_norm_train's
//    y again from its statistics, bit for bit (both round the per-channel
//    scale from var as stored). The `recompute` pass calls it in the
//    backward rather than keeping y (ir/passes/recompute.cpp).
//  - batch_norm_scale (gamma, var) -> gamma / sqrt(var + eps), per channel,
//    rounded as the two above round it: the pass
//    batch-norm-apply-into-elementwise writes batch_norm_apply as
//    (x - mean) * scale + beta with it, which fusion then merges with the
//    ops reading y.
//  - running_stat_update (running, stat): running = (1 - m) running +
//    m * scale * stat, written in place (Effect::stateful, as assign_slice:
//    eagerly it writes the tensor, under a tracer it becomes a state update).
//    It has no backward rule, so the update is never differentiated, and no
//    gradient reaches batch_norm_train's mean and var outputs through it.
//  - batch_norm in eval mode is a composite (x * scale + shift with
//    per-channel scale and shift), differentiated through its primitives.
//  - layer_norm (x, gamma, beta) -> (y, mean, rstd) over the last
//    gamma.ndim() dims; layer_norm_backward (dy, x, gamma, mean, rstd) ->
//    (dx, dgamma, dbeta).
// Statistics accumulate in double. The fused backward ops have no backward
// of their own (no second derivatives through normalisation yet).
#include <algorithm>
#include <cmath>
#include <string>

#include "backend/half.h"
#include "backend/nn_ops.h"
#include "backend/ops/batch_norm_blocked.h"
#include "backend/ops/blocked_layout.h"
#include "backend/ops/elementwise_math.h"
#include "backend/ops/lane_sum.h"
#include "backend/ops/nn_common.h"
#include "backend/ops/register.h"
#include "backend/parallel.h"

namespace nn::backend {
namespace {
using namespace nnops;

// ---- batch norm geometry: x [N, C, S...] viewed as [N, C, S] ----
struct BnGeom {
  int64_t n = 0, c = 0, s = 1;
  int64_t count() const { return n * s; }  // values per channel
};

BnGeom bn_geometry(const TensorType& x) {
  if (x.shape.ndim() < 2) throw Error("batch_norm: input must have a batch and a channel axis [N, C, ...], got " + x.str());
  BnGeom g;
  g.n = x.shape[0], g.c = x.shape[1];
  for (int d = 2; d < x.shape.ndim(); ++d) g.s *= x.shape[d];
  return g;
}

// A per-channel operand (gamma, beta, running mean or var) must be [C].
void check_channel_param(const char* what, const TensorType& p, const TensorType& x, int64_t c) {
  if (p.shape.ndim() != 1 || p.shape[0] != c)
    throw Error(std::string("batch_norm: ") + what + " " + p.str() + " does not fit input " + x.str() + " (" +
                std::to_string(c) + " channels)");
}

// The dtype of batch norm's statistics: the one the kernels compute in, f32
// for 16-bit x, whose mean would otherwise be rounded to 8 or 11 bits
// (docs/mixed-precision.md; cuDNN's saved statistics are f32 too).
DType bn_stat_dtype(DType x) { return is_half_float(x) ? DType::f32 : x; }

OutTypes bn_train_type(std::span<const TensorType> in, const Attrs&) {
  const int which[] = {0, 1, 2};
  require_float("batch_norm", in, which);
  BnGeom g = bn_geometry(in[0]);
  check_channel_param("gamma", in[1], in[0], g.c);
  check_channel_param("beta", in[2], in[0], g.c);
  TensorType stat{bn_stat_dtype(in[0].dtype), Shape{g.c}, in[0].device};
  return {TensorType{in[0].dtype, in[0].shape, in[0].device}, stat, stat};
}

// mean and var (operands i and i + 1) in the dtype batch_norm_train gives
// them for an input of dtype x.
void require_stat_dtype(std::string_view op, std::span<const TensorType> in, DType x, int i) {
  const DType want = bn_stat_dtype(x);
  if (in[size_t(i)].dtype != want || in[size_t(i) + 1].dtype != want)
    throw_dtype_error(op, "expects mean and var of " + std::string(dtype_name(want)) + " for " +
                              std::string(dtype_name(x)) + " input", in);
}

OutTypes bn_backward_type(std::span<const TensorType> in, const Attrs&) {
  const int which[] = {0, 1, 2};
  require_float("batch_norm_backward", in, which);
  require_stat_dtype("batch_norm_backward", in, in[1].dtype, 3);
  BnGeom g = bn_geometry(in[1]);
  if (in[0].shape != in[1].shape)
    throw Error("batch_norm_backward: gradient " + in[0].str() + " does not fit input " + in[1].str());
  check_channel_param("gamma", in[2], in[1], g.c);
  check_channel_param("mean", in[3], in[1], g.c);
  check_channel_param("var", in[4], in[1], g.c);
  return {TensorType{in[1].dtype, in[1].shape, in[1].device}, in[2], in[2]};
}

OutTypes bn_apply_type(std::span<const TensorType> in, const Attrs&) {
  const int which[] = {0, 1, 2};
  require_float("batch_norm_apply", in, which);
  require_stat_dtype("batch_norm_apply", in, in[0].dtype, 3);
  BnGeom g = bn_geometry(in[0]);
  const char* names[] = {"gamma", "beta", "mean", "var"};
  for (int i = 1; i < 5; ++i) check_channel_param(names[i - 1], in[i], in[0], g.c);
  return {TensorType{in[0].dtype, in[0].shape, in[0].device}};
}

OutTypes bn_scale_type(std::span<const TensorType> in, const Attrs&) {
  const int which[] = {0, 1};
  require_float("batch_norm_scale", in, which);
  if (in[0].shape.ndim() != 1 || in[1].shape != in[0].shape)
    throw Error("batch_norm_scale: gamma " + in[0].str() + " and var " + in[1].str() + " must both be [C]");
  return {in[0]};
}

OutTypes running_update_type(std::span<const TensorType> in, const Attrs&) {
  const int which[] = {0, 1};
  require_float("batch_norm", in, which);
  if (in[0].shape != in[1].shape)
    throw Error("batch_norm: running statistic " + in[0].str() + " does not fit the batch statistic " + in[1].str());
  return {in[0]};
}

// Runs f(c) for every channel, over the kernel threads when it pays.
template <class F>
void over_channels(const BnGeom& g, F f) {
  parallel_for(g.c, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.count())), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) f(c);
  });
}

// Calls f(p, len) for each contiguous run of channel c's values.
template <class T, class F>
inline void channel_runs(T* base, const BnGeom& g, int64_t c, F f) {
  for (int64_t n = 0; n < g.n; ++n) f(base + (n * g.c + c) * g.s, g.s);
}

// y = (x - mean) * scale + beta over channel c, rather than x * scale +
// shift: values symmetric about the mean stay exactly symmetric.
template <class T>
void bn_normalize(const T* x, T* y, const BnGeom& g, int64_t c, T mean, T scale, T beta) {
  for (int64_t n = 0; n < g.n; ++n) {
    const T* p = x + (n * g.c + c) * g.s;
    T* q = y + (n * g.c + c) * g.s;
    for (int64_t i = 0; i < g.s; ++i) q[i] = (p[i] - mean) * scale + beta;
  }
}

template <class T>
void bn_train_forward(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  BnGeom g = bn_geometry(in[0].type());
  const T* x = in[0].data<T>();
  const T *gamma = in[1].data<T>(), *beta = in[2].data<T>();
  T* y = out[0].data<T>();
  T *mean = out[1].data<T>(), *var = out[2].data<T>();
  const double m = double(g.count());
  over_channels(g, [&](int64_t c) {
    // Two passes (mean, then squared deviations): no cancellation.
    double s = 0;
    channel_runs(x, g, c, [&](const T* p, int64_t len) { s += lane_sum(len, [&](int64_t i) { return double(p[i]); }); });
    const double mu = m > 0 ? s / m : 0.0;
    double q = 0;
    channel_runs(x, g, c, [&](const T* p, int64_t len) {
      q += lane_sum(len, [&](int64_t i) { return (double(p[i]) - mu) * (double(p[i]) - mu); });
    });
    const double v = m > 0 ? q / m : 0.0;
    mean[c] = T(mu), var[c] = T(v);
    bn_normalize(x, y, g, c, mean[c], math::BatchNormScale{eps}(gamma[c], var[c]), beta[c]);
  });
}

template <class T>
void bn_apply_forward(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  BnGeom g = bn_geometry(in[0].type());
  const T *x = in[0].data<T>(), *gamma = in[1].data<T>(), *beta = in[2].data<T>();
  const T *mean = in[3].data<T>(), *var = in[4].data<T>();
  T* y = out[0].data<T>();
  const math::BatchNormScale scale{eps};
  over_channels(g, [&](int64_t c) { bn_normalize(x, y, g, c, mean[c], scale(gamma[c], var[c]), beta[c]); });
}

void bn_train_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const double eps = attrs.get<double>("eps");
  if (blocked_attr(attrs)) return bn_train_blocked(in, out, eps);
  if (out[0].dtype() == DType::f64) bn_train_forward<double>(in, out, eps);
  else bn_train_forward<float>(in, out, eps);
}

void bn_apply_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const double eps = attrs.get<double>("eps");
  if (blocked_attr(attrs)) return bn_apply_blocked(in, out, eps);
  if (out[0].dtype() == DType::f64) bn_apply_forward<double>(in, out, eps);
  else bn_apply_forward<float>(in, out, eps);
}

void bn_scale_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const math::BatchNormScale f{attrs.get<double>("eps")};
  visit_dtype(out[0].dtype() == DType::f64 ? DType::f64 : DType::f32, [&]<class T>() {
    const T *gamma = in[0].data<T>(), *var = in[1].data<T>();
    T* s = out[0].data<T>();
    for (int64_t i = 0; i < out[0].numel(); ++i) s[i] = f(gamma[i], var[i]);
  });
}

// dx = gamma * rstd / M * (M dy - sum(dy) - xhat * sum(dy xhat)).
template <class T>
void bn_backward(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  BnGeom g = bn_geometry(in[1].type());
  const T *dy = in[0].data<T>(), *x = in[1].data<T>(), *gamma = in[2].data<T>();
  const T *mean = in[3].data<T>(), *var = in[4].data<T>();
  T *dx = out[0].data<T>(), *dgamma = out[1].data<T>(), *dbeta = out[2].data<T>();
  const double m = double(g.count());
  over_channels(g, [&](int64_t c) {
    const double mu = double(mean[c]), rstd = 1.0 / std::sqrt(double(var[c]) + eps);
    double sdy = 0, sdyx = 0;
    for (int64_t n = 0; n < g.n; ++n) {
      const T *pd = dy + (n * g.c + c) * g.s, *px = x + (n * g.c + c) * g.s;
      sdy += lane_sum(g.s, [&](int64_t i) { return double(pd[i]); });
      sdyx += lane_sum(g.s, [&](int64_t i) { return double(pd[i]) * (double(px[i]) - mu); });
    }
    sdyx *= rstd;  // sum(dy * xhat)
    dbeta[c] = T(sdy), dgamma[c] = T(sdyx);
    if (m == 0) return;
    // dx = a dy + b (x - mean) + k with per-channel a, b, k, in T: x - mean
    // is exact where x is near the mean (where a b x + k form would cancel).
    const double a = double(gamma[c]) * rstd;
    const T ta = T(a), tb = T(-a * sdyx * rstd / m), tk = T(-a * sdy / m), tmu = mean[c];
    for (int64_t n = 0; n < g.n; ++n) {
      const T *pd = dy + (n * g.c + c) * g.s, *px = x + (n * g.c + c) * g.s;
      T* pdx = dx + (n * g.c + c) * g.s;
      for (int64_t i = 0; i < g.s; ++i) pdx[i] = ta * pd[i] + tb * (px[i] - tmu) + tk;
    }
  });
}

void bn_backward_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const double eps = attrs.get<double>("eps");
  if (blocked_attr(attrs)) return bn_backward_blocked(in, out, eps);
  if (out[0].dtype() == DType::f64) bn_backward<double>(in, out, eps);
  else bn_backward<float>(in, out, eps);
}

void running_update_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const math::RunningUpdate f{attrs.get<double>("momentum"), attrs.get<double>("scale")};
  visit_dtype(out[0].dtype() == DType::f64 ? DType::f64 : DType::f32, [&]<class T>() {
    T* r = out[0].data<T>();
    const T* s = in[1].data<T>();
    for (int64_t i = 0; i < out[0].numel(); ++i) r[i] = f(r[i], s[i]);
  });
}

std::vector<Tensor> bn_train_backward(const BackwardArgs& a) {
  static const OpDef& d = op(OpId::batch_norm_backward);
  // Only y carries a gradient: mean and var feed the running update alone.
  Tensors g = dispatch(d, std::vector<Tensor>{a.grads[0], a.inputs[0], a.inputs[1], a.outputs[1], a.outputs[2]},
                       a.attrs);
  return {g[0], g[1], g[2]};
}

// ---- layer norm: x [..., D...] with gamma's shape as the trailing dims ----
struct LnGeom {
  int64_t rows = 0, d = 1;
  int k = 0;  // normalised trailing dims
};

LnGeom ln_geometry(const TensorType& x, const TensorType& gamma, const char* what = "gamma") {
  LnGeom g;
  g.k = gamma.shape.ndim();
  const int lead = x.shape.ndim() - g.k;
  bool fits = lead >= 0;
  for (int i = 0; fits && i < g.k; ++i) fits = x.shape[lead + i] == gamma.shape[i];
  if (!fits) {
    Shape tail;
    for (int i = std::max(lead, 0); i < x.shape.ndim(); ++i) tail.push_back(x.shape[i]);
    throw Error(std::string("layer_norm: ") + what + " " + gamma.str() + " does not fit input " + x.str() +
                ": the input's last dims " + tail.str() + " must equal " + gamma.shape.str());
  }
  for (int i = 0; i < g.k; ++i) g.d *= gamma.shape[i];
  g.rows = 1;
  for (int i = 0; i < lead; ++i) g.rows *= x.shape[i];
  return g;
}

Shape ln_stat_shape(const TensorType& x, const LnGeom& g) {
  Shape s;
  for (int i = 0; i < x.shape.ndim() - g.k; ++i) s.push_back(x.shape[i]);
  return s;
}

OutTypes ln_type(std::span<const TensorType> in, const Attrs&) {
  const int which[] = {0, 1, 2};
  require_float("layer_norm", in, which);
  LnGeom g = ln_geometry(in[0], in[1]);
  ln_geometry(in[0], in[2], "beta");
  // Both span the normalised dims (as in PyTorch): a shorter beta would
  // broadcast forward but its gradient could not be summed to it.
  if (in[2].shape != in[1].shape)
    throw Error("layer_norm: beta " + in[2].str() + " does not fit gamma " + in[1].str() +
                ": both have the shape of the normalised dims, " + in[1].shape.str());
  TensorType stat{in[0].dtype, ln_stat_shape(in[0], g), in[0].device};
  return {TensorType{in[0].dtype, in[0].shape, in[0].device}, stat, stat};
}

OutTypes ln_backward_type(std::span<const TensorType> in, const Attrs&) {
  const int which[] = {0, 1, 2, 3, 4};
  require_float("layer_norm_backward", in, which);
  LnGeom g = ln_geometry(in[1], in[2]);
  const Shape stat = ln_stat_shape(in[1], g);
  if (in[0].shape != in[1].shape || in[3].shape != stat || in[4].shape != stat)
    throw Error("layer_norm_backward: operands do not fit: " + describe_operands(in));
  return {TensorType{in[1].dtype, in[1].shape, in[1].device}, in[2], in[2]};
}

template <class F>
void over_rows(const LnGeom& g, F f) {
  parallel_for(g.rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.d)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) f(r);
  });
}

template <class T>
void ln_forward(std::span<const Tensor> in, std::span<Tensor> out, double eps) {
  LnGeom g = ln_geometry(in[0].type(), in[1].type());
  const T *x = in[0].data<T>(), *gamma = in[1].data<T>(), *beta = in[2].data<T>();
  T *y = out[0].data<T>(), *mean = out[1].data<T>(), *rstd = out[2].data<T>();
  const double d = double(g.d);
  over_rows(g, [&](int64_t r) {
    const T* p = x + r * g.d;
    const double mu = g.d ? lane_sum(g.d, [&](int64_t i) { return double(p[i]); }) / d : 0.0;
    const double q = lane_sum(g.d, [&](int64_t i) { return (double(p[i]) - mu) * (double(p[i]) - mu); });
    const double rs = 1.0 / std::sqrt((g.d ? q / d : 0.0) + eps);
    mean[r] = T(mu), rstd[r] = T(rs);
    T* o = y + r * g.d;
    const T tmu = T(mu), trs = T(rs);
    for (int64_t i = 0; i < g.d; ++i) o[i] = (p[i] - tmu) * trs * gamma[i] + beta[i];
  });
}

void ln_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const double eps = attrs.get<double>("eps");
  if (out[0].dtype() == DType::f64) ln_forward<double>(in, out, eps);
  else ln_forward<float>(in, out, eps);
}

// dx = rstd (a - mean(a) - xhat mean(a xhat)) with a = dy gamma, per row;
// dgamma = sum over rows of dy xhat, dbeta = sum of dy, per column, each
// column summed by one thread in row order (the same result on any thread count).
template <class T>
void ln_backward(std::span<const Tensor> in, std::span<Tensor> out) {
  LnGeom g = ln_geometry(in[1].type(), in[2].type());
  const T *dy = in[0].data<T>(), *x = in[1].data<T>(), *gamma = in[2].data<T>();
  const T *mean = in[3].data<T>(), *rstd = in[4].data<T>();
  T *dx = out[0].data<T>(), *dgamma = out[1].data<T>(), *dbeta = out[2].data<T>();
  const double d = double(g.d);
  over_rows(g, [&](int64_t r) {
    const T *pd = dy + r * g.d, *px = x + r * g.d;
    const double mu = double(mean[r]), rs = double(rstd[r]);
    const double sa = lane_sum(g.d, [&](int64_t i) { return double(pd[i]) * double(gamma[i]); });
    const double sax = lane_sum(g.d, [&](int64_t i) { return double(pd[i]) * double(gamma[i]) * (double(px[i]) - mu) * rs; });
    const double ma = sa / d, max_ = sax / d;
    T* o = dx + r * g.d;
    for (int64_t i = 0; i < g.d; ++i) {
      const double xhat = (double(px[i]) - mu) * rs;
      o[i] = T(rs * (double(pd[i]) * double(gamma[i]) - ma - xhat * max_));
    }
  });
  constexpr int64_t kBlock = 64;  // columns a task sums: one cache line or two per row
  const int64_t blocks = (g.d + kBlock - 1) / kBlock;
  parallel_for(blocks, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.rows * kBlock)),
               [&](int64_t b, int64_t e) {
                 double sg[kBlock], sb[kBlock];
                 for (int64_t blk = b; blk < e; ++blk) {
                   const int64_t c0 = blk * kBlock, c1 = std::min(g.d, c0 + kBlock);
                   std::fill(sg, sg + kBlock, 0.0);
                   std::fill(sb, sb + kBlock, 0.0);
                   for (int64_t r = 0; r < g.rows; ++r) {
                     const T *pd = dy + r * g.d, *px = x + r * g.d;
                     const double mu = double(mean[r]), rs = double(rstd[r]);
                     for (int64_t i = c0; i < c1; ++i) {
                       sb[i - c0] += double(pd[i]);
                       sg[i - c0] += double(pd[i]) * (double(px[i]) - mu) * rs;
                     }
                   }
                   for (int64_t i = c0; i < c1; ++i) dgamma[i] = T(sg[i - c0]), dbeta[i] = T(sb[i - c0]);
                 }
               });
}

void ln_backward_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  if (out[0].dtype() == DType::f64) ln_backward<double>(in, out);
  else ln_backward<float>(in, out);
}

std::vector<Tensor> ln_forward_backward(const BackwardArgs& a) {
  static const OpDef& d = op(OpId::layer_norm_backward);
  // mean and rstd are saved values for the backward, hidden from users: only y carries a gradient.
  Tensors g = dispatch(d, std::vector<Tensor>{a.grads[0], a.inputs[0], a.inputs[1], a.outputs[1], a.outputs[2]},
                       a.attrs);
  return {g[0], g[1], g[2]};
}

Tensor host_number(double v) { return scalar(v, DType::f64, /*weak=*/true); }

}  // namespace

// ---- nn_ops.h ------------------------------------------------------------------
Tensor batch_norm(const Tensor& x_in, const Tensor& gamma_in, const Tensor& beta_in, Tensor& running_mean,
                  Tensor& running_var, bool training, double momentum, double eps) {
  Tensor x = as_float(x_in);
  const TensorType xt = x.type();
  BnGeom g = bn_geometry(xt);
  const DType t = x.dtype();
  auto param = [&](const Tensor& p, const char* what, double fill) {
    if (!p.defined()) return full(Shape{g.c}, fill, t);
    check_channel_param(what, p.type(), xt, g.c);
    return astype(p, t);
  };
  Tensor gamma = param(gamma_in, "gamma", 1.0), beta = param(beta_in, "beta", 0.0);
  const bool have_running = running_mean.defined() && running_var.defined();
  // One without the other was ignored, updates and all; PyTorch's eval
  // refuses it too.
  if (running_mean.defined() != running_var.defined())
    throw Error(std::string("batch_norm: a running ") + (running_mean.defined() ? "mean" : "var") + " without a running " +
                (running_mean.defined() ? "var" : "mean") + ": give both, or neither (statistics of each batch)");
  if (have_running) {
    check_channel_param("running mean", running_mean.type(), xt, g.c);
    check_channel_param("running var", running_var.type(), xt, g.c);
  }
  if (training || !have_running) {
    if (g.count() <= 1)
      throw Error("batch_norm: training needs more than one value per channel, got input " + xt.str());
    static const OpDef& d = op(OpId::batch_norm_train);
    Tensors out = dispatch(d, std::vector<Tensor>{x, gamma, beta}, Attrs{{"eps", eps}});
    if (training && have_running) {
      static const OpDef& upd = op(OpId::running_stat_update);
      const double unbiased = double(g.count()) / double(g.count() - 1);  // as PyTorch
      running_mean = call(upd, {running_mean, astype(out[1], running_mean.dtype())},
                          Attrs{{"momentum", momentum}, {"scale", 1.0}});
      running_var = call(upd, {running_var, astype(out[2], running_var.dtype())},
                         Attrs{{"momentum", momentum}, {"scale", unbiased}});
    }
    return out[0];
  }
  // Eval: y = x * scale + shift, scale = gamma / sqrt(var + eps), shift = beta - mean * scale.
  // The per-channel map is computed in the statistics' dtype (f32 for
  // 16-bit x: a running mean rounded to bf16 moves every output) and y is
  // rounded to x's dtype at the end.
  std::vector<int64_t> bshape(size_t(x.ndim()), 1);
  bshape[1] = g.c;
  const DType m = bn_stat_dtype(t);
  Tensor scale = mul(astype(gamma, m), rsqrt(add(astype(running_var, m), host_number(eps))));
  Tensor shift = sub(astype(beta, m), mul(astype(running_mean, m), scale));
  return astype(add(mul(x, reshape(scale, bshape)), reshape(shift, bshape)), t);
}

Tensor layer_norm(const Tensor& x_in, const Tensor& gamma_in, const Tensor& beta_in, double eps,
                  int64_t normalized_ndim) {
  static const OpDef& d = op(OpId::layer_norm);
  Tensor x = as_float(x_in);
  const DType t = x.dtype();
  Shape norm;  // the normalised trailing dims
  if (gamma_in.defined()) {
    norm = gamma_in.shape();
  } else if (beta_in.defined()) {
    norm = beta_in.shape();
  } else {
    if (normalized_ndim < 0 || normalized_ndim > x.ndim())
      throw Error("layer_norm: cannot normalise the last " + std::to_string(normalized_ndim) + " dims of " +
                  x.type().str());
    for (int i = x.ndim() - int(normalized_ndim); i < x.ndim(); ++i) norm.push_back(x.shape()[i]);
  }
  Tensor gamma = gamma_in.defined() ? astype(gamma_in, t) : ones(norm, t);
  Tensor beta = beta_in.defined() ? astype(beta_in, t) : zeros(norm, t);
  return dispatch(d, std::vector<Tensor>{x, gamma, beta}, Attrs{{"eps", eps}})[0];
}

void register_nn_norm_ops(Registry& r) {
  // `blocked` (x, y and dx in nChw16c) is set by the pass blocked-layout
  // alone, after autodiff.
  r.add(OpDef{.id = OpId::batch_norm_train, .num_inputs = 3, .type_rule = layout_rule<bn_train_type, 0>,
              .cpu = bn_train_cpu, .backward = bn_train_backward});
  r.add(OpDef{.id = OpId::batch_norm_backward, .num_inputs = 5, .type_rule = layout_rule<bn_backward_type, 0>,
              .cpu = bn_backward_cpu});
  r.add(OpDef{.id = OpId::batch_norm_apply, .num_inputs = 5, .type_rule = layout_rule<bn_apply_type, 0>,
              .cpu = bn_apply_cpu});
  r.add(OpDef{.id = OpId::batch_norm_scale, .num_inputs = 2, .type_rule = bn_scale_type, .cpu = bn_scale_cpu});
  r.add(OpDef{.id = OpId::running_stat_update, .num_inputs = 2, .type_rule = running_update_type,
              .cpu = running_update_cpu, .effect = Effect::stateful});
  r.add(OpDef{.id = OpId::layer_norm, .num_inputs = 3, .type_rule = ln_type, .cpu = ln_cpu,
              .backward = ln_forward_backward});
  r.add(OpDef{.id = OpId::layer_norm_backward, .num_inputs = 5, .type_rule = ln_backward_type, .cpu = ln_backward_cpu});
}

}  // namespace nn::backend
