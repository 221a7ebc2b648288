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
    // cumprod's rule needs nonzero inputs (PyTorch's formula for them).
    CHECK_GRADS([axis](const Ins& in) { return weighted_sum(cumprod(in[0], axis)); }, {random({3, 4}, 0.5, 1.5)});
  }
  CHECK_GRADS([](const Ins& in) { return weighted_sum(cumprod(in[0], 0)); }, {random({5}, -1.5, -0.5)});
}
