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
