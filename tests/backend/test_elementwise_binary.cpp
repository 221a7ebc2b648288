// Tests of the binary elementwise ops, comparisons, logical ops, where and
// clip: values, SPEC §3 promotion (weak and strong), broadcasting, NaN, and
// the errors (bool arithmetic, integer % 0, integer ** negative). Expected
// numbers are worked out by hand (Python's % rules for mod).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

namespace {

// Host numbers as the interpreter passes them: weak 0-d tensors.
Tensor weak(double v) { return scalar(v, DType::f64, true); }
Tensor weak_int(int64_t v) { return scalar_int(v, DType::i64, true); }
}  // namespace

TEST_CASE("add sub mul div on f32") {
  Tensor a = t32({1, 2, 3, 4}, {2, 2}), b = t32({0.5, -1, 4, 8}, {2, 2});
  check_values(add(a, b), {1.5, 1, 7, 12});
  check_values(sub(a, b), {0.5, 3, -1, -4});
  check_values(mul(a, b), {0.5, -2, 12, 32});
  check_values(div(a, b), {2, -2, 0.75, 0.5});
  check_values(div(t32({1, -1, 0}), t32({0, 0, 0})), {kInf, -kInf, kNaN});
  CHECK(add(a, b).dtype() == DType::f32);
  CHECK(add(a, b).shape() == Shape{2, 2});
}

TEST_CASE("SPEC §3 promotion through the ops") {
  // f32 tensor * 2.5 stays f32.
  Tensor f = mul(t32({1, 2}), weak(2.5));
  CHECK(f.dtype() == DType::f32);
  check_values(f, {2.5, 5});
  // i64 tensor * 2.5 gives f32.
  Tensor i = mul(tint({1, 2}), weak(2.5));
  CHECK(i.dtype() == DType::f32);
  check_values(i, {2.5, 5});
  // i32 tensor + 3 stays i32.
  Tensor i32 = add(tint({1, 2}, DType::i32), weak_int(3));
  CHECK(i32.dtype() == DType::i32);
  check_values(i32, {4, 5});
  // bool tensor + 1 gives i64.
  Tensor b = add(tbool({1, 0}), weak_int(1));
  CHECK(b.dtype() == DType::i64);
  check_values(b, {2, 1});
  // Weak on the left too.
  Tensor l = sub(weak(1.0), t32({0.25}));
  CHECK(l.dtype() == DType::f32);
  check_values(l, {0.75});
  // Strong operands promote by the table, 0-d or not.
  CHECK(add(tint({1}, DType::i32), tint({1})).dtype() == DType::i64);
  CHECK(add(tint({1}, DType::i32), scalar(1.0, DType::f64)).dtype() == DType::f64);
  CHECK(add(t32({1}), t64({1})).dtype() == DType::f64);
  CHECK(mul(tint({2}), t32({1.5})).dtype() == DType::f32);
  check_values(mul(tint({2}), t32({1.5})), {3});
  // A weak f32 (not f64) scalar behaves the same.
  CHECK(mul(tint({2}), scalar(0.5, DType::f32, true)).dtype() == DType::f32);
}

TEST_CASE("true division of integers gives f32") {
  Tensor q = div(tint({7, -7, 1}), tint({2, 2, 0}));
  CHECK(q.dtype() == DType::f32);
  check_values(q, {3.5, -3.5, kInf});
  CHECK(div(tint({1}, DType::i32), weak_int(2)).dtype() == DType::f32);
  CHECK(div(tbool({1}), tbool({1})).dtype() == DType::f32);
  CHECK(div(t64({1}), weak_int(2)).dtype() == DType::f64);
}

TEST_CASE("bool arithmetic") {
  Tensor x = tbool({1, 1, 0, 0}), y = tbool({1, 0, 1, 0});
  CHECK(add(x, y).dtype() == DType::boolean);
  check_values(add(x, y), {1, 1, 1, 0});  // or
  check_values(mul(x, y), {1, 0, 0, 0});  // and
  check_values(maximum(x, y), {1, 1, 1, 0});
  check_values(minimum(x, y), {1, 0, 0, 0});
  CHECK_THROWS_WITH_AS(sub(x, y),
                       "sub: not defined for two bool tensors; use logical_and, logical_or or logical_not "
                       "(got bool[4], bool[4])",
                       Error);
  CHECK_THROWS_AS(pow(x, y), Error);
  CHECK_THROWS_AS(mod(x, y), Error);
  // With an integer the bool counts as 0/1.
  check_values(sub(x, tint({1, 1, 1, 1}, DType::i32)), {0, 0, -1, -1});
}

TEST_CASE("integer arithmetic wraps") {
  const int64_t max = std::numeric_limits<int64_t>::max();
  check_values(add(tint({max}), tint({1})), {double(std::numeric_limits<int64_t>::min())});
  Tensor m = mul(tint({3, -4}, DType::i32), tint({5, 6}, DType::i32));
  CHECK(m.dtype() == DType::i32);
  check_values(m, {15, -24});
}

TEST_CASE("pow") {
  check_values(pow(t32({2, 3, 4, -8}), t32({3, 0.5, -1, 1.0 / 3})), {8, 1.7320508075688772, 0.25, kNaN});
  Tensor ip = pow(tint({2, 3, -2, 5, 0}), tint({10, 3, 3, 0, 0}));
  CHECK(ip.dtype() == DType::i64);
  check_values(ip, {1024, 27, -8, 1, 1});
  check_values(pow(tint({3}, DType::i32), weak_int(4)), {81});
  CHECK_THROWS_WITH_AS(pow(tint({2, 3}), tint({1, -1})), "pow: integers to negative integer powers are not allowed",
                       Error);
  Tensor fp = pow(tint({4, 9}), weak(0.5));
  CHECK(fp.dtype() == DType::f32);
  check_values(fp, {2, 3});
  check_values(pow(weak(2.0), t32({0, 1, 10})), {1, 2, 1024});
}

// x ** 2 is x * x to the bit (PyTorch's rule), in f32 and f64, with a
// weak or a tensor exponent; inf, -0 and NaN square as x * x does.
TEST_CASE("pow: a square is x * x") {
  std::vector<double> xs = {0.0, -0.0, 1.5, -3.25, 1e-30, 3e19, 1e200, -1e-200, kNaN,
                            std::numeric_limits<double>::infinity()};
  for (int i = 0; i < 20000; ++i) xs.push_back(std::ldexp(1.0 + i * 0.0000731, (i % 60) - 30) * (i % 3 ? 1 : -1));
  for (DType dt : {DType::f32, DType::f64}) {
    const Tensor x = astype(t64(xs), dt);
    const std::vector<double> want = vals(mul(x, x));
    for (const Tensor& two : {weak(2.0), astype(t64({2.0}), dt)}) {
      const std::vector<double> got = vals(pow(x, two));
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
        else CHECK(got[i] == want[i]);
      }
    }
  }
}

TEST_CASE("mod follows Python: the sign of the divisor") {
  // 5 % 3 = 2, -5 % 3 = 1, 5 % -3 = -1, -5 % -3 = -2, 5.5 % 2 = 1.5, -5.5 % 2 = 0.5, 7 % -2.5 = -0.5
  check_values(mod(t64({5, -5, 5, -5, 5.5, -5.5, 7}), t64({3, 3, -3, -3, 2, 2, -2.5})), {2, 1, -1, -2, 1.5, 0.5, -0.5});
  check_values(mod(t32({5, -5, 6}), weak(3.0)), {2, 1, 0});
  Tensor im = mod(tint({5, -5, 5, -5, 6}), tint({3, 3, -3, -3, 3}));
  CHECK(im.dtype() == DType::i64);
  check_values(im, {2, 1, -1, -2, 0});
  check_values(mod(tint({7, -7}, DType::i32), weak_int(4)), {3, 1});
  // INT_MIN % -1 is 0 (it traps in C++).
  check_values(mod(tint({std::numeric_limits<int64_t>::min()}), tint({-1})), {0});
  // Zero divisors: NaN for floats, an error for integers.
  check_values(mod(t32({1}), t32({0})), {kNaN});
  CHECK_THROWS_WITH_AS(mod(tint({1, 2}), tint({1, 0})), "integer modulo by zero", Error);
  // Also when the loop runs over threads.
  Tensor big = ones({100000}, DType::i32);
  CHECK_THROWS_WITH_AS(mod(big, weak_int(0)), "integer modulo by zero", Error);
  // The sign of a zero result follows the divisor.
  std::vector<double> z = vals(mod(t64({3, -3}), t64({-3, 3})));
  CHECK(std::signbit(z[0]));
  CHECK_FALSE(std::signbit(z[1]));
}

TEST_CASE("floordiv follows Python: rounds toward -inf") {
  // Python: 7 // 2 = 3, -7 // 2 = -4, 7 // -2 = -4, -7 // -2 = 3, 6 // 3 = 2, -6 // 3 = -2, 0 // -5 = 0
  Tensor i = floordiv(tint({7, -7, 7, -7, 6, -6, 0}), tint({2, 2, -2, -2, 3, 3, -5}));
  CHECK(i.dtype() == DType::i64);  // integers stay integers
  check_values(i, {3, -4, -4, 3, 2, -2, 0});
  Tensor i32 = floordiv(tint({7, -7}, DType::i32), weak_int(4));
  CHECK(i32.dtype() == DType::i32);
  check_values(i32, {1, -2});
  // Python: 7.5 // 2 = 3.0, -7.5 // 2 = -4.0, 7.5 // -2 = -4.0, 7.0 // 0.1 = 69.0 (not 70: 0.1 is a bit
  // more than 1/10), -0.5 // 1 = -1.0, 1e300 // 1e-300 = inf
  check_values(floordiv(t64({7.5, -7.5, 7.5, 7.0, -0.5}), t64({2, 2, -2, 0.1, 1})), {3, -4, -4, 69, -1});
  check_values(floordiv(t32({5, -5}), weak(2.0)), {2, -3});
  Tensor f = floordiv(t32({7}), t32({2}));
  CHECK(f.dtype() == DType::f32);
  // A zero quotient keeps the sign of a / b (Python: 0.0 // -3 = -0.0, 0.0 // 3 = 0.0).
  std::vector<double> z = vals(floordiv(t64({0, 0}), t64({-3, 3})));
  CHECK(z[0] == 0);
  CHECK(std::signbit(z[0]));
  CHECK_FALSE(std::signbit(z[1]));
  // INT_MIN // -1 wraps to INT_MIN (it traps in C++).
  check_values(floordiv(tint({std::numeric_limits<int64_t>::min() + 1}), tint({-1})),
               {double(std::numeric_limits<int64_t>::max())});
  CHECK(vals<int64_t>(floordiv(tint({std::numeric_limits<int64_t>::min()}), tint({-1})))[0] ==
        std::numeric_limits<int64_t>::min());
  // Zero divisors: inf or NaN for floats (as PyTorch), an error for integers.
  check_values(floordiv(t32({1, -1, 0}), t32({0, 0, 0})), {kInf, -kInf, kNaN});
  CHECK_THROWS_WITH_AS(floordiv(tint({1, 2}), tint({1, 0})), "integer floor division by zero", Error);
  CHECK_THROWS_WITH_AS(floordiv(ones({100000}, DType::i32), weak_int(0)), "integer floor division by zero", Error);
  CHECK_THROWS_WITH_AS(floordiv(tbool({1}), tbool({1})),
                       "floordiv: not defined for two bool tensors; use logical_and, logical_or or logical_not "
                       "(got bool[1], bool[1])",
                       Error);
}

TEST_CASE("maximum and minimum propagate NaN like NumPy") {
  Tensor a = t32({1, kNaN, 3, kNaN}), b = t32({2, 1, kNaN, kNaN});
  check_values(maximum(a, b), {2, kNaN, kNaN, kNaN});
  check_values(minimum(a, b), {1, kNaN, kNaN, kNaN});
  check_values(maximum(tint({-1, 5}, DType::i32), weak_int(0)), {0, 5});
  check_values(minimum(tint({-1, 5}), tint({3})), {-1, 3});
  Tensor mixed = maximum(tint({1, 4}), t32({2.5, 2.5}));
  CHECK(mixed.dtype() == DType::f32);
  check_values(mixed, {2.5, 4});
}

TEST_CASE("comparisons") {
  Tensor x = t32({1, 2, 3});
  Tensor two = weak_int(2);
  CHECK(lt(x, two).dtype() == DType::boolean);
  check_values(lt(x, two), {1, 0, 0});
  check_values(le(x, two), {1, 1, 0});
  check_values(gt(x, two), {0, 0, 1});
  check_values(ge(x, two), {0, 1, 1});
  check_values(eq(x, two), {0, 1, 0});
  check_values(ne(x, two), {1, 0, 1});
  // NaN is unequal to everything.
  Tensor n = t32({kNaN, 1}), m = t32({kNaN, kNaN});
  check_values(eq(n, m), {0, 0});
  check_values(ne(n, m), {1, 1});
  check_values(lt(n, m), {0, 0});
  check_values(ge(n, m), {0, 0});
  // Promotion decides the compute dtype: an i64 tensor against 2.5 compares in floats.
  check_values(lt(tint({1, 2, 3}), weak(2.5)), {1, 1, 0});
  check_values(eq(tint({2}, DType::i32), tint({2})), {1});
  check_values(eq(tbool({1, 0}), tint({1, 1})), {1, 0});
  // Broadcasting: [2, 1] against [3].
  Tensor g = gt(t32({1, 3}, {2, 1}), t32({0, 2, 4}));
  CHECK(g.shape() == Shape{2, 3});
  check_values(g, {1, 0, 0, 1, 1, 0});
  CHECK_THROWS_WITH_AS(eq(zeros({2}), zeros({3})), "eq: cannot broadcast f32[2] with f32[3] (dimension -1: 2 != 3)",
                       Error);
}

TEST_CASE("logical_and and logical_or read any dtype as != 0") {
  Tensor a = t32({0, 1, 2, 0, kNaN}), b = tint({0, 0, 3, 5, 1}, DType::i32);
  Tensor land = logical_and(a, b);
  CHECK(land.dtype() == DType::boolean);
  check_values(land, {0, 0, 1, 0, 1});
  check_values(logical_or(a, b), {0, 1, 1, 1, 1});
  check_values(logical_and(tbool({1, 0}), weak_int(1)), {1, 0});
  check_values(logical_or(from_ints({0, 0}, {2, 1}, DType::boolean), tbool({1, 0})), {1, 0, 1, 0});
}

TEST_CASE("where: 3-way broadcasting and promotion") {
  // cond [2, 1], a [3], b [2, 1] -> [2, 3]
  Tensor cond = from_ints({1, 0}, {2, 1}, DType::boolean);
  Tensor a = tint({1, 2, 3}, DType::i32);
  Tensor b = from_ints({10, 20}, {2, 1}, DType::i32);
  Tensor w = where(cond, a, b);
  CHECK(w.shape() == Shape{2, 3});
  CHECK(w.dtype() == DType::i32);
  check_values(w, {1, 2, 3, 20, 20, 20});
  // a and b promote; cond does not take part (a float cond is read as != 0).
  Tensor p = where(t32({0, 0.5}), tint({1, 2}), weak(9.5));
  CHECK(p.dtype() == DType::f32);
  check_values(p, {9.5, 2});
  CHECK(where(tbool({1}), t32({1}), t64({2})).dtype() == DType::f64);
  CHECK(where(scalar_int(1, DType::boolean), weak_int(1), tint({5, 6}, DType::i32)).dtype() == DType::i32);
  CHECK_THROWS_WITH_AS(where(tbool({1, 0}), t32({1, 2}), t32({1, 2, 3})),
                       "where: cannot broadcast bool[2], f32[2] and f32[3] (dimension -1: 2 != 3)", Error);
}

TEST_CASE("clip") {
  check_values(clip(t32({-2, 0.5, 3, kNaN}), weak(0.0), weak(1.0)), {0, 0.5, 1, kNaN});
  Tensor ci = clip(tint({-5, 5, 50}, DType::i32), weak_int(0), weak_int(10));
  CHECK(ci.dtype() == DType::i32);
  check_values(ci, {0, 5, 10});
  // Tensor bounds broadcast; lo > hi gives hi, as NumPy.
  check_values(clip(t32({1, 2, 3, 4}, {2, 2}), t32({2, 0}), t32({3, 1})), {2, 1, 3, 1});
  check_values(clip(t32({0.5}), weak(1.0), weak(0.0)), {0});
  // but for a NaN x, which stays NaN (PyTorch's clamp, NumPy's clip).
  check_values(clip(t32({kNaN, 0.5, 3}), weak(2.0), weak(1.0)), {kNaN, 1, 1});
  check_values(clip(t32({kNaN, 3}), t32({2, 2}), t32({1, 1})), {kNaN, 1});
}

TEST_CASE("0-d operands and empty tensors") {
  Tensor s = add(scalar(1.5, DType::f32), scalar(2.0, DType::f32));
  CHECK(s.shape() == Shape{});
  check_values(s, {3.5});
  CHECK(lt(zeros({0}), weak(1.0)).shape() == Shape{0});
  CHECK(where(tbool({}), zeros({0}), weak(1.0)).shape() == Shape{0});
  CHECK(mod(zeros({0}, DType::i64), zeros({0}, DType::i64)).numel() == 0);  // no division happens
}

TEST_CASE("registry traits of binary ops") {
  for (const char* name : {"add", "mul", "maximum", "minimum", "eq", "ne", "logical_and", "logical_or"})
    CHECK(op(name).commutative);
  for (const char* name : {"sub", "div", "pow", "mod", "lt", "le", "gt", "ge", "where"}) CHECK_FALSE(op(name).commutative);
  for (const char* name : {"add", "sub", "mul", "div", "where", "eq", "logical_or"}) CHECK(op(name).elementwise);
  CHECK(op("where").num_inputs == 3);
  CHECK(op("add").inplace_input == 0);
}
