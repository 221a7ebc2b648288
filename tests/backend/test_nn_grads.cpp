// Gradients of the neural-network functions through the autodiff tape
// (gradcheck.h: backend::grad against central differences, f64): the
// composites (eval-mode batch_norm, dropout, the elementwise losses,
// nll_loss, embedding), which have no backward rule of their own, and the
// fused ops once more as users call them, to check that they ride the tape.
#include "gradcheck.h"
#include "nn_test_util.h"

using nn::backend::gc::random;
using nn::backend::gc::weighted_sum;
using namespace nntest;

TEST_CASE("tape gradients: conv2d, pools, softmax family") {
  auto conv = [](const std::vector<Tensor>& in) {
    return weighted_sum(conv2d(in[0], in[1], in[2], {2, 1}, {1, 1}, {1, 2}, 2));
  };
  CHECK_GRADS(conv, {random({2, 4, 5, 6}), random({4, 2, 3, 2}), random({4})});
  auto pools = [](const std::vector<Tensor>& in) {
    return weighted_sum(avg_pool2d(max_pool2d(in[0], pair(2), pair(1)), pair(2), std::nullopt, pair(1)));
  };
  CHECK_GRADS(pools, {random({2, 2, 5, 5}, -10, 10)});
  auto sm = [](const std::vector<Tensor>& in) {
    return add(weighted_sum(softmax(in[0], 0)), weighted_sum(log_softmax(in[0])));
  };
  CHECK_GRADS(sm, {random({3, 4})});
  auto ce = [](const std::vector<Tensor>& in) { return softmax_cross_entropy(in[0], in[1]); };
  CHECK_GRADS(ce, {random({4, 3}), make<int64_t>({2, 0, 1, 1}, {4})});
  CHECK_GRADS(ce, {random({4, 3}), softmax(random({4, 3}, -1, 1, 9))});
}

TEST_CASE("tape gradients: batch_norm in both modes, layer_norm") {
  auto train = [](const std::vector<Tensor>& in) {
    Tensor rm = zeros({3}, DType::f64), rv = ones({3}, DType::f64);
    return weighted_sum(batch_norm(in[0], in[1], in[2], rm, rv, true));
  };
  CHECK_GRADS(train, {random({4, 3, 2}), random({3}), random({3})});
  auto eval = [](const std::vector<Tensor>& in) {
    Tensor rm = in[3], rv = in[4];
    return weighted_sum(batch_norm(in[0], in[1], in[2], rm, rv, false));
  };
  CHECK_GRADS(eval, {random({4, 3, 2}), random({3}), random({3}), random({3}), random({3}, 0.5, 2)});
  auto ln = [](const std::vector<Tensor>& in) { return weighted_sum(layer_norm(in[0], in[1], in[2])); };
  CHECK_GRADS(ln, {random({3, 5}), random({5}), random({5})});
}

TEST_CASE("tape gradients: composites") {
  auto mse = [](const std::vector<Tensor>& in) { return mse_loss(in[0], in[1]); };
  CHECK_GRADS(mse, {random({3, 4}), random({3, 4}, -1, 1, 5)});
  auto l1 = [](const std::vector<Tensor>& in) { return l1_loss(in[0], in[1]); };
  CHECK_GRADS(l1, {random({3, 4}), random({3, 4}, -1, 1, 5)});
  auto bce = [](const std::vector<Tensor>& in) { return bce_with_logits(in[0], in[1]); };
  CHECK_GRADS(bce, {random({6}, -4, 4), random({6}, 0, 1, 5)});
  auto nll = [](const std::vector<Tensor>& in) { return nll_loss(log_softmax(in[0]), in[1]); };
  CHECK_GRADS(nll, {random({4, 3}), make<int64_t>({2, 0, 1, 1}, {4})});
  auto emb = [](const std::vector<Tensor>& in) { return weighted_sum(embedding(in[1], in[0])); };
  CHECK_GRADS(emb, {random({4, 3}), make<int64_t>({2, 0, 2, 3, 1}, {5})});
  // The same mask on every evaluation: the seed is set inside f.
  auto drop = [](const std::vector<Tensor>& in) {
    manual_seed(11);
    return weighted_sum(dropout(in[0], 0.4));
  };
  CHECK_GRADS(drop, {random({5, 4})});
}
