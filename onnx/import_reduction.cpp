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

// ONNX's equation may use `...` and repeated letters (a diagonal); nn's
// einsum names every axis once, so `...` becomes unused capital letters and
// a diagonal is taken first (the two axes times an identity, summed).
Outs einsum_entry(const NodeContext& n) {
  std::string eq;
  for (char c : n.attr_str("equation", ""))
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow), rhs = arrow == std::string::npos ? "" : eq.substr(arrow + 2);
  std::vector<std::string> subs;
  for (size_t at = 0;;) {
    const size_t comma = lhs.find(',', at);
    subs.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (subs.size() != n.num_inputs()) n.fail("the equation names " + std::to_string(subs.size()) + " operands");
  std::vector<Tensor> xs;
  std::string ellipsis;
  for (size_t i = 0; i < subs.size(); ++i) {
    Tensor x = n.input(i);
    std::string& s = subs[i];
    if (const size_t dots = s.find("..."); dots != std::string::npos) {
      const int64_t named = int64_t(s.size()) - 3;
      const int64_t extra = x.ndim() - named;
      if (extra < 0) n.fail("operand " + std::to_string(i) + " has too few axes for its subscripts");
      // Right-aligned letters of one pool, as NumPy lines the axes up.
      static const std::string pool = "ABCDEFGHIJKLMNOP";
      if (extra > int64_t(pool.size())) n.fail("`...` stands for too many axes");
      const std::string letters = pool.substr(pool.size() - size_t(extra));
      if (letters.size() > ellipsis.size()) ellipsis = letters;
      s = s.substr(0, dots) + letters + s.substr(dots + 3);
    }
    if (int64_t(s.size()) != x.ndim())
      n.fail("operand " + std::to_string(i) + " has " + std::to_string(x.ndim()) + " axes; its subscripts `" + s +
             "` name " + std::to_string(s.size()));
    for (size_t d = 0; d < s.size(); ++d) {
      const size_t again = s.find(s[d], d + 1);
      if (again == std::string::npos) continue;
      const int64_t size = x.shape()[int(d)];
      if (x.shape()[int(again)] != size) n.fail("a repeated subscript names axes of different sizes");
      std::vector<int64_t> perm;
      for (int64_t k = 0; k < x.ndim(); ++k)
        if (k != int64_t(d) && k != int64_t(again)) perm.push_back(k);
      perm.push_back(int64_t(d)), perm.push_back(int64_t(again));
      x = sum(mul(permute(x, perm), astype(eye(size), x.dtype())), std::vector<int64_t>{-1});
      std::string rest;
      for (int64_t k : perm) rest += s[size_t(k)];
      s = rest.substr(0, rest.size() - 1);
      d = size_t(-1);  // rescan
    }
    xs.push_back(x);
  }
  std::string spec;
  for (size_t i = 0; i < subs.size(); ++i) spec += (i ? "," : "") + subs[i];
  if (arrow != std::string::npos) {
    if (const size_t dots = rhs.find("..."); dots != std::string::npos)
      rhs = rhs.substr(0, dots) + ellipsis + rhs.substr(dots + 3);
    spec += "->" + rhs;
  } else if (!ellipsis.empty()) {
    // NumPy's implicit output: the broadcast axes first, then the letters seen once, sorted.
    std::string once;
    for (char c = 'a'; c <= 'z'; ++c) {
      int count = 0;
      for (const auto& s : subs) count += int(std::count(s.begin(), s.end(), c));
      if (count == 1) once += c;
    }
    spec += "->" + ellipsis + once;
  }
  try {
    return {einsum(spec, xs)};
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
