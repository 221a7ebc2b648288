// Sorting along one axis (SPEC §13): the registry op argsort (the i64
// positions that sort each line, or its first k for topk), and the
// functions sort, argsort and topk. Values are a gather of x at those
// positions, so their gradient is gather's (a scatter of g back to where
// each value came from); the positions get none.
//
// Ties keep their order (a stable sort, in both directions); NaN sorts as
// larger than every number, as PyTorch's: last ascending, first descending.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "backend/ops.h"
#include "backend/ops/axis.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/register.h"
#include "backend/parallel.h"

namespace nn::backend {
namespace {

// `k`: how many positions each line keeps (absent: all); `name`: the function
// that called the op, for messages (topk).
OutTypes argsort_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType& x = in[0];
  const std::string name = attrs.get_or<std::string>("name", "argsort");
  const int axis = checked_axis(name.c_str(), attrs.get<int64_t>("axis"), x);
  Shape out = x.shape;
  if (attrs.has("k")) {
    const int64_t k = attrs.get<int64_t>("k"), n = x.shape[axis];
    if (k < 0 || k > n)
      throw Error(name + ": k = " + std::to_string(k) + " is out of range for axis " + std::to_string(axis) +
                  " of size " + std::to_string(n) + " in " + x.str());
    out[axis] = k;
  }
  return {TensorType{DType::i64, out, x.device}};
}

// a before b ascending: NaN is the largest.
template <class T>
bool less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

void argsort_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& x = in[0];
  const std::string name = attrs.get_or<std::string>("name", "argsort");
  const int axis = checked_axis(name.c_str(), attrs.get<int64_t>("axis"), x.type());
  const bool descending = attrs.get_or<bool>("descending", false);
  const AxisGeometry g(x.shape(), axis);
  const int64_t k = out[0].shape()[axis];
  ew::check_cpu_dtype(name.c_str(), x.dtype());
  int64_t* dst = out[0].data<int64_t>();
  visit_dtype(x.dtype(), [&]<class T>() {
    const T* src = x.data<T>();
    const int64_t lines = g.outer * g.inner;
    parallel_for(lines, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.n * 8)),
                 [&](int64_t b, int64_t e) {
                   std::vector<int64_t> order(size_t(g.n));
                   for (int64_t l = b; l < e; ++l) {
                     const int64_t o = l / g.inner, i = l % g.inner;
                     const T* line = src + o * g.n * g.inner + i;
                     std::iota(order.begin(), order.end(), int64_t(0));
                     auto at = [&](int64_t j) { return line[j * g.inner]; };
                     if (descending)
                       std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return less(at(q), at(p)); });
                     else
                       std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return less(at(p), at(q)); });
                     for (int64_t j = 0; j < k; ++j) dst[(o * k + j) * g.inner + i] = order[size_t(j)];
                   }
                 });
  });
}

Tensor sorted_positions(const Tensor& x, int64_t axis, bool descending, std::optional<int64_t> k,
                        const char* name) {
  Attrs a{{"axis", axis}};
  if (descending) a.set("descending", true);
  if (k) a.set("k", *k);
  if (std::string(name) != "argsort") a.set("name", std::string(name));
  return call(op(OpId::argsort), {x}, a);
}

}  // namespace

Tensor argsort(const Tensor& x, int64_t axis, bool descending) {
  return sorted_positions(x, axis, descending, std::nullopt, "argsort");
}

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t axis, bool descending) {
  Tensor ids = sorted_positions(x, axis, descending, std::nullopt, "sort");
  return {gather(x, ids, axis), ids};
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t axis, bool largest) {
  Tensor ids = sorted_positions(x, axis, largest, k, "topk");
  return {gather(x, ids, axis), ids};
}

void register_sort_ops(Registry& r) {
  r.add(OpDef{.id = OpId::argsort, .num_inputs = 1, .type_rule = argsort_type, .cpu = argsort_kernel});
}

}  // namespace nn::backend
