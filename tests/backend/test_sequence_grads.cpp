// Finite-difference gradient checks (gradcheck.h, in f64) of the tensor
// functions of sequence models (SPEC §13); their values are tested in
// test_sequence_ops.cpp.
#include <doctest/doctest.h>

#include "gradcheck.h"

using namespace nn::backend;
using namespace nntest;
using gc::random;
using gc::weighted_sum;
using Ins = std::vector<Tensor>;

TEST_CASE("gradients of tril and triu: masked as the values") {
  for (int64_t k : {-1, 0, 2}) {
    CAPTURE(k);
    CHECK_GRADS([k](const Ins& in) { return weighted_sum(tril(in[0], k)); }, {random({2, 3, 4})});
    CHECK_GRADS([k](const Ins& in) { return weighted_sum(triu(in[0], k)); }, {random({4, 3})});
  }
}

TEST_CASE("gradients of cumsum and cumprod") {
  for (int64_t axis : {0, 1, -1}) {
    CAPTURE(axis);
    CHECK_GRADS([axis](const Ins& in) { return weighted_sum(cumsum(in[0], axis)); }, {random({3, 4})});
    CHECK_GRADS([axis](const Ins& in) { return weighted_sum(cumprod(in[0], axis)); }, {random({3, 4}, 0.5, 1.5)});
  }
  CHECK_GRADS([](const Ins& in) { return weighted_sum(cumprod(in[0], 0)); }, {random({5}, -1.5, -0.5)});
}

TEST_CASE("cumprod's gradient with zeros among the inputs") {
  // By hand (PyTorch gives the same): x = [2, 0, 3, 0, 4], y = [2, 0, 0, 0,
  // 0]; d sum(y) / dx_0 = 1 + 0 = 1 (only y_0 survives); dx_1 = 2 + 2*3 + 0
  // = 8 (y_1, y_2 with x_1 taken out; y_3 on holds the second zero); every
  // input after the first zero gets 0.
  const Tensor x = param(make<double>({2, 0, 3, 0, 4}, {5}));
  check_values(grad(sum(cumprod(x, 0)), {x})[0], {1, 8, 0, 0, 0});
  // One zero, two, the first one first, along either axis, with weights:
  // finite differences (the product is a polynomial: smooth at 0).
  Tensor rows = make<double>({0.7, 0, 1.3, -0.4, 0, 0.9, 1.1, 0.6, -1.2, 0.8, 0, 0}, {3, 4});
  for (int64_t axis : {0, 1}) {
    CAPTURE(axis);
    CHECK_GRADS([axis](const Ins& in) { return weighted_sum(cumprod(in[0], axis)); }, {rows});
  }
  CHECK_GRADS([](const Ins& in) { return weighted_sum(cumprod(in[0], 0)); }, {make<double>({0, 1.5, -2, 0.5}, {4})});
}

TEST_CASE("gradients of gather, scatter_add and index_select add up over repeated ids") {
  Tensor ids = make<int64_t>({2, 0, 2, 1, 1, 1}, {2, 3});
  CHECK_GRADS([ids](const Ins& in) { return weighted_sum(gather(in[0], ids, 1)); }, {random({2, 4})});
  CHECK_GRADS([ids](const Ins& in) { return weighted_sum(gather(in[0], ids, 0)); }, {random({3, 3})});
  // x broadcast along axis 0 against ids' 2 rows: its gradient sums them.
  CHECK_GRADS([ids](const Ins& in) { return weighted_sum(gather(in[0], ids, 1)); }, {random({1, 3})});
  CHECK_GRADS([ids](const Ins& in) { return weighted_sum(scatter_add(in[0], ids, in[1], 1)); },
              {random({2, 3}), random({2, 3}, -1, 1, 1)});
  // v broadcast along the axis and along axis 0.
  CHECK_GRADS([ids](const Ins& in) { return weighted_sum(scatter_add(in[0], ids, in[1], 1)); },
              {random({2, 3}), random({1, 1}, -1, 1, 2)});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(index_select(in[0], tint({1, 1, 0}), 1)); },
              {random({3, 2})});
}

TEST_CASE("gradients of chunk, split_sizes and unbind go back to their slices") {
  CHECK_GRADS(
      [](const Ins& in) {
        std::vector<Tensor> c = chunk(in[0], 2, 1);
        return add(weighted_sum(c[0]), weighted_sum(mul(c[1], c[1])));
      },
      {random({2, 3})});
  CHECK_GRADS(
      [](const Ins& in) {
        std::vector<Tensor> s = split_sizes(in[0], {1, 2});
        return add(weighted_sum(s[1]), weighted_sum(exp(s[0])));
      },
      {random({3, 2})});
  CHECK_GRADS(
      [](const Ins& in) {
        std::vector<Tensor> u = unbind(in[0], -1);
        return weighted_sum(mul(u[0], u[2]));
      },
      {random({2, 3})});
}

TEST_CASE("gradients of sort, topk and pad") {
  CHECK_GRADS([](const Ins& in) { return weighted_sum(sort(in[0], 1).first); }, {random({2, 5})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(sort(in[0], 0, true).first); }, {random({4, 2})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(topk(in[0], 2).first); }, {random({3, 4})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(topk(in[0], 2, 0, false).first); }, {random({3, 4})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(pad(in[0], {{1, 0}, {2, 1}}, 0.5)); }, {random({2, 3})});
}
