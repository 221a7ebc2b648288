// Backward rules of the reductions sum, prod, max and min (registered in
// ops/reduction.cpp), written with ops.h calls. argmax and argmin have none:
// their results are indices. The composites (mean, var, std, logsumexp,
// norm) need no rules of their own.
#include <algorithm>
#include <numeric>
#include <vector>

#include "backend/ops.h"
#include "backend/ops/backward.h"

namespace nn::backend::detail {
namespace {

const std::vector<int64_t>& axes_of(const BackwardArgs& a) { return a.attrs.get<std::vector<int64_t>>("axes"); }

// g as a tensor that broadcasts against x: reduced axes put back as 1.
Tensor kept_grad(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  return reshape(a.grads[0], bw::kept_shape(x.shape(), axes_of(a)));
}

}  // namespace

// Every element of a reduced slice gets the slice's gradient.
std::vector<Tensor> sum_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  Tensor g = kept_grad(a);
  return {g.shape() == x.shape() ? g : broadcast_to(g, x.shape())};
}

// d prod / d x_i is the product of the other elements. Dividing the product
// by x_i fails at zeros, so per slice, with p the product of its nonzero
// elements and z its count of zeros:
//   z == 0: p / x_i;
//   z == 1: p at the zero, 0 elsewhere (every other product holds the zero);
//   z >= 2: 0 everywhere.
std::vector<Tensor> prod_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  const auto& axes = axes_of(a);
  Tensor g = kept_grad(a);
  Tensor is_zero = eq(x, bw::num(0));
  Tensor p = prod(where(is_zero, bw::num(1), x), axes, /*keepdims=*/true);
  Tensor z = sum(is_zero, axes, /*keepdims=*/true);  // i64
  Tensor gp = mul(g, p);
  Tensor at_zero = where(eq(z, bw::num(1)), gp, bw::num(0));
  Tensor elsewhere = where(eq(z, bw::num(0)), div(gp, x), bw::num(0));
  return {where(is_zero, at_zero, elsewhere)};
}

namespace {

// The gradient of max or min is split evenly between the elements of each
// slice equal to its extreme (NaN counts as equal to a NaN result), as
// PyTorch's max()/amax() split it.
std::vector<Tensor> extreme_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  const Tensor y = reshape(a.outputs[0], bw::kept_shape(x.shape(), axes_of(a)));
  const Tensor hit = logical_or(eq(x, y), logical_and(isnan(x), isnan(y)));
  const Tensor count = sum(hit, axes_of(a), /*keepdims=*/true);  // i64, at least 1
  return {where(hit, div(kept_grad(a), count), bw::num(0))};
}

}  // namespace

std::vector<Tensor> max_backward(const BackwardArgs& a) { return extreme_backward(a); }
std::vector<Tensor> min_backward(const BackwardArgs& a) { return extreme_backward(a); }

}  // namespace nn::backend::detail
