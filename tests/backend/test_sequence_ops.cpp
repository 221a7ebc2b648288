// Tests of the tensor functions of sequence models (SPEC §13): tril, triu,
// cumsum, cumprod, gather, scatter_add, index_select, chunk, split_sizes,
// unbind. Expected values are worked out by hand (PyTorch's and NumPy's
// documented rules), with the exact text of each error. Their gradients are
// checked in test_sequence_grads.cpp.
#include <doctest/doctest.h>

#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

TEST_CASE("tril and triu keep a triangle of the last two axes") {
  // x = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]: tril keeps j <= i + k, triu j >= i + k.
  Tensor x = iota({3, 4});
  check_values(tril(x), {0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0});
  check_values(triu(x), {0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11});
  check_values(tril(x, 1), {0, 1, 0, 0, 4, 5, 6, 0, 8, 9, 10, 11});
  check_values(tril(x, -1), {0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0});
  check_values(triu(x, 2), {0, 0, 2, 3, 0, 0, 0, 7, 0, 0, 0, 0});
  check_values(triu(x, -1), {0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11});
  // k beyond the matrix: all or nothing.
  check_values(tril(x, 10), vals(x));
  check_values(tril(x, -3), std::vector<double>(12, 0));
  check_values(triu(x, -10), vals(x));
  check_values(triu(x, 4), std::vector<double>(12, 0));
  // A batch: each matrix alike; other dtypes keep theirs.
  Tensor b = tril(astype(iota({2, 2, 2}), DType::i64));
  CHECK(b.dtype() == DType::i64);
  CHECK(b.shape() == Shape{2, 2, 2});
  check_values(b, {0, 0, 2, 3, 4, 0, 6, 7});
  check_values(triu(ones({2, 2}, DType::boolean)), {1, 1, 0, 1});
  CHECK(tril(zeros({0, 3})).shape() == Shape{0, 3});
  CHECK_THROWS_WITH_AS(tril(t32({1, 2})),
                       "tril: expected a tensor of at least 2 dimensions (a matrix or a batch of them), got f32[2]",
                       Error);
  CHECK_THROWS_WITH_AS(triu(scalar(1.0, DType::f32)),
                       "triu: expected a tensor of at least 2 dimensions (a matrix or a batch of them), got f32[]",
                       Error);
}

TEST_CASE("cumsum and cumprod run along one axis") {
  // x = [[1, 2, 3], [4, 5, 6]]
  Tensor x = t32({1, 2, 3, 4, 5, 6}, {2, 3});
  check_values(cumsum(x, 1), {1, 3, 6, 4, 9, 15});
  check_values(cumsum(x, 0), {1, 2, 3, 5, 7, 9});
  check_values(cumsum(x, -1), {1, 3, 6, 4, 9, 15});
  check_values(cumprod(x, 1), {1, 2, 6, 4, 20, 120});
  check_values(cumprod(x, -2), {1, 2, 3, 4, 10, 18});
  CHECK(cumsum(x, 0).dtype() == DType::f32);
  // A middle axis of a [2, 2, 2]: 0..7 summed over axis 1.
  check_values(cumsum(iota({2, 2, 2}), 1), {0, 1, 2, 4, 4, 5, 10, 12});
  // Integers and bools give i64; integer products wrap as * does.
  Tensor i = cumsum(tint({1, -2, 3}, DType::i32), 0);
  CHECK(i.dtype() == DType::i64);
  check_values(i, {1, -1, 2});
  check_values(cumsum(tbool({1, 0, 1, 1}), 0), {1, 1, 2, 3});
  CHECK(vals<int64_t>(cumprod(tint({int64_t(1) << 62, 4}), 0))[1] == 0);  // 2^64 wraps to 0
  CHECK(cumprod(tbool({1, 0}), 0).dtype() == DType::i64);
  // Floats accumulate in double: 1 + 1e8 ones in f32 would stall at 2^24.
  CHECK(vals<float>(cumsum(ones({20000000}), 0)).back() == 20000000.0f);
  CHECK(cumsum(zeros({0, 3}), 0).shape() == Shape{0, 3});
  CHECK_THROWS_WITH_AS(cumsum(x, 2), "cumsum: axis 2 is out of range for f32[2, 3] (valid axes are -2..1)", Error);
  CHECK_THROWS_WITH_AS(cumprod(scalar(2.0, DType::f32), 0), "cumprod: axis 0 is out of range for f32[] (it has no axes)",
                       Error);
}
