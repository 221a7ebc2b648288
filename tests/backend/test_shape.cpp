// Shape ops: reshape (a view), flatten, squeeze, unsqueeze, permute,
// transpose, broadcast_to, concat, stack. Expected values by hand.
#include <doctest/doctest.h>

#include <vector>

#include "backend/autograd.h"
#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

TEST_CASE("reshape shares memory and resolves -1") {
  Tensor x = iota({2, 3});
  Tensor y = reshape(x, {3, 2});
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.raw_data() == x.raw_data());
  CHECK(y.block() == x.block());
  y.data<float>()[5] = 42;  // a write through the view shows in x
  CHECK(x.data<float>()[5] == 42);
  CHECK(reshape(x, {-1}).shape() == Shape{6});
  CHECK(reshape(x, {1, -1, 2}).shape() == Shape{1, 3, 2});
  CHECK(reshape(x, {6, 1, 1}).shape() == Shape{6, 1, 1});
  CHECK(reshape(make<float>({7}, {}), {1, 1}).shape() == Shape{1, 1});
  CHECK(reshape(make<float>({7}, {1}), {}).shape() == Shape{});
  CHECK(reshape(Tensor::empty({0, 4}, DType::f32), {2, 0, 2}).shape() == Shape{2, 0, 2});
  CHECK(reshape(Tensor::empty({0, 4}, DType::f32), {4, -1}).shape() == Shape{4, 0});
}

TEST_CASE("reshape to its own shape is the tensor itself, history included") {
  Tensor x = param(iota({2, 3}));
  Tensor y = reshape(x, {2, 3});
  CHECK(y.impl() == x.impl());
  CHECK(reshape(x, {2, -1}).impl() == x.impl());
  CHECK(reshape(x, {3, 2}).impl() != x.impl());
  // d sum(reshape(x) * x) / dx = 2x, as without the reshape.
  Tensor g = grad(sum(mul(reshape(x, {2, 3}), x)), {x})[0];
  for (int i = 0; i < 6; ++i) CHECK(g.data<float>()[i] == doctest::Approx(2.0 * i));
}

TEST_CASE("reshape errors") {
  Tensor x = iota({2, 3});
  CHECK_THROWS_WITH_AS(reshape(x, {4, 2}), "reshape: cannot reshape f32[2, 3] (6 elements) to [4, 2] (8 elements)",
                       Error);
  CHECK_THROWS_WITH_AS(reshape(x, {4, -1}),
                       "reshape: cannot reshape f32[2, 3] (6 elements) to [4, -1] (6 is not a multiple of 4)", Error);
  CHECK_THROWS_WITH_AS(reshape(x, {-1, -1}), "reshape: only one dimension can be -1, got [-1, -1]", Error);
  CHECK_THROWS_WITH_AS(reshape(x, {-2, -3}), "reshape: negative dimension -2 in [-2, -3]", Error);
  CHECK_THROWS_WITH_AS(reshape(Tensor::empty({0, 4}, DType::f32), {0, -1}),
                       "reshape: cannot reshape f32[0, 4] (0 elements) to [0, -1] (the -1 is ambiguous next to a 0)",
                       Error);
}

TEST_CASE("flatten, squeeze, unsqueeze") {
  Tensor x = iota({2, 3, 4});
  CHECK(flatten(x).shape() == Shape{2, 12});
  CHECK(flatten(x, 0).shape() == Shape{24});
  CHECK(flatten(x, -1).shape() == Shape{2, 3, 4});
  CHECK(flatten(x, 2).raw_data() == x.raw_data());
  CHECK(flatten(make<float>({1}, {}), 0).shape() == Shape{1});
  // Up to an end axis (inclusive), as PyTorch's flatten(start_dim, end_dim).
  CHECK(flatten(x, 0, 1).shape() == Shape{6, 4});
  CHECK(flatten(x, 1, 1).shape() == Shape{2, 3, 4});
  CHECK(flatten(x, -2, -1).shape() == Shape{2, 12});
  CHECK_THROWS_WITH_AS(flatten(x, 2, 1), "flatten: end axis 1 comes before start axis 2 of f32[2, 3, 4]", Error);
  CHECK_THROWS_WITH_AS(flatten(make<float>({1, 2}, {2})),
                       "flatten: axis 1 is out of range for f32[2] (valid axes are -1..0)", Error);

  Tensor s = iota({1, 3, 1, 2});
  CHECK(squeeze(s).shape() == Shape{3, 2});
  CHECK(squeeze(s, 0).shape() == Shape{3, 1, 2});
  CHECK(squeeze(s, -2).shape() == Shape{1, 3, 2});
  CHECK(squeeze(make<float>({1}, {1, 1})).shape() == Shape{});
  CHECK_THROWS_WITH_AS(squeeze(s, 1), "squeeze: cannot squeeze axis 1 of f32[1, 3, 1, 2]: its size is 3, not 1", Error);
  CHECK_THROWS_WITH_AS(squeeze(s, 4), "squeeze: axis 4 is out of range for f32[1, 3, 1, 2] (valid axes are -4..3)",
                       Error);

  Tensor u = iota({2, 3});
  CHECK(unsqueeze(u, 0).shape() == Shape{1, 2, 3});
  CHECK(unsqueeze(u, 2).shape() == Shape{2, 3, 1});
  CHECK(unsqueeze(u, -1).shape() == Shape{2, 3, 1});
  CHECK(unsqueeze(u, -3).shape() == Shape{1, 2, 3});
  CHECK(unsqueeze(make<float>({1}, {}), 0).shape() == Shape{1});
  CHECK(unsqueeze(u, 1).raw_data() == u.raw_data());
  CHECK_THROWS_WITH_AS(unsqueeze(u, 3), "unsqueeze: axis 3 is out of range for f32[2, 3] (valid axes are -3..2)", Error);
}

TEST_CASE("permute and transpose copy in the new order") {
  Tensor x = iota({2, 3, 4});  // x[i, j, k] = 12i + 4j + k
  Tensor p = permute(x, {2, 0, 1});  // p[k, i, j] = x[i, j, k]
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(vals<float>(p) == std::vector<float>{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21,
                                             2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  CHECK(p.raw_data() != x.raw_data());
  CHECK(vals<float>(permute(x, {0, 1, 2})) == vals<float>(x));
  CHECK(vals<float>(permute(x, {-3, -1, -2})) == vals<float>(transpose(x)));

  Tensor m = make<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = transpose(m);
  CHECK(t.shape() == Shape{3, 2});
  CHECK(vals<int64_t>(t) == std::vector<int64_t>{1, 4, 2, 5, 3, 6});
  Tensor t02 = transpose(x, 0, 2);  // t02[k, j, i]
  CHECK(t02.shape() == Shape{4, 3, 2});
  CHECK(vals<float>(t02)[1] == 12);  // [0, 0, 1] = x[1, 0, 0]
  CHECK(vals<float>(t02)[2] == 4);   // [0, 1, 0] = x[0, 1, 0]
  CHECK(vals<bool>(transpose(make<bool>({true, false, false, false}, {2, 2}))) ==
        std::vector<bool>{true, false, false, false});

  // A large transpose takes the parallel path.
  Tensor big = iota({300, 200});
  auto bt = vals<float>(transpose(big));
  bool ok = true;
  for (int j = 0; j < 200; ++j)
    for (int i = 0; i < 300; ++i) ok = ok && bt[size_t(j * 300 + i)] == float(i * 200 + j);
  CHECK(ok);
  // A batch of transposes (tiled copy with an outer dim): b[n, k, j] = 800n + 40j + k.
  auto bb = vals<float>(permute(iota({3, 20, 40}), {0, 2, 1}));
  bool batch_ok = true;
  for (int bi = 0; bi < 3; ++bi)
    for (int k = 0; k < 40; ++k)
      for (int j = 0; j < 20; ++j) batch_ok = batch_ok && bb[size_t(bi * 800 + k * 20 + j)] == float(800 * bi + 40 * j + k);
  CHECK(batch_ok);

  CHECK_THROWS_WITH_AS(permute(x, {0, 0, 1}), "permute: dims [0, 0, 1] are not a permutation of the 3 axes of f32[2, 3, 4]",
                       Error);
  CHECK_THROWS_WITH_AS(permute(x, {1, 0}), "permute: dims [1, 0] are not a permutation of the 3 axes of f32[2, 3, 4]",
                       Error);
  CHECK_THROWS_WITH_AS(permute(x, {0, 1, 3}), "permute: axis 3 is out of range for f32[2, 3, 4] (valid axes are -3..2)",
                       Error);
  CHECK_THROWS_WITH_AS(transpose(make<float>({1, 2}, {2})),
                       "transpose: axis -2 is out of range for f32[2] (valid axes are -1..0)", Error);
}

TEST_CASE("broadcast_to materialises") {
  Tensor row = make<float>({1, 2, 3}, {3});
  Tensor b = broadcast_to(row, {2, 3});
  CHECK(b.shape() == Shape{2, 3});
  CHECK(vals<float>(b) == std::vector<float>{1, 2, 3, 1, 2, 3});
  Tensor col = make<int32_t>({1, 2}, {2, 1});
  CHECK(vals<int32_t>(broadcast_to(col, {2, 2, 3})) == std::vector<int32_t>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  CHECK(vals<float>(broadcast_to(make<float>({5}, {}), {2})) == std::vector<float>{5, 5});
  CHECK(broadcast_to(row, {0, 3}).shape() == Shape{0, 3});
  CHECK_THROWS_WITH_AS(broadcast_to(iota({2, 3}), {4, 3}),
                       "broadcast_to: cannot broadcast f32[2, 3] to [4, 3] (dimension 0: 2 != 4)", Error);
  CHECK_THROWS_WITH_AS(broadcast_to(iota({2, 3}), {3}),
                       "broadcast_to: cannot broadcast f32[2, 3] to [3] (the target has fewer dimensions: 1 < 2)",
                       Error);
}

TEST_CASE("concat and stack") {
  Tensor a = make<float>({1, 2, 3, 4}, {2, 2});
  Tensor b = make<float>({5, 6}, {1, 2});
  Tensor c0 = concat({a, b});
  CHECK(c0.shape() == Shape{3, 2});
  CHECK(vals<float>(c0) == std::vector<float>{1, 2, 3, 4, 5, 6});
  Tensor c1 = concat({a, make<float>({7, 8, 9, 10, 11, 12}, {2, 3})}, -1);
  CHECK(c1.shape() == Shape{2, 5});
  CHECK(vals<float>(c1) == std::vector<float>{1, 2, 7, 8, 9, 3, 4, 10, 11, 12});
  // dtypes promote: i64 with f32 gives f32; bool with i32 gives i32.
  Tensor mixed = concat({make<int64_t>({1, 2}, {2}), make<float>({0.5f}, {1})});
  CHECK(mixed.dtype() == DType::f32);
  CHECK(vals<float>(mixed) == std::vector<float>{1, 2, 0.5f});
  Tensor bi = concat({make<bool>({true}, {1}), make<int32_t>({7}, {1})});
  CHECK(vals<int32_t>(bi) == std::vector<int32_t>{1, 7});
  CHECK(vals<float>(concat({a})) == vals<float>(a));
  CHECK(concat({Tensor::empty({0, 2}, DType::f32), b}).shape() == Shape{1, 2});

  // Sizes that add up past int64 (empty tensors hold them): an error, not a
  // wrapped shape ([0, 2^62] four times gave [0, 0]).
  const Tensor wide = zeros({0, int64_t(1) << 62});
  CHECK_THROWS_WITH_AS(concat({wide, wide, wide, wide}, 1),
                       "concat: the operands' dimension 1 adds up past 2^63 - 1", Error);
  CHECK_THROWS_WITH_AS(concat({a, make<float>({1, 2, 3}, {1, 3})}),
                       "concat: operand 1 is f32[1, 3] but operand 0 is f32[2, 2] (dimension 1: 3 != 2)", Error);
  CHECK_THROWS_WITH_AS(concat({a, make<float>({1, 2}, {2})}),
                       "concat: operand 1 is f32[2] but operand 0 is f32[2, 2] (number of dimensions: 1 != 2)", Error);
  CHECK_THROWS_WITH_AS(concat({}), "concat: needs at least one tensor", Error);
  CHECK_THROWS_WITH_AS(concat({make<float>({1}, {})}), "concat: cannot concatenate 0-d tensors (operand 0 is f32[])",
                       Error);
  CHECK_THROWS_WITH_AS(concat({a, b}, 2), "concat: axis 2 is out of range for f32[2, 2] (valid axes are -2..1)", Error);

  Tensor x = make<float>({1, 2, 3}, {3}), y = make<float>({4, 5, 6}, {3});
  Tensor s0 = stack({x, y});
  CHECK(s0.shape() == Shape{2, 3});
  CHECK(vals<float>(s0) == std::vector<float>{1, 2, 3, 4, 5, 6});
  Tensor s1 = stack({x, y}, -1);
  CHECK(s1.shape() == Shape{3, 2});
  CHECK(vals<float>(s1) == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(stack({make<float>({1}, {}), make<float>({2}, {})}).shape() == Shape{2});
  CHECK_THROWS_WITH_AS(stack({x, a}), "stack: operand 1 is f32[2, 2] but operand 0 is f32[3] (stacked tensors must have one shape)",
                       Error);
  CHECK_THROWS_WITH_AS(stack({x, y}, 2), "stack: axis 2 is out of range for f32[3] (valid axes are -2..1)", Error);
}
