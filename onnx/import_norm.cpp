// Import entries of the normalisations and the softmax family
// (import_table.h), composed from nn's reductions so that every axis and
// statistic ONNX allows is covered.
#include "backend/nn_ops.h"
#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"
#include "onnx/tensor_proto.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

// A per-channel [C] tensor shaped to broadcast against x [N, C, ...].
Tensor per_channel(const Tensor& v, const Tensor& x) {
  std::vector<int64_t> s(size_t(x.ndim()), 1);
  s[1] = v.numel();
  return reshape(v, s);
}

std::vector<int64_t> all_but_channels(const Tensor& x) {
  std::vector<int64_t> axes{0};
  for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
  return axes;
}

// Inference uses the running statistics; training_mode (opset 14) the
// batch's, and also gives the updated running statistics.
Outs batch_norm_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  if (x.ndim() < 2) n.fail("needs an input of rank 2 or more");
  const Tensor scale = per_channel(n.input(1), x), bias = per_channel(n.input(2), x);
  const Tensor run_mean = n.input(3), run_var = n.input(4);
  const double eps = n.attr_float("epsilon", 1e-5), momentum = n.attr_float("momentum", 0.9);
  const bool training = n.attr_int("training_mode", 0) != 0;
  auto normalise = [&](const Tensor& m, const Tensor& v) {
    return add(mul(div(sub(x, m), sqrt(add(v, like(eps, v)))), scale), bias);
  };
  if (!training) return {normalise(per_channel(run_mean, x), per_channel(run_var, x))};
  const auto axes = all_but_channels(x);
  const Tensor m = mean(x, axes), v = var(x, axes);
  const Tensor y = normalise(per_channel(m, x), per_channel(v, x));
  auto blend = [&](const Tensor& running, const Tensor& batch) {
    return add(mul(running, like(momentum, running)), mul(batch, like(1 - momentum, batch)));
  };
  return {y, blend(run_mean, m), blend(run_var, v)};
}

// Normalises over axes [axis, rank); also gives the mean and 1/std, with
// the normalised axes kept as 1, in stash_type (f32 by default), which the
// statistics are computed in.
Outs layer_norm_entry(const NodeContext& n) {
  const Tensor& x0 = n.input(0);
  const int64_t axis = norm_axis(n, n.attr_int("axis", -1), x0.ndim());
  const double eps = n.attr_float("epsilon", 1e-5);
  const auto stash = dtype_of(int(n.attr_int("stash_type", onnx::TensorProto::FLOAT)));
  if (!stash || !is_floating(*stash)) n.fail("attribute stash_type must name a float type");
  const Tensor x = astype(x0, *stash);
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < x.ndim(); ++i) axes.push_back(i);
  const Tensor m = mean(x, axes, true);
  const Tensor d = sub(x, m);
  const Tensor inv = div(like(1, x), sqrt(add(mean(mul(d, d), axes, true), like(eps, x))));
  Tensor y = astype(mul(d, inv), x0.dtype());
  y = mul(y, n.input(1));
  if (n.has_input(2)) y = add(y, n.input(2));
  return {y, m, inv};
}

Outs instance_norm_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  if (x.ndim() < 3) n.fail("needs an input of rank 3 or more");
  std::vector<int64_t> axes;
  for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
  const double eps = n.attr_float("epsilon", 1e-5);
  const Tensor m = mean(x, axes, true);
  const Tensor d = sub(x, m);
  const Tensor v = mean(mul(d, d), axes, true);
  const Tensor y = div(d, sqrt(add(v, like(eps, v))));
  return {add(mul(y, per_channel(n.input(1), x)), per_channel(n.input(2), x))};
}

// Before opset 13 the input is seen as 2-d, [prod(d[:axis]), prod(d[axis:])],
// and the op works on its rows; from 13 it works along one axis.
template <int Kind>  // 0 softmax, 1 log_softmax, 2 hardmax
Outs softmax_family(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const bool old = n.opset() < 13;
  const int64_t r = x.ndim();
  int64_t axis = n.attr_int("axis", old ? 1 : -1);
  if (r == 0) n.fail("needs an input of rank 1 or more");
  if (axis < -r || axis >= r) n.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  Tensor t = x;
  if (old) {
    int64_t rows = 1;
    for (int64_t i = 0; i < axis; ++i) rows *= x.shape()[int(i)];
    t = reshape(x, {rows, -1});
    axis = 1;
  }
  Tensor y;
  if (Kind == 0) {
    y = softmax(t, axis);
  } else if (Kind == 1) {
    y = log_softmax(t, axis);
  } else {
    const int64_t size = t.shape()[int(axis)];
    std::vector<int64_t> shape(size_t(t.ndim()), 1);
    shape[size_t(axis)] = size;
    const Tensor first = argmax(t, axis, true);
    y = astype(eq(first, reshape(arange(0, double(size), 1, DType::i64), shape)), t.dtype());
  }
  return {old ? reshape(y, dims_of(x)) : y};
}

// Each channel divided by (bias + alpha/size * the sum of squares over the
// `size` channels around it)^beta.
Outs lrn_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  if (x.ndim() < 3) n.fail("needs an input of rank 3 or more");
  const int64_t size = n.attr_int("size", 0);
  if (size < 1) n.fail("attribute size must be positive");
  const double alpha = n.attr_float("alpha", 1e-4), beta = n.attr_float("beta", 0.75), bias = n.attr_float("bias", 1);
  const int64_t C = x.shape()[1], before = (size - 1) / 2, after = size - 1 - before;
  const Tensor sq = pad(mul(x, x), {{0, 0}, {before, after}}, 0);
  Tensor total;
  for (int64_t k = 0; k < size; ++k) {
    std::vector<IndexItem> items(2);
    items[1].start = k, items[1].stop = k + C;
    const Tensor part = index(sq, items);
    total = total.defined() ? add(total, part) : part;
  }
  return {div(x, pow(add(mul(total, like(alpha / double(size), x)), like(bias, x)), like(beta, x)))};
}

// (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9), ONNX's function body.
Outs mvn_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  std::vector<int64_t> axes = n.attr_ints("axes", {0, 2, 3});
  for (auto& a : axes) a = norm_axis(n, a, x.ndim());
  const Tensor m = mean(x, axes, true);
  const Tensor v = sub(mean(mul(x, x), axes, true), mul(m, m));
  return {div(sub(x, m), add(sqrt(v), like(1e-9, x)))};
}

const ImportEntry entries[] = {
    {"BatchNormalization", batch_norm_entry},
    {"LayerNormalization", layer_norm_entry},
    {"InstanceNormalization", instance_norm_entry},
    {"Softmax", softmax_family<0>},
    {"LogSoftmax", softmax_family<1>},
    {"Hardmax", softmax_family<2>},
    {"LRN", lrn_entry},
    {"MeanVarianceNormalization", mvn_entry},
};

}  // namespace

std::span<const ImportEntry> norm_imports() { return entries; }

}  // namespace nn::onnx_io
