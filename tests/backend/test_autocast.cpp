// Autocast (SPEC §15, backend/autocast.h): which dtype each op computes in
// under bf16 and f16, table-driven against the spec's lists, and a
// gradient through the casts against the f32 one.
#include "backend/autocast.h"

#include <doctest/doctest.h>

#include <cmath>

#include "backend/autograd.h"
#include "backend/nn_ops.h"
#include "backend/ops.h"
#include "backend/tensor_test_util.h"

using namespace nntest;

namespace {
Tensor m32(const Shape& s) { return iota(s); }  // 0, 1, 2, ... in f32
}  // namespace

TEST_CASE("autocast: the spec's lists") {
  // matmul, conv2d and the layers built on them compute in the autocast dtype.
  for (OpId id : {OpId::matmul, OpId::matmul_tn, OpId::matmul_nt, OpId::conv2d, OpId::conv2d_backward_input,
                  OpId::conv2d_backward_weight})
    CHECK(autocast_rule(id) == AutocastRule::lower);
  // softmax, log_softmax, norms, losses, reductions, exp and log in f32.
  for (OpId id : {OpId::softmax, OpId::log_softmax, OpId::layer_norm, OpId::softmax_cross_entropy, OpId::sum,
                  OpId::prod, OpId::max, OpId::min, OpId::exp, OpId::log, OpId::cumsum})
    CHECK(autocast_rule(id) == AutocastRule::f32);
  // Mixed operands of binary ops widen; the rest run as given.
  for (OpId id : {OpId::add, OpId::mul, OpId::div, OpId::maximum, OpId::where, OpId::concat})
    CHECK(autocast_rule(id) == AutocastRule::promote);
  for (OpId id : {OpId::relu, OpId::tanh, OpId::reshape, OpId::permute, OpId::max_pool2d, OpId::batch_norm_train})
    CHECK(autocast_rule(id) == AutocastRule::keep);
}

TEST_CASE("autocast: the dtype each op computes in, eagerly") {
  const Tensor a = m32({2, 3}), b = m32({3, 2});
  for (DType d : {DType::bf16, DType::f16}) {
    CAPTURE(dtype_name(d));
    AutocastScope on(d);
    CHECK(autocast_on());
    const Tensor y = matmul(a, b);
    CHECK(y.dtype() == d);
    // [[0 1 2] [3 4 5]] @ [[0 1] [2 3] [4 5]]: small integers, exact in both.
    CHECK(vals<float>(astype(y, DType::f32)) == std::vector<float>{10, 13, 28, 40});
    CHECK(relu(y).dtype() == d);                       // keep
    CHECK(softmax(y, 1).dtype() == DType::f32);        // f32 list
    CHECK(sum(y).dtype() == DType::f32);
    CHECK(exp(y).dtype() == DType::f32);
    CHECK(add(y, t32({1, 2})).dtype() == DType::f32);  // promote: bf16 + f32
    CHECK(add(y, y).dtype() == d);                     // nothing to promote
    CHECK(mul(y, scalar(2.0, DType::f32, true)).dtype() == d);  // a host number does not widen
    CHECK(matmul(astype(a, DType::f64), astype(b, DType::f64)).dtype() == DType::f64);  // f64 is asked for
    CHECK(add(tint({1, 2}), tint({3, 4})).dtype() == DType::i64);
    const Tensor x = m32({1, 2, 4, 4}), w = m32({3, 2, 3, 3});
    CHECK(conv2d(x, w).dtype() == d);
  }
  CHECK(!autocast_on());  // the scope ended
  CHECK(matmul(a, b).dtype() == DType::f32);
}

TEST_CASE("autocast: a param's gradient comes back in f32, near the f32 one") {
  // loss = sum(softmax(x @ w)) * v, differentiated in w: in bf16 the
  // product is rounded to 8 significant bits, so gradients agree with the
  // f32 ones to within a few of bf16's epsilon (2^-8 relative).
  manual_seed(3);
  const Tensor x = randn({4, 8}), w0 = randn({8, 5}), v = randn({4, 5});
  auto grad_of = [&](DType d) {
    Tensor w = param(w0);
    AutocastScope on(d);
    const Tensor loss = sum(mul(softmax(matmul(x, w), 1), v));
    CHECK(loss.dtype() == DType::f32);
    return grad(loss, {w})[0];
  };
  const Tensor g32 = grad_of(DType::f32), g16 = grad_of(DType::bf16);
  CHECK(g16.dtype() == DType::f32);
  const std::vector<float> a = vals<float>(g32), b = vals<float>(g16);
  double norm = 0, diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    norm += double(a[i]) * a[i];
    diff += double(a[i] - b[i]) * (a[i] - b[i]);
  }
  CHECK(std::sqrt(diff) <= 4 * 0x1p-8 * std::sqrt(norm));
  CHECK(std::sqrt(diff) > 0);  // it did compute in bf16
}

TEST_CASE("autocast: norm and the elementwise losses compute in f32, squares and differences too") {
  auto first = [](const Tensor& t) { return vals(astype(t, DType::f64))[0]; };
  for (DType d : {DType::f16, DType::bf16}) {
    CAPTURE(dtype_name(d));
    AutocastScope on(d);
    const Tensor h = astype(t32({1000, 1000}), d), z = astype(t32({0, 0}), d);
    // 1000^2 = 10^6 is past f16's largest value (65504): squared in 16 bits
    // first, norm and mse_loss were inf (and inexact in bf16).
    CHECK(norm(h).dtype() == DType::f32);
    CHECK(first(norm(h)) == double(float(std::sqrt(2e6))));
    CHECK(mse_loss(h, z).dtype() == DType::f32);
    CHECK(first(mse_loss(h, z)) == 1e6);
    CHECK(mse_loss(h, z, Reduction::none).dtype() == DType::f32);
    CHECK(first(mse_loss(h, z, Reduction::sum)) == 2e6);
    // 60000 - (-60000) overflows f16; the difference of the stored values
    // (bf16 holds 59904) is exact in f32.
    const Tensor big = astype(t32({60000}), d);
    const double stored = first(big);
    CHECK(l1_loss(big, neg(big), Reduction::none).dtype() == DType::f32);
    CHECK(first(l1_loss(big, neg(big))) == 2 * stored);
    // softplus(0) - 0 * 1 = log 2, which 16 bits would round to 0.6929 (f16)
    // or 0.6914 (bf16).
    const Tensor bce = bce_with_logits(astype(t32({0}), d), astype(t32({1}), d), Reduction::none);
    CHECK(bce.dtype() == DType::f32);
    CHECK(first(bce) == doctest::Approx(std::log(2.0)).epsilon(1e-6));
  }
  // Without autocast they keep the operands' dtype.
  const Tensor h = astype(t32({3, 4}), DType::bf16);
  CHECK(norm(h).dtype() == DType::bf16);
  CHECK(mse_loss(h, h).dtype() == DType::bf16);
}
