// Running sums and products along one axis (SPEC §13): cumsum and cumprod,
// as PyTorch's. Integer and bool inputs give i64 (as sum does); floats keep
// their dtype and accumulate in double, as the reductions do. The attribute
// `reverse` runs the scan from the end of the axis (the gradient of a scan
// is the reverse scan); nn's functions always scan forward.
//
// cumprod's gradient is exact with zeros among the inputs, as PyTorch's,
// and made of differentiable ops (so it has its own gradient).
#include <string>
#include <type_traits>
#include <vector>

#include "backend/ops.h"
#include "backend/ops/axis.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/register.h"
#include "backend/parallel.h"

namespace nn::backend {
namespace {

template <OpId Id>
OutTypes scan_type(std::span<const TensorType> in, const Attrs& attrs) {
  TensorType t = in[0];
  checked_axis(op_name(Id), attrs.get<int64_t>("axis"), t);
  if (!is_floating(t.dtype)) t.dtype = DType::i64;
  t.weak = false;
  return {t};
}

template <OpId Id>
void scan_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& x = in[0];
  const int axis = checked_axis(op_name(Id), attrs.get<int64_t>("axis"), x.type());
  const bool reverse = attrs.get_or<bool>("reverse", false);
  const AxisGeometry g(x.shape(), axis);
  ew::check_cpu_dtype(op_name(Id), x.dtype());
  visit_dtype(x.dtype(), [&]<class T>() {
    using Out = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    const T* src = x.data<T>();
    Out* dst = out[0].data<Out>();
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.n * g.inner));
    parallel_for(g.outer, grain, [&](int64_t b, int64_t e) {
      std::vector<Acc> acc(size_t(g.inner));
      for (int64_t o = b; o < e; ++o) {
        std::fill(acc.begin(), acc.end(), Acc(Id == OpId::cumsum ? 0 : 1));
        for (int64_t s = 0; s < g.n; ++s) {
          const int64_t j = reverse ? g.n - 1 - s : s, base = (o * g.n + j) * g.inner;
          for (int64_t i = 0; i < g.inner; ++i) {
            const Acc v = Acc(src[base + i]);
            if constexpr (std::is_integral_v<Acc>) {  // integer sums and products wrap, as + and * do
              const uint64_t a = uint64_t(acc[size_t(i)]), u = uint64_t(v);
              acc[size_t(i)] = Acc(Id == OpId::cumsum ? a + u : a * u);
            } else if constexpr (Id == OpId::cumsum) acc[size_t(i)] += v;
            else acc[size_t(i)] *= v;
            dst[base + i] = Out(acc[size_t(i)]);
          }
        }
      }
    });
  });
}

Tensor scan(OpId id, const Tensor& x, int64_t axis, bool reverse) {
  Attrs a{{"axis", axis}};
  if (reverse) a.set("reverse", true);
  return call(op(id), {x}, a);
}

// y_j = sum_{i <= j} x_i: dx_i = sum_{j >= i} g_j, the reverse scan of g.
std::vector<Tensor> cumsum_backward(const BackwardArgs& a) {
  if (!bw::wants(a.inputs[0])) return {Tensor()};
  return {scan(OpId::cumsum, a.grads[0], a.attrs.get<int64_t>("axis"), !a.attrs.get_or<bool>("reverse", false))};
}

// y_j = prod_{i <= j} x_i: dx_i = sum_{j >= i} g_j prod_{k <= j, k != i} x_k.
// Where x_i != 0 that is sum_{j >= i} g_j y_j / x_i (PyTorch's formula for
// nonzero inputs). Where x_i == 0, every product after the axis's first zero
// holds one, so dx_i = 0 past it; at the first zero z, dx_z = sum_{j >= z}
// g_j y'_j, y' the scan with x_z taken as 1. (x = [2, 0, 3, 0, 4], g = 1:
// dx = [1, 8, 0, 0, 0].) The division is by x with its zeros as 1, so that
// the branch `where` drops holds no inf whose gradient would be NaN.
std::vector<Tensor> cumprod_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  const int64_t axis = a.attrs.get<int64_t>("axis");
  const bool reverse = a.attrs.get_or<bool>("reverse", false);
  auto sum_after = [&](const Tensor& t) { return scan(OpId::cumsum, t, axis, !reverse); };
  const Tensor& g = a.grads[0];
  const Tensor one = bw::num(1), zero = eq(x, bw::num(0));
  const Tensor nonzero_x = div(sum_after(mul(g, a.outputs[0])), where(zero, one, x));
  const Tensor first_zero = logical_and(zero, eq(scan(OpId::cumsum, zero, axis, reverse), one));
  const Tensor at_first = sum_after(mul(g, scan(OpId::cumprod, where(first_zero, one, x), axis, reverse)));
  return {where(zero, where(first_zero, at_first, bw::num(0)), nonzero_x)};
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t axis) { return scan(OpId::cumsum, x, axis, false); }
Tensor cumprod(const Tensor& x, int64_t axis) { return scan(OpId::cumprod, x, axis, false); }

void register_scan_ops(Registry& r) {
  r.add(OpDef{.id = OpId::cumsum, .num_inputs = 1, .type_rule = scan_type<OpId::cumsum>,
              .cpu = scan_kernel<OpId::cumsum>, .backward = cumsum_backward});
  r.add(OpDef{.id = OpId::cumprod, .num_inputs = 1, .type_rule = scan_type<OpId::cumprod>,
              .cpu = scan_kernel<OpId::cumprod>, .backward = cumprod_backward});
}

}  // namespace nn::backend
