// Import entries of the reductions (import_table.h): the Reduce* family,
// ArgMax/ArgMin, TopK and Einsum.
#include <algorithm>
#include <cctype>

#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

// The axes to reduce: an input from opset 13 (ReduceSum) or 18 (the rest),
// else an attribute. No axes means all of them, or none at all when
// noop_with_empty_axes is set.
enum class Kind { sum, mean, max, min, prod, l1, l2, log_sum, log_sum_exp, sum_square };

template <Kind K>
Outs reduce_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const bool axes_input = K == Kind::sum ? n.opset() >= 13 : n.opset() >= 18;
  std::vector<int64_t> axes = axes_input ? (n.has_input(1) ? n.ints(1) : std::vector<int64_t>{}) : n.attr_ints("axes");
  const bool keep = n.attr_int("keepdims", 1) != 0;
  if (axes.empty() && n.attr_int("noop_with_empty_axes", 0)) return {x};
  for (auto& a : axes) a = norm_axis(n, a, x.ndim());
  const Axes ax = axes.empty() ? Axes(std::nullopt) : Axes(axes);
  Tensor y;
  switch (K) {
    case Kind::sum: y = sum(x, ax, keep); break;
    case Kind::mean: y = mean(x, ax, keep); break;
    case Kind::max: y = max(x, ax, keep); break;
    case Kind::min: y = min(x, ax, keep); break;
    case Kind::prod: y = prod(x, ax, keep); break;
    case Kind::l1: y = sum(abs(x), ax, keep); break;
    case Kind::l2: y = sqrt(sum(mul(x, x), ax, keep)); break;
    case Kind::log_sum: y = log(sum(x, ax, keep)); break;
    case Kind::log_sum_exp: y = logsumexp(x, ax, keep); break;
    case Kind::sum_square: y = sum(mul(x, x), ax, keep); break;
  }
  // nn widens integer sums to i64 and some maths to f32; ONNX keeps the dtype.
  return {astype(y, x.dtype())};
}

Tensor flip(const Tensor& x, int64_t axis) {
  std::vector<IndexItem> items(size_t(axis + 1));
  items[size_t(axis)].step = -1;
  return index(x, items);
}

// select_last_index: the first extreme of the reversed axis, counted back.
template <bool Max>
Outs arg_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const int64_t axis = norm_axis(n, n.attr_int("axis", 0), x.ndim());
  const bool keep = n.attr_int("keepdims", 1) != 0;
  auto arg = [&](const Tensor& t) { return Max ? argmax(t, axis, keep) : argmin(t, axis, keep); };
  if (!n.attr_int("select_last_index", 0)) return {astype(arg(x), DType::i64)};
  const Tensor i = astype(arg(flip(x, axis)), DType::i64);
  return {sub(scalar_int(x.shape()[int(axis)] - 1), i)};
}

Outs top_k(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const int64_t axis = norm_axis(n, n.attr_int("axis", -1), x.ndim());
  const int64_t k = n.opset() < 10 ? n.attr_int("k", 0) : one_int(n, 1);
  if (k < 0 || k > x.shape()[int(axis)]) n.fail("k=" + std::to_string(k) + " is out of range");
  auto [values, ids] = topk(x, k, axis, n.attr_int("largest", 1) != 0);
  return {values, astype(ids, DType::i64)};
}

// ONNX's Einsum is nn's einsum, `...` and repeated letters (a diagonal)
// included.
Outs einsum_entry(const NodeContext& n) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < n.num_inputs(); ++i) xs.push_back(n.input(i));
  try {
    return {einsum(n.attr_str("equation", ""), xs)};
  } catch (const Error& e) {
    n.fail(e.what());
  }
}

const ImportEntry entries[] = {
    {"ReduceSum", reduce_entry<Kind::sum>},
    {"ReduceMean", reduce_entry<Kind::mean>},
    {"ReduceMax", reduce_entry<Kind::max>},
    {"ReduceMin", reduce_entry<Kind::min>},
    {"ReduceProd", reduce_entry<Kind::prod>},
    {"ReduceL1", reduce_entry<Kind::l1>},
    {"ReduceL2", reduce_entry<Kind::l2>},
    {"ReduceLogSum", reduce_entry<Kind::log_sum>},
    {"ReduceLogSumExp", reduce_entry<Kind::log_sum_exp>},
    {"ReduceSumSquare", reduce_entry<Kind::sum_square>},
    {"ArgMax", arg_entry<true>},
    {"ArgMin", arg_entry<false>},
    {"TopK", top_k},
    {"Einsum", einsum_entry},
};

}  // namespace

std::span<const ImportEntry> reduction_imports() { return entries; }

}  // namespace nn::onnx_io
