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

// The gradient of max (kMax) or min goes to one element of each slice: the
// first extreme in row-major order over the reduced axes, the element
// argmax/argmin picks (a NaN, once there is one, as the kernels do). The
// reduced axes are moved last and merged into one, argmax finds the element,
// and a one-hot mask of the slice places the gradient.
template <bool kMax>
std::vector<Tensor> extreme_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  const auto& axes = axes_of(a);
  const int nd = x.ndim();
  std::vector<int64_t> perm, moved_shape;
  int64_t kept = 1, reduced = 1;
  for (int d = 0; d < nd; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      perm.push_back(d);
      kept *= x.shape()[d];
    }
  for (int64_t d : axes) {
    perm.push_back(d);
    reduced *= x.shape()[int(d)];
  }
  for (int64_t d : perm) moved_shape.push_back(x.shape()[int(d)]);
  std::vector<int64_t> identity(static_cast<size_t>(nd));
  std::iota(identity.begin(), identity.end(), 0);
  const bool moves = perm != identity;

  Tensor rows = reshape(moves ? permute(x, perm) : x, {kept, reduced});
  Tensor pick = kMax ? argmax(rows, 1, /*keepdims=*/true) : argmin(rows, 1, /*keepdims=*/true);  // [kept, 1]
  Tensor cols = to_device(arange(0, double(reduced), 1, DType::i64), x.device());           // [reduced]
  Tensor g = reshape(a.grads[0], {kept, 1});
  Tensor gr = reshape(where(eq(cols, pick), g, bw::num(0)), moved_shape);
  if (!moves) return {gr};
  std::vector<int64_t> inverse(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) inverse[size_t(perm[size_t(i)])] = i;
  return {permute(gr, inverse)};
}

}  // namespace

std::vector<Tensor> max_backward(const BackwardArgs& a) { return extreme_backward<true>(a); }
std::vector<Tensor> min_backward(const BackwardArgs& a) { return extreme_backward<false>(a); }

}  // namespace nn::backend::detail
