// Softmax and the classification losses: the registry ops softmax,
// log_softmax (stable: shifted by the max along the axis) with fused backward
// ops softmax_backward and log_softmax_backward; softmax_cross_entropy with
// its fused backward op softmax_cross_entropy_backward; one_hot (no
// gradient); and the composites nll_loss and accuracy.
//
// softmax_cross_entropy(logits [N, C], labels) is the mean over the batch of
// logsumexp(x_i) - x_i[y_i] (labels: class ids [N]) or of
// sum_j y_ij (logsumexp(x_i) - x_ij) (labels: probabilities [N, C]). The
// forward keeps nothing but the loss; the backward recomputes each row's
// softmax (one pass over N*C, cheaper than keeping it alive). Sums
// accumulate in double; per-row losses are added in row order, so the loss
// does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "backend/nn_ops.h"
#include "backend/ops/elementwise.h"  // NN_FLATTEN
#include "backend/ops/float_math.h"
#include "backend/ops/lane_sum.h"
#include "backend/ops/nn_common.h"
#include "backend/ops/register.h"
#include "backend/parallel.h"
#include "backend/simd_clones.h"

namespace nn::backend {
namespace {
using namespace nnops;

// x viewed as [outer, n, inner] around the softmax axis.
struct AxisGeom {
  int64_t outer = 1, n = 1, inner = 1;
};

AxisGeom axis_geometry(const Shape& s, int axis) {
  AxisGeom g;
  for (int d = 0; d < s.ndim(); ++d) (d < axis ? g.outer : d == axis ? g.n : g.inner) *= s[d];
  return g;
}

int softmax_axis(const char* op, const TensorType& x, const Attrs& attrs) {
  const int64_t axis = attrs.get<int64_t>("axis");
  int a = 0;
  if (x.shape.ndim() == 0 || !normalize_axis(axis, x.shape.ndim(), a))
    throw Error(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for " + x.str());
  return a;
}

template <const char* Name>
OutTypes softmax_type(std::span<const TensorType> in, const Attrs& attrs) {
  const int which[] = {0};
  require_float(Name, in, which);
  softmax_axis(Name, in[0], attrs);
  return {TensorType{in[0].dtype, in[0].shape, in[0].device}};
}

// Backward ops: (dy, y) of one shape -> dx.
template <const char* Name>
OutTypes softmax_backward_type(std::span<const TensorType> in, const Attrs& attrs) {
  const int which[] = {0, 1};
  require_float(Name, in, which);
  if (in[0].shape != in[1].shape) throw Error(std::string(Name) + ": operands do not fit: " + describe_operands(in));
  softmax_axis(Name, in[1], attrs);
  return {TensorType{in[1].dtype, in[1].shape, in[1].device}};
}

constexpr char kSoftmax[] = "softmax";
constexpr char kLogSoftmax[] = "log_softmax";
constexpr char kSoftmaxBackward[] = "softmax_backward";
constexpr char kLogSoftmaxBackward[] = "log_softmax_backward";

// Runs f(block, m, s) for each of the `outer` blocks [n, inner], over the
// kernel threads when it pays; m and s are per-task scratch of `inner` doubles.
template <class F>
void over_blocks(const AxisGeom& g, int64_t cost, F f) {
  parallel_for(g.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.n * g.inner * cost)),
               [&](int64_t b, int64_t e) {
                 std::vector<double> m(size_t(g.inner)), s(size_t(g.inner));
                 for (int64_t o = b; o < e; ++o) f(o, m.data(), s.data());
               });
}

// softmax (Log = false) or log_softmax (Log = true) of each line along the axis.
template <class T, bool Log>
void softmax_forward(const T* x, T* y, const AxisGeom& g) {
  const int64_t n = g.n, inner = g.inner;
  over_blocks(g, 4, [&](int64_t o, double* m, double* s) {
    const T* xb = x + o * n * inner;
    T* yb = y + o * n * inner;
    std::fill(m, m + inner, -std::numeric_limits<double>::infinity());
    std::fill(s, s + inner, 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const double v = double(xb[i * inner + j]);
        if (v > m[j] || v != v) m[j] = v;  // NaN sticks: the line's result is NaN
      }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const T e = std::exp(T(double(xb[i * inner + j]) - m[j]));
        s[j] += double(e);
        if constexpr (!Log) yb[i * inner + j] = e;
      }
    if constexpr (Log) {
      // (x - m) - log s, not x - (m + log s): m + log s rounds to m where
      // m is past 2^53 times log s (1e30 in f32 lost its log 2).
      for (int64_t j = 0; j < inner; ++j) s[j] = std::log(s[j]);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) yb[i * inner + j] = T((double(xb[i * inner + j]) - m[j]) - s[j]);
    } else {
      for (int64_t j = 0; j < inner; ++j) s[j] = 1.0 / s[j];
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) yb[i * inner + j] = T(double(yb[i * inner + j]) * s[j]);
    }
  });
}

// The same along the last axis (inner = 1) of one f32 line, the attention's
// and the classifier's case: loops the compiler vectorises (eight partial
// maxima and sums, float_math's exp), at the CPU's widest vectors
// (backend/simd_clones.h), where the loops above make one libm call and wait
// on one double add per element. The same roundings as above but exp's
// (within 2 ulp of libm's) and the sum's order.
template <bool Log>
NN_SIMD_CLONES NN_FLATTEN void softmax_line(const float* x, float* y, int64_t n) {
  // The max, NaN skipped: a NaN's exp makes the sum, hence the line, NaN.
  constexpr int kLanes = 8;
  float lane[kLanes];
  for (float& l : lane) l = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) lane[i % kLanes] = x[i] > lane[i % kLanes] ? x[i] : lane[i % kLanes];
  float m = lane[0];
  for (float l : lane) m = l > m ? l : m;
  if constexpr (Log) {
    const double log_sum = std::log(lane_sum(n, [&](int64_t i) { return double(float_math::exp(x[i] - m)); }));
    for (int64_t i = 0; i < n; ++i) y[i] = float((double(x[i]) - double(m)) - log_sum);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = float_math::exp(x[i] - m);
    const double r = 1.0 / lane_sum(n, [&](int64_t i) { return double(y[i]); });
    for (int64_t i = 0; i < n; ++i) y[i] = float(double(y[i]) * r);
  }
}

// softmax's gradient along one f32 line, vectorised as softmax_line is: the
// same formula, the sum in eight partial sums.
NN_SIMD_CLONES NN_FLATTEN void softmax_grad_line(const float* dy, const float* y, float* dx, int64_t n) {
  const double s = lane_sum(n, [&](int64_t i) { return double(dy[i]) * double(y[i]); });
  for (int64_t i = 0; i < n; ++i) dx[i] = float(double(y[i]) * (double(dy[i]) - s));
}

// f(line) for each of the `outer` lines of g (inner = 1), over the kernel
// threads when it pays; `cost` is per element.
template <class F>
void over_lines(const AxisGeom& g, int64_t cost, F f) {
  parallel_for(g.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, cost * g.n)),
               [&](int64_t b, int64_t e) {
                 for (int64_t o = b; o < e; ++o) f(o * g.n);
               });
}

template <bool Log>
void softmax_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  AxisGeom g = axis_geometry(in[0].shape(), softmax_axis(Log ? kLogSoftmax : kSoftmax, in[0].type(), attrs));
  if (out[0].numel() == 0) return;
  if (out[0].dtype() == DType::f64) softmax_forward<double, Log>(in[0].data<double>(), out[0].data<double>(), g);
  else if (g.inner == 1)
    over_lines(g, 4, [x = in[0].data<float>(), y = out[0].data<float>(), n = g.n](int64_t at) {
      softmax_line<Log>(x + at, y + at, n);
    });
  else softmax_forward<float, Log>(in[0].data<float>(), out[0].data<float>(), g);
}

// softmax: dx = y (dy - sum(dy y)); log_softmax: dx = dy - exp(y) sum(dy).
template <class T, bool Log>
void softmax_grad(const T* dy, const T* y, T* dx, const AxisGeom& g) {
  const int64_t n = g.n, inner = g.inner;
  over_blocks(g, 3, [&](int64_t o, double* s, double*) {
    const int64_t base = o * n * inner;
    std::fill(s, s + inner, 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t k = base + i * inner + j;
        s[j] += Log ? double(dy[k]) : double(dy[k]) * double(y[k]);
      }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t k = base + i * inner + j;
        if constexpr (Log) dx[k] = T(double(dy[k]) - std::exp(double(y[k])) * s[j]);
        else dx[k] = T(double(y[k]) * (double(dy[k]) - s[j]));
      }
  });
}

template <bool Log>
void softmax_backward_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  AxisGeom g = axis_geometry(in[1].shape(), softmax_axis(Log ? kLogSoftmaxBackward : kSoftmaxBackward, in[1].type(), attrs));
  if (out[0].numel() == 0) return;
  if (out[0].dtype() == DType::f64)
    softmax_grad<double, Log>(in[0].data<double>(), in[1].data<double>(), out[0].data<double>(), g);
  else if (!Log && g.inner == 1)
    over_lines(g, 3, [dy = in[0].data<float>(), y = in[1].data<float>(), dx = out[0].data<float>(), n = g.n](int64_t at) {
      softmax_grad_line(dy + at, y + at, dx + at, n);
    });
  else softmax_grad<float, Log>(in[0].data<float>(), in[1].data<float>(), out[0].data<float>(), g);
}

template <bool Log>
std::vector<Tensor> softmax_backward_rule(const BackwardArgs& a) {
  static const OpDef& d = op(Log ? OpId::log_softmax_backward : OpId::softmax_backward);
  return {call(d, {a.grads[0], a.outputs[0]}, a.attrs)};
}

// ---- softmax_cross_entropy: (logits [N, C], labels) ----
bool labels_are_ids(const TensorType& labels) { return is_integral(labels.dtype); }

void check_ce_operands(const char* op, const TensorType& x, const TensorType& y) {
  if (x.shape.ndim() != 2 || !is_floating(x.dtype))
    throw Error(std::string(op) + ": logits must be a 2-d float tensor [N, C], got " + x.str());
  if (labels_are_ids(y)) {
    if (y.shape.ndim() != 1 || y.shape[0] != x.shape[0])
      throw Error(std::string(op) + ": labels " + y.str() + " do not fit logits " + x.str() + ": class ids need shape [" +
                  std::to_string(x.shape[0]) + "]");
  } else if (y.dtype != x.dtype || y.shape != x.shape) {
    throw Error(std::string(op) + ": labels " + y.str() + " do not fit logits " + x.str() +
                ": labels are integer class ids [N] or probabilities of the logits' shape and dtype");
  }
}

OutTypes ce_type(std::span<const TensorType> in, const Attrs&) {
  check_ce_operands("softmax_cross_entropy", in[0], in[1]);
  return {TensorType{in[0].dtype, Shape{}, in[0].device}};
}

OutTypes ce_backward_type(std::span<const TensorType> in, const Attrs&) {
  check_ce_operands("softmax_cross_entropy_backward", in[1], in[2]);
  if (in[0].shape.ndim() != 0 || in[0].dtype != in[1].dtype)
    throw Error("softmax_cross_entropy_backward: gradient " + in[0].str() + " does not fit the loss of " + in[1].str());
  return {TensorType{in[1].dtype, in[1].shape, in[1].device}};
}

// Class ids as i64, each checked against the number of classes. Read before
// any parallel region: an Error must not leave one.
std::vector<int64_t> read_ids(const char* op, const Tensor& ids, int64_t classes, const char* what) {
  std::vector<int64_t> v(size_t(ids.numel()));
  visit_dtype(ids.dtype(), [&]<class I>() {
    const I* p = ids.data<I>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(p[i]);
  });
  for (int64_t id : v)
    if (id < 0 || id >= classes)
      throw Error(std::string(op) + ": " + what + " " + std::to_string(id) + " is out of range for " +
                  std::to_string(classes) + " classes");
  return v;
}

// Runs f(row) for each of the rows, over the kernel threads when it pays.
template <class F>
void over_rows(int64_t rows, int64_t cols, F f) {
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, cols * 4)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) f(r);
  });
}

// A row's log-sum-exp, kept as its max and the log of the shifted sum:
// x_j's log-probability is (x_j - max) - log_sum, which keeps log 2 of
// [1e30, 1e30] where max + log_sum would round to max.
struct LogSumExp {
  double max = 0, log_sum = 0;
  double log_prob(double x) const { return (x - max) - log_sum; }
};

LogSumExp row_logsumexp(const double* x, int64_t c) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < c; ++j)
    if (x[j] > m || x[j] != x[j]) m = x[j];
  if (!std::isfinite(m)) return {m, 0};  // all -inf (or inf, NaN): no shift would help
  double s = 0;
  for (int64_t j = 0; j < c; ++j) s += std::exp(x[j] - m);
  return {m, std::log(s)};
}

// The same for an f32 row, vectorised as softmax_line (eight partial maxima,
// float_math's exp, eight partial sums), where the loop above makes a libm
// call per element: the digits CNN's loss and its gradient took 11 us a
// step for 64 x 10 logits.
NN_SIMD_CLONES NN_FLATTEN LogSumExp row_logsumexp(const float* x, int64_t c) {
  constexpr int kLanes = 8;
  float lane[kLanes];
  for (float& l : lane) l = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < c; ++i) {
    float& l = lane[i % kLanes];
    l = x[i] > l || x[i] != x[i] ? x[i] : l;  // a NaN sticks
  }
  float m = lane[0];
  for (float l : lane) m = l > m || l != l ? l : m;
  if (!std::isfinite(m)) return {double(m), 0};
  return {double(m), std::log(lane_sum(c, [&](int64_t i) { return double(float_math::exp(x[i] - m)); }))};
}

template <class T>
void ce_forward(const Tensor& logits, const Tensor& labels, Tensor& out) {
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  const T* x = logits.data<T>();
  std::vector<double> loss(static_cast<size_t>(n));
  if (labels_are_ids(labels.type())) {
    std::vector<int64_t> ids = read_ids("softmax_cross_entropy", labels, c, "label");
    over_rows(n, c, [&](int64_t i) {
      const T* xi = x + i * c;
      loss[size_t(i)] = -row_logsumexp(xi, c).log_prob(double(xi[ids[size_t(i)]]));
    });
  } else {
    const T* y = labels.data<T>();
    over_rows(n, c, [&](int64_t i) {
      const T *xi = x + i * c, *yi = y + i * c;
      const LogSumExp lse = row_logsumexp(xi, c);
      double l = 0;
      for (int64_t j = 0; j < c; ++j)
        if (yi[j] != T(0)) l -= double(yi[j]) * lse.log_prob(double(xi[j]));  // 0 * inf stays out
      loss[size_t(i)] = l;
    });
  }
  double total = 0;
  for (double l : loss) total += l;
  *out.data<T>() = T(total / double(n));  // n = 0: NaN, as a mean over nothing
}

void ce_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  if (out[0].dtype() == DType::f64) ce_forward<double>(in[0], in[1], out[0]);
  else ce_forward<float>(in[0], in[1], out[0]);
}

// dlogits = g / N * (softmax(x) * sum(y) - y), y the one-hot of the ids or the probabilities.
template <class T>
void ce_backward(const Tensor& g, const Tensor& logits, const Tensor& labels, Tensor& out) {
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  const T* x = logits.data<T>();
  T* dx = out.data<T>();
  const double scale = double(*g.data<T>()) / double(n);
  const bool ids = labels_are_ids(labels.type());
  std::vector<int64_t> idv = ids ? read_ids("softmax_cross_entropy", labels, c, "label") : std::vector<int64_t>{};
  const T* y = ids ? nullptr : labels.data<T>();
  over_rows(n, c, [&](int64_t i) {
    const T* xi = x + i * c;
    T* di = dx + i * c;
    if constexpr (std::is_same_v<T, float>) {  // vectorised: softmax_line, then the rest
      softmax_line<false>(xi, di, c);
      if (ids) {
        for (int64_t j = 0; j < c; ++j) di[j] = float(scale * double(di[j]));
        di[idv[size_t(i)]] = float(double(di[idv[size_t(i)]]) - scale);
      } else {
        const T* yi = y + i * c;
        const double sy = lane_sum(c, [&](int64_t j) { return double(yi[j]); });
        for (int64_t j = 0; j < c; ++j) di[j] = float(scale * (double(di[j]) * sy - double(yi[j])));
      }
      return;
    }
    const LogSumExp lse = row_logsumexp(xi, c);
    if (ids) {
      for (int64_t j = 0; j < c; ++j) di[j] = T(scale * std::exp(lse.log_prob(double(xi[j]))));
      di[idv[size_t(i)]] = T(double(di[idv[size_t(i)]]) - scale);
    } else {
      const T* yi = y + i * c;
      double sy = 0;
      for (int64_t j = 0; j < c; ++j) sy += double(yi[j]);
      for (int64_t j = 0; j < c; ++j) di[j] = T(scale * (std::exp(lse.log_prob(double(xi[j]))) * sy - double(yi[j])));
    }
  });
}

void ce_backward_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  if (out[0].numel() == 0) return;
  if (out[0].dtype() == DType::f64) ce_backward<double>(in[0], in[1], in[2], out[0]);
  else ce_backward<float>(in[0], in[1], in[2], out[0]);
}

std::vector<Tensor> ce_backward_rule(const BackwardArgs& a) {
  static const OpDef& d = op(OpId::softmax_cross_entropy_backward);
  const Tensor &g = a.grads[0], &logits = a.inputs[0], &labels = a.inputs[1];
  Tensor dlogits = a.needs_grad(0) ? call(d, {g, logits, labels}) : Tensor();
  if (labels_are_ids(labels.type()) || !a.needs_grad(1)) return {dlogits, Tensor()};
  // Probabilities get a gradient too: d loss / d y_ij = -log_softmax(x)_ij g / N.
  Tensor per = div(g, scalar(double(logits.shape()[0]), DType::f64, /*weak=*/true));
  return {dlogits, mul(neg(log_softmax(logits, 1)), per)};
}

// ---- one_hot: ids of any integer shape -> f32[..., n] ----
OutTypes one_hot_type(std::span<const TensorType> in, const Attrs& attrs) {
  if (!is_integral(in[0].dtype)) throw Error("one_hot: ids must be an integer tensor, got " + in[0].str());
  const int64_t n = attrs.get<int64_t>("n");
  if (n < 0) throw Error("one_hot: the number of classes must be non-negative, got " + std::to_string(n));
  Shape s = in[0].shape;
  s.push_back(n);
  return {TensorType{DType::f32, s, in[0].device}};
}

void one_hot_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const int64_t n = attrs.get<int64_t>("n");
  std::vector<int64_t> ids = read_ids("one_hot", in[0], n, "id");
  float* o = out[0].data<float>();
  std::fill(o, o + out[0].numel(), 0.0f);
  for (size_t i = 0; i < ids.size(); ++i) o[int64_t(i) * n + ids[i]] = 1.0f;
}

Tensor softmax_call(const OpDef& d, const Tensor& x, int64_t axis) { return call(d, {as_float(x)}, Attrs{{"axis", axis}}); }

// logp[i, ids[i]] of log-probabilities [N, C] and class ids [N]: [N].
Tensor picked_log_probs(const Tensor& logp, const Tensor& ids) {
  return reshape(gather(logp, unsqueeze(ids, 1), 1), {ids.shape()[0]});
}

using Loss = Tensor (*)(const Tensor&, const Tensor&, Reduction);

// PyTorch's K-dimensional form: x [N, C, d1, ..., dk] with class ids
// [N, d1, ..., dk] or probabilities of x's shape is the [N·d1···dk, C] case
// with the class axis moved last. Per-position losses come back
// [N, d1, ..., dk]; the mean is over all of them.
Tensor over_positions(const char* op, const Tensor& x, const Tensor& labels, Reduction r, Loss loss) {
  std::vector<int64_t> to_last, ids_shape{x.shape()[0]};
  to_last.push_back(0);
  for (int i = 2; i < x.ndim(); ++i) {
    to_last.push_back(i);
    ids_shape.push_back(x.shape()[i]);
  }
  to_last.push_back(1);
  const int64_t c = x.shape()[1];
  const bool ids = is_integral(labels.dtype());
  if (ids ? labels.shape().vec() != ids_shape : labels.shape() != x.shape())
    throw Error(std::string(op) + ": labels " + labels.type().str() + " do not fit " + x.type().str() +
                ": with classes on axis 1, class ids need shape " + Shape::of(ids_shape).str() +
                " and probabilities " + x.shape().str());
  const Tensor rows = reshape(permute(x, to_last), {-1, c});
  const Tensor targets = ids ? reshape(labels, {-1}) : reshape(permute(labels, to_last), {-1, c});
  const Tensor losses = loss(rows, targets, r);
  return r == Reduction::none ? reshape(losses, ids_shape) : losses;
}

}  // namespace

// ---- nn_ops.h ------------------------------------------------------------------
Tensor softmax(const Tensor& x, int64_t axis) {
  static const OpDef& d = op(OpId::softmax);
  return softmax_call(d, x, axis);
}

Tensor log_softmax(const Tensor& x, int64_t axis) {
  static const OpDef& d = op(OpId::log_softmax);
  return softmax_call(d, x, axis);
}

Tensor softmax_cross_entropy(const Tensor& logits_in, const Tensor& labels_in, Reduction r) {
  static const OpDef& d = op(OpId::softmax_cross_entropy);
  Tensor logits = as_float(logits_in), labels = labels_in;
  // Probabilities compute in the logits' dtype (a cast the trace shows).
  if (!is_integral(labels.dtype()) && labels.dtype() != DType::boolean) labels = astype(labels, logits.dtype());
  // One unbatched example: logits [C] with a 0-d id or [C] probabilities, as in PyTorch.
  const int label_ndim = is_integral(labels.dtype()) ? 0 : 1;
  if (logits.ndim() > 2) return over_positions("softmax_cross_entropy", logits, labels, r, softmax_cross_entropy);
  const bool unbatched = logits.ndim() == 1 && labels.ndim() == label_ndim;
  if (unbatched) {
    logits = unsqueeze(logits, 0);
    labels = unsqueeze(labels, 0);
  }
  if (r == Reduction::mean) return call(d, {logits, labels});  // the fused op and its backward
  // The per-example losses: the fused op checks the operands first.
  call(d, {logits, labels});
  Tensor logp = log_softmax(logits, -1);
  // Class ids pick their log-probability; probabilities leave out a class
  // of probability 0 whose logit is -inf (masked out), as the fused mean
  // does: 0 * -inf would be NaN. Only there: the labels' gradient is -logp
  // at every other class, probability 0 included.
  Tensor losses;
  if (is_integral(labels.dtype())) {
    losses = neg(picked_log_probs(logp, labels));
  } else {
    const Tensor zero = scalar(0.0, logp.dtype(), /*weak=*/true);
    const Tensor masked = logical_and(eq(labels, zero), eq(logp, scalar(-INFINITY, logp.dtype(), /*weak=*/true)));
    losses = neg(sum(mul(where(masked, zero, logp), labels), std::vector<int64_t>{-1}));
  }
  return reduce_losses(unbatched ? reshape(losses, {}) : losses, r);
}

Tensor one_hot(const Tensor& ids, int64_t n) {
  static const OpDef& d = op(OpId::one_hot);
  return call(d, {ids}, Attrs{{"n", n}});
}

Tensor nll_loss(const Tensor& logp_in, const Tensor& ids_in, Reduction r) {
  Tensor logp = as_float(logp_in), ids = ids_in;
  // One unbatched example: [C] with a 0-d id, as in PyTorch.
  if (logp.ndim() == 1 && ids.ndim() == 0) {
    const Tensor loss = nll_loss(unsqueeze(logp, 0), unsqueeze(ids, 0), r);
    return r == Reduction::none ? reshape(loss, {}) : loss;
  }
  if (logp.ndim() > 2 && is_integral(ids.dtype())) return over_positions("nll_loss", logp, ids, r, nll_loss);
  if (logp.ndim() != 2)
    throw Error("nll_loss: log-probabilities must be [N, C] (or one example's [C] with a 0-d id), got " +
                logp.type().str());
  if (!is_integral(ids.dtype()) || ids.ndim() != 1 || ids.shape()[0] != logp.shape()[0])
    throw Error("nll_loss: labels " + ids.type().str() + " do not fit log-probabilities " + logp.type().str() +
                ": class ids need an integer tensor of shape [" + std::to_string(logp.shape()[0]) + "]");
  // -mean_i logp[i, ids[i]], gathered: a class of probability 0 (logp -inf)
  // that is no target leaves the loss finite.
  Tensor picked = renaming_errors("gather: id", "nll_loss: label", [&] { return picked_log_probs(logp, ids); });
  return reduce_losses(neg(picked), r);
}

Tensor accuracy(const Tensor& logits, const Tensor& labels) {
  const TensorType lt = logits.type(), yt = labels.type();
  if (logits.ndim() < 1) throw Error("accuracy: logits must have a class axis, got " + lt.str());
  Shape rows = logits.shape();
  rows.erase(rows.ndim() - 1);
  Tensor truth;
  if (is_integral(labels.dtype()) && labels.shape() == rows) truth = labels;
  else if (labels.shape() == logits.shape()) truth = argmax(labels, -1);
  else
    throw Error("accuracy: labels " + yt.str() + " do not fit logits " + lt.str() + ": class ids need shape " +
                rows.str() + ", probabilities the logits' shape");
  if (truth.same(labels)) {
    // Class ids out of range are an error, as in the losses (they counted
    // as misses): take checks them, in graphs too, picking each id from
    // 0..classes-1, which gives it back.
    static const OpDef& pick = op(OpId::take);
    const int64_t classes = logits.shape()[logits.ndim() - 1];
    const Tensor ids = to_device(arange(0, double(classes), 1, truth.dtype()), truth.device());
    truth = call(pick, {ids, truth}, Attrs{{"name", std::string("accuracy")}});
  }
  return mean(astype(eq(argmax(logits, -1), truth), DType::f32));
}

void register_nn_softmax_ops(Registry& r) {
  r.add(OpDef{.id = OpId::softmax, .num_inputs = 1, .type_rule = softmax_type<kSoftmax>, .cpu = softmax_cpu<false>,
              .backward = softmax_backward_rule<false>});
  r.add(OpDef{.id = OpId::log_softmax, .num_inputs = 1, .type_rule = softmax_type<kLogSoftmax>,
              .cpu = softmax_cpu<true>, .backward = softmax_backward_rule<true>});
  r.add(OpDef{.id = OpId::softmax_backward, .num_inputs = 2, .type_rule = softmax_backward_type<kSoftmaxBackward>,
              .cpu = softmax_backward_cpu<false>});
  r.add(OpDef{.id = OpId::log_softmax_backward, .num_inputs = 2, .type_rule = softmax_backward_type<kLogSoftmaxBackward>,
              .cpu = softmax_backward_cpu<true>});
  r.add(OpDef{.id = OpId::softmax_cross_entropy, .num_inputs = 2, .type_rule = ce_type, .cpu = ce_cpu,
              .backward = ce_backward_rule});
  r.add(OpDef{.id = OpId::softmax_cross_entropy_backward, .num_inputs = 3, .type_rule = ce_backward_type,
              .cpu = ce_backward_cpu});
  r.add(OpDef{.id = OpId::one_hot, .num_inputs = 1, .type_rule = one_hot_type, .cpu = one_hot_cpu});
}

}  // namespace nn::backend
