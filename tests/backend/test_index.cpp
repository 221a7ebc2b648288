// Indexing (SPEC §3): index with integers and Python slices, in-place index
// assignment with broadcasting and casting, and take. Expected values by hand.
#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

namespace {
const auto none = std::nullopt;
}  // namespace

TEST_CASE("integer indices drop the axis, negatives count from the end") {
  Tensor x = iota({3, 4});  // rows 0..3, 4..7, 8..11
  Tensor r = index(x, {at(1)});
  CHECK(r.shape() == Shape{4});
  CHECK(vals<float>(r) == std::vector<float>{4, 5, 6, 7});
  CHECK(vals<float>(index(x, {at(-1)})) == std::vector<float>{8, 9, 10, 11});
  Tensor e = index(x, {at(1), at(2)});
  CHECK(e.shape() == Shape{});
  CHECK(vals<float>(e) == std::vector<float>{6});
  CHECK(vals<float>(index(x, {at(-1), at(-4)})) == std::vector<float>{8});
  Tensor col = index(x, {sl(), at(0)});
  CHECK(col.shape() == Shape{3});
  CHECK(vals<float>(col) == std::vector<float>{0, 4, 8});
  CHECK(vals<float>(index(x, {sl(), at(-1)})) == std::vector<float>{3, 7, 11});

  Tensor y = iota({2, 3, 4});  // y[i, j, k] = 12i + 4j + k
  CHECK(vals<float>(index(y, {at(1), sl(), at(2)})) == std::vector<float>{14, 18, 22});
  Tensor y1 = index(y, {sl(), at(1)});
  CHECK(y1.shape() == Shape{2, 4});
  CHECK(vals<float>(y1) == std::vector<float>{4, 5, 6, 7, 16, 17, 18, 19});

  // No items: the whole tensor, as a copy.
  Tensor all = index(x, {});
  CHECK(vals<float>(all) == vals<float>(x));
  CHECK(all.raw_data() != x.raw_data());
  CHECK(vals<int64_t>(index(make<int64_t>({5}, {}), {})) == std::vector<int64_t>{5});
  CHECK(vals<bool>(index(make<bool>({true, false}, {2}), {at(-1)})) == std::vector<bool>{false});
}

TEST_CASE("slices follow Python: clamped, negative steps") {
  Tensor x = iota({3, 4});
  Tensor even = index(x, {sl(none, none, 2)});
  CHECK(even.shape() == Shape{2, 4});
  CHECK(vals<float>(even) == std::vector<float>{0, 1, 2, 3, 8, 9, 10, 11});
  CHECK(vals<float>(index(x, {sl(none, none, -1)})) ==
        std::vector<float>{8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3});
  Tensor mid = index(x, {sl(1, 3), sl(1, 3)});
  CHECK(mid.shape() == Shape{2, 2});
  CHECK(vals<float>(mid) == std::vector<float>{5, 6, 9, 10});
  CHECK(vals<float>(index(x, {sl(-2)})) == std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(index(x, {sl(1, 100)}).shape() == Shape{2, 4});
  CHECK(vals<float>(index(x, {sl(-100, 1)})) == std::vector<float>{0, 1, 2, 3});
  CHECK(index(x, {sl(5, 1)}).shape() == Shape{0, 4});
  CHECK(index(x, {sl(2, 1)}).shape() == Shape{0, 4});
  CHECK(index(x, {sl(), sl(4)}).shape() == Shape{3, 0});

  CHECK(vals<float>(index(x, {at(0), sl(3, 0, -2)})) == std::vector<float>{3, 1});
  CHECK(vals<float>(index(x, {at(0), sl(none, none, -1)})) == std::vector<float>{3, 2, 1, 0});
  CHECK(vals<float>(index(x, {at(0), sl(-1, -5, -1)})) == std::vector<float>{3, 2, 1, 0});
  CHECK(vals<float>(index(x, {at(0), sl(10, -10, -3)})) == std::vector<float>{3, 0});
  CHECK(vals<float>(index(x, {at(2), sl(none, 1, -1)})) == std::vector<float>{11, 10});
  CHECK(vals<float>(index(x, {sl(none, none, -2), at(1)})) == std::vector<float>{9, 1});
  CHECK(index(x, {at(0), sl(0, 3, -1)}).shape() == Shape{0});
}

TEST_CASE("index errors: out of range, step zero, too many items") {
  Tensor x = iota({3, 4});
  CHECK_THROWS_WITH_AS(index(x, {at(3)}), "index 3 is out of range for axis 0 of size 3 in f32[3, 4]", Error);
  CHECK_THROWS_WITH_AS(index(x, {at(-4)}), "index -4 is out of range for axis 0 of size 3 in f32[3, 4]", Error);
  CHECK_THROWS_WITH_AS(index(x, {sl(), at(5)}), "index 5 is out of range for axis 1 of size 4 in f32[3, 4]", Error);
  CHECK_THROWS_WITH_AS(index(x, {sl(none, none, 0)}), "slice step cannot be zero", Error);
  CHECK_THROWS_WITH_AS(index(x, {at(0), at(0), at(0)}), "too many indices for f32[3, 4]: 3 given, 2 dimensions", Error);
  CHECK_THROWS_WITH_AS(index(make<float>({1}, {}), {at(0)}), "too many indices for f32[]: 1 given, 0 dimensions", Error);
  CHECK_THROWS_WITH_AS(index(Tensor::empty({0}, DType::f32), {at(0)}),
                       "index 0 is out of range for axis 0 of size 0 in f32[0]", Error);
}

TEST_CASE("index_assign writes in place, broadcasting and casting v") {
  Tensor x = iota({3, 4});
  const void* mem = x.raw_data();
  index_assign(x, {at(0)}, scalar(9.0, DType::f64, /*weak=*/true));
  CHECK(x.raw_data() == mem);
  CHECK(vals<float>(x) == std::vector<float>{9, 9, 9, 9, 4, 5, 6, 7, 8, 9, 10, 11});
  // A row broadcast over a column block.
  index_assign(x, {sl(), sl(1, 3)}, make<float>({-1, -2}, {2}));
  CHECK(vals<float>(x) == std::vector<float>{9, -1, -2, 9, 4, -1, -2, 7, 8, -1, -2, 11});
  // One element, from an integer tensor (cast to f32).
  index_assign(x, {at(1), at(-1)}, make<int64_t>({100}, {}));
  CHECK(vals<float>(x)[7] == 100);
  // A column [3, 1] broadcast across, through a negative step.
  index_assign(x, {sl(none, none, -1), sl(2)}, make<float>({1, 2, 3}, {3, 1}));
  CHECK(vals<float>(x) == std::vector<float>{9, -1, 3, 3, 4, -1, 2, 2, 8, -1, 1, 1});
  // An empty region writes nothing.
  index_assign(x, {sl(2, 1)}, make<float>({0}, {}));
  CHECK(vals<float>(x)[0] == 9);

  // Floats into an integer tensor truncate.
  Tensor xi = make<int64_t>({1, 2, 3}, {3});
  index_assign(xi, {sl(1)}, make<double>({2.7, -3.9}, {2}));
  CHECK(vals<int64_t>(xi) == std::vector<int64_t>{1, 2, -3});

  // v sharing x's memory is read whole before x changes: the rows swap.
  Tensor z = make<float>({1, 2, 3, 4}, {2, 2});
  index_assign(z, {sl(none, none, -1)}, reshape(z, {2, 2}));
  CHECK(vals<float>(z) == std::vector<float>{3, 4, 1, 2});

  // A reshaped view shares memory, so assigning into it changes the original.
  Tensor base = iota({2, 3});
  Tensor flat = reshape(base, {6});
  index_assign(flat, {at(4)}, make<float>({-7}, {}));
  CHECK(vals<float>(base)[4] == -7);

  CHECK_THROWS_WITH_AS(index_assign(x, {at(0)}, make<float>({1, 2, 3}, {3})),
                       "index assignment: cannot broadcast f32[3] to the selected region [4] of f32[3, 4]", Error);
  CHECK_THROWS_WITH_AS(index_assign(x, {sl(), sl(0, 2)}, make<float>({1, 2, 3, 4, 5, 6}, {2, 3})),
                       "index assignment: cannot broadcast f32[2, 3] to the selected region [3, 2] of f32[3, 4]", Error);
  CHECK_THROWS_WITH_AS(index_assign(x, {at(7)}, make<float>({0}, {})),
                       "index 7 is out of range for axis 0 of size 3 in f32[3, 4]", Error);
}

TEST_CASE("take picks rows by integer ids") {
  Tensor table = iota({4, 3});
  Tensor r = take(table, make<int64_t>({2, 0, 2}, {3}));
  CHECK(r.shape() == Shape{3, 3});
  CHECK(vals<float>(r) == std::vector<float>{6, 7, 8, 0, 1, 2, 6, 7, 8});
  Tensor r2 = take(table, make<int32_t>({1, 3}, {2, 1}));
  CHECK(r2.shape() == Shape{2, 1, 3});
  CHECK(vals<float>(r2) == std::vector<float>{3, 4, 5, 9, 10, 11});
  CHECK(vals<int64_t>(take(make<int64_t>({10, 20, 30}, {3}), make<int64_t>({2, 2, 1}, {3}))) ==
        std::vector<int64_t>{30, 30, 20});
  CHECK(take(table, make<int64_t>({1}, {})).shape() == Shape{3});
  CHECK(take(table, Tensor::empty({0}, DType::i64)).shape() == Shape{0, 3});

  CHECK_THROWS_WITH_AS(take(table, make<int64_t>({0, 4}, {2})),
                       "take: id 4 is out of range for axis 0 of size 4 in f32[4, 3]", Error);
  CHECK_THROWS_WITH_AS(take(table, make<int32_t>({-1}, {1})),
                       "take: id -1 is out of range for axis 0 of size 4 in f32[4, 3]", Error);
  CHECK_THROWS_WITH_AS(take(table, make<float>({0, 1}, {2})), "take: ids must be an integer tensor, got f32[2]", Error);
  CHECK_THROWS_WITH_AS(take(make<float>({1}, {}), make<int64_t>({0}, {1})),
                       "take: cannot take rows of a 0-d tensor f32[]", Error);
}
