// Tests of the tensor functions of sequence models (SPEC §13): tril, triu,
// cumsum, cumprod, gather, scatter_add, index_select, chunk, split_sizes,
// unbind. Expected values are worked out by hand (PyTorch's and NumPy's
// documented rules), with the exact text of each error. Their gradients are
// checked in test_sequence_grads.cpp.
#include <doctest/doctest.h>

#include <limits>

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
  // k at the ends of int64: i + k + 1 wrapped, and the mask was the other side's.
  const int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
  check_values(tril(x, big), vals(x));
  check_values(tril(x, big - 1), vals(x));
  check_values(triu(x, big), std::vector<double>(12, 0));
  check_values(tril(x, small), std::vector<double>(12, 0));
  check_values(triu(x, small), vals(x));
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

TEST_CASE("gather is NumPy's take_along_axis") {
  // x = [[10, 11, 12], [20, 21, 22]]
  Tensor x = t32({10, 11, 12, 20, 21, 22}, {2, 3});
  // Along axis 1: row r picks x[r, ids[r, j]].
  Tensor g = gather(x, make<int64_t>({2, 0, 1, 1}, {2, 2}), 1);
  CHECK(g.shape() == Shape{2, 2});
  check_values(g, {12, 10, 21, 21});
  // Along axis 0: column c picks x[ids[i, c], c].
  check_values(gather(x, make<int64_t>({1, 0, 1}, {1, 3}), 0), {20, 11, 22});
  check_values(gather(x, make<int64_t>({1, 0, 1}, {1, 3}), -2), {20, 11, 22});
  // Broadcasting along the other axis: ids [1, 2] against x's 2 rows.
  check_values(gather(x, make<int64_t>({2, 0}, {1, 2}), 1), {12, 10, 22, 20});
  // i32 ids; other dtypes keep theirs.
  Tensor gi = gather(tint({5, 6, 7}), tint({2, 2, 0}, DType::i32), 0);
  CHECK(gi.dtype() == DType::i64);
  check_values(gi, {7, 7, 5});
  CHECK_THROWS_WITH_AS(gather(x, make<int64_t>({3, 0}, {2, 1}), 1),
                       "gather: id 3 is out of range for axis 1 of size 3 in f32[2, 3]", Error);
  CHECK_THROWS_WITH_AS(gather(x, make<int64_t>({-1, 0}, {2, 1}), 1),
                       "gather: id -1 is out of range for axis 1 of size 3 in f32[2, 3]", Error);
  CHECK_THROWS_WITH_AS(gather(x, tint({0}), 1), "gather: ids i64[1] must have as many dimensions as f32[2, 3]", Error);
  CHECK_THROWS_WITH_AS(gather(x, t32({0, 1}, {1, 2}), 1), "gather: ids must be an integer tensor, got f32[1, 2]", Error);
  CHECK_THROWS_WITH_AS(gather(x, make<int64_t>({0, 0, 0}, {3, 1}), 1),
                       "gather: f32[2, 3] and i64[3, 1] differ in axis 0 (the axes other than axis 1 must be equal or 1)",
                       Error);
  CHECK_THROWS_WITH_AS(gather(x, make<int64_t>({0, 0}, {2, 1}), 2),
                       "gather: axis 2 is out of range for f32[2, 3] (valid axes are -2..1)", Error);
}

TEST_CASE("scatter_add adds v at the ids; repeated ids add up") {
  // zeros [2, 3]; row 0 adds 1 at 0 and 2 at 2; row 1 adds 3 and 4 both at 1.
  Tensor y = scatter_add(zeros({2, 3}), make<int64_t>({0, 2, 1, 1}, {2, 2}), t32({1, 2, 3, 4}, {2, 2}), 1);
  check_values(y, {1, 0, 2, 0, 7, 0});
  // Along axis 0 into ones, v broadcast along the axis (one value per column... per id).
  check_values(scatter_add(ones({3}), tint({2, 2, 0}), t32({5}), 0), {6, 1, 11});
  // A single value (0-d, as a host number gives it) is added at every id.
  check_values(scatter_add(zeros({2, 3}), make<int64_t>({0, 2}, {2, 1}), scalar(5.0, DType::f32), 1), {5, 0, 0, 0, 0, 5});
  // x is not changed; integer x takes integer v.
  Tensor x = tint({1, 2});
  check_values(scatter_add(x, tint({1}), tint({10}), 0), {1, 12});
  check_values(x, {1, 2});
  CHECK_THROWS_WITH_AS(scatter_add(x, tint({1}), t32({1}), 0),
                       "scatter_add: cannot add float values f32[1] into i64[2] (astype it first)", Error);
  CHECK_THROWS_WITH_AS(scatter_add(zeros({3}), tint({3}), t32({1}), 0),
                       "scatter_add: id 3 is out of range for axis 0 of size 3 in f32[3]", Error);
  CHECK_THROWS_WITH_AS(scatter_add(zeros({3}), tint({0, 1}), t32({1, 2, 3}), 0),
                       "scatter_add: ids i64[2] and values f32[3] differ in axis 0", Error);
  CHECK_THROWS_WITH_AS(scatter_add(zeros({2, 3}), make<int64_t>({0, 0, 0}, {3, 1}), ones({3, 1}), 1),
                       "scatter_add: i64[3, 1] does not fit f32[2, 3] in axis 0 (the axes other than axis 1 must be "
                       "equal or 1)",
                       Error);
}

TEST_CASE("index_select picks whole slices at 1-d ids") {
  Tensor x = t32({10, 11, 12, 20, 21, 22}, {2, 3});
  Tensor r = index_select(x, tint({2, 0, 2, 1}), 1);
  CHECK(r.shape() == Shape{2, 4});
  check_values(r, {12, 10, 12, 11, 22, 20, 22, 21});
  check_values(index_select(x, tint({1, 1}, DType::i32), 0), {20, 21, 22, 20, 21, 22});
  CHECK(index_select(x, zeros({0}, DType::i64), 0).shape() == Shape{0, 3});
  CHECK_THROWS_WITH_AS(index_select(x, tint({3}), 1),
                       "index_select: id 3 is out of range for axis 1 of size 3 in f32[2, 3]", Error);
  CHECK_THROWS_WITH_AS(index_select(x, make<int64_t>({0, 1}, {1, 2}), 1),
                       "index_select: ids must be a 1-d tensor, got i64[1, 2]", Error);
  CHECK_THROWS_WITH_AS(index_select(x, t32({0}), 1), "index_select: ids must be an integer tensor, got f32[1]", Error);
}

TEST_CASE("chunk, split_sizes and unbind give lists of pieces") {
  Tensor x = iota({5, 2});
  std::vector<Tensor> c = chunk(x, 3);  // ceil(5 / 3) = 2: rows 0-1, 2-3, 4
  REQUIRE(c.size() == 3);
  CHECK(c[0].shape() == Shape{2, 2});
  check_values(c[2], {8, 9});
  CHECK(chunk(x, 4).size() == 3);  // 2, 2, 1: fewer than 4, as PyTorch
  CHECK(chunk(x, 9).size() == 5);
  std::vector<Tensor> cols = chunk(x, 2, -1);
  REQUIRE(cols.size() == 2);
  check_values(cols[1], {1, 3, 5, 7, 9});
  CHECK(chunk(zeros({0}), 2).size() == 2);
  std::vector<Tensor> s = split_sizes(x, {1, 0, 4});
  REQUIRE(s.size() == 3);
  CHECK(s[1].shape() == Shape{0, 2});
  check_values(s[2], {2, 3, 4, 5, 6, 7, 8, 9});
  std::vector<Tensor> u = unbind(x, 1);
  REQUIRE(u.size() == 2);
  CHECK(u[0].shape() == Shape{5});
  check_values(u[0], {0, 2, 4, 6, 8});
  CHECK(unbind(zeros({0, 2})).empty());
  CHECK_THROWS_WITH_AS(chunk(x, 0), "chunk: the number of chunks must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(split_sizes(x, {2, 2}),
                       "split_sizes: sizes [2, 2] add up to 4, but axis 0 of f32[5, 2] has 5", Error);
  CHECK_THROWS_WITH_AS(split_sizes(x, {6, -1}), "split_sizes: negative size -1 in [6, -1]", Error);
  // Sizes whose sum wraps around 2^64 to the axis' size: refused, not cut
  // into overlapping pieces.
  const int64_t big = std::numeric_limits<int64_t>::max();
  CHECK_THROWS_WITH_AS(split_sizes(x, {big, big, 7}),
                       "split_sizes: sizes [9223372036854775807, 9223372036854775807, 7] add up to more than 2^63, but "
                       "axis 0 of f32[5, 2] has 5",
                       Error);
  // A huge n: ceil(size / n) overflowed to a negative step, and the loop ran
  // until memory ran out.
  CHECK(chunk(x, big).size() == 5);
  CHECK_THROWS_WITH_AS(chunk(zeros({0}), int64_t(1) << 40),
                       "chunk: 1099511627776 empty pieces of an axis of size 0 are more than 1048576", Error);
  CHECK_THROWS_WITH_AS(unbind(x, 2), "unbind: axis 2 is out of range for f32[5, 2] (valid axes are -2..1)", Error);
}

TEST_CASE("sort, argsort and topk: stable, NaN the largest, as PyTorch") {
  auto [v, i] = sort(t32({3, 1, 2, 1}));
  check_values(v, {1, 1, 2, 3});
  CHECK(i.dtype() == DType::i64);
  check_values(i, {1, 3, 2, 0});  // the tied 1s keep their order
  auto [vd, id] = sort(t32({3, 1, 2, 1}), -1, true);
  check_values(vd, {3, 2, 1, 1});
  check_values(id, {0, 2, 1, 3});
  check_values(sort(t32({2, kNaN, 1})).second, {2, 0, 1});
  check_values(sort(t32({2, kNaN, 1}), 0, true).second, {1, 0, 2});
  // Along axis 0 of [[3, 0], [1, 5], [2, 4]].
  Tensor x = t32({3, 0, 1, 5, 2, 4}, {3, 2});
  auto [v0, i0] = sort(x, 0);
  check_values(v0, {1, 0, 2, 4, 3, 5});
  check_values(i0, {1, 0, 2, 2, 0, 1});
  check_values(argsort(x), {1, 0, 0, 1, 0, 1});
  check_values(argsort(tint({5, -1, 3}, DType::i32), 0, true), {0, 2, 1});
  auto [tv, ti] = topk(t32({1, 5, 3, 5}), 2);
  check_values(tv, {5, 5});
  check_values(ti, {1, 3});
  auto [sv, si] = topk(t32({1, 5, 3, 5}), 3, 0, false);
  check_values(sv, {1, 3, 5});
  check_values(si, {0, 2, 1});
  auto [cv, ci] = topk(x, 1, 0);  // the largest of each column
  CHECK(cv.shape() == Shape{1, 2});
  check_values(cv, {3, 5});
  check_values(ci, {0, 1});
  CHECK(topk(t32({1, 2}), 0).first.shape() == Shape{0});
  CHECK_THROWS_WITH_AS(topk(t32({1, 5, 3, 5}), 5), "topk: k = 5 is out of range for axis 0 of size 4 in f32[4]",
                       Error);
  CHECK_THROWS_WITH_AS(topk(t32({1, 5}), -1), "topk: k = -1 is out of range for axis 0 of size 2 in f32[2]", Error);
  CHECK_THROWS_WITH_AS(sort(x, 2), "sort: axis 2 is out of range for f32[3, 2] (valid axes are -2..1)", Error);
}

TEST_CASE("pad puts (before, after) values around each axis from the first") {
  check_values(pad(t32({1, 2}), {{1, 2}}), {0, 1, 2, 0, 0});
  Tensor p = pad(t32({1, 2, 3, 4}, {2, 2}), {{1, 0}, {0, 1}}, 9);
  CHECK(p.shape() == Shape{3, 3});
  check_values(p, {9, 9, 9, 1, 2, 9, 3, 4, 9});
  Tensor pi = pad(tint({7}), {{0, 1}});
  CHECK(pi.dtype() == DType::i64);
  check_values(pi, {7, 0});
  check_values(pad(t32({1}), {}), {1});
  CHECK_THROWS_WITH_AS(pad(t32({1}), {{1, 1}, {1, 1}}), "pad: 2 (before, after) pairs for the 1 axes of f32[1]", Error);
  CHECK_THROWS_WITH_AS(pad(t32({1}), {{-1, 1}}), "pad: negative width (-1, 1) for axis 0", Error);
  CHECK_THROWS_WITH_AS(pad(zeros({0, int64_t(1) << 62}), {{0, 0}, {int64_t(1) << 62, 0}}),
                       "pad: widths (4611686018427387904, 0) make axis 1 of f32[0, 4611686018427387904] longer than "
                       "2^63 - 1",
                       Error);
}
