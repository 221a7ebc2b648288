// Eager autodiff: a finite-difference check (gradcheck.h) of the backward
// rule of every differentiable op of the core families, with broadcasting,
// reductions over several axis sets, every matmul case, slicing and take;
// then the tape itself: values used twice, zeros for unrelated tensors,
// non-scalar losses, no_grad, detach, leaf accumulation, intermediate
// tensors as wrt, dtypes, in-place assignment, and a 50,000-op chain.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backend/autograd.h"
#include "backend/gradcheck.h"
#include "backend/ops.h"
#include "backend/tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;
using gc::random;
using gc::weighted_sum;
using Ins = std::vector<Tensor>;

namespace {

Tensor num(double v) { return scalar(v, DType::f64, /*weak=*/true); }

const auto all_axes = std::nullopt;
std::vector<int64_t> ax(std::initializer_list<int64_t> a) { return a; }

}  // namespace

// ---- unary ------------------------------------------------------------------------

TEST_CASE("gradients of the unary float functions") {
  using U = Tensor (*)(const Tensor&);
  struct Case {
    const char* name;
    U f;
    double lo, hi;  // a domain where the function is smooth
  };
  const Case cases[] = {
      {"neg", neg, -2, 2},         {"copy", copy, -2, 2}, {"abs", abs, -2, 2},   {"exp", exp, -2, 2},
      {"log", log, 0.2, 3},        {"sqrt", sqrt, 0.2, 3}, {"rsqrt", rsqrt, 0.2, 3},
      {"sin", sin, -3, 3},         {"cos", cos, -3, 3},   {"tanh", tanh, -2, 2},
      {"sigmoid", sigmoid, -4, 4}, {"relu", relu, -2, 2}, {"softplus", softplus, -4, 4},
      {"erf", erf, -2, 2},         {"erfc", erfc, -2, 2}, {"silu", silu, -4, 4},
      {"log1p", log1p, -0.5, 3},   {"expm1", expm1, -2, 2},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    U f = c.f;
    CHECK_GRADS([f](const Ins& in) { return weighted_sum(f(in[0])); }, {random({3, 4}, c.lo, c.hi)});
  }
}

TEST_CASE("gradients of leaky_relu and both forms of gelu") {
  CHECK_GRADS([](const Ins& in) { return weighted_sum(leaky_relu(in[0], 0.2)); }, {random({3, 4}, -2, 2)});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(leaky_relu(in[0])); }, {random({5}, -2, 2)});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(gelu(in[0])); }, {random({3, 4}, -3, 3)});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(gelu(in[0], true)); }, {random({3, 4}, -3, 3)});
}

TEST_CASE("relu's gradient is one op, relu_backward, itself differentiable") {
  // 0 where y <= 0, else g: a NaN y passes g on, as PyTorch's threshold_backward(g, y, 0).
  Tensor r = relu_backward(make<double>({1, 2, 3, 4}, {4}), make<double>({-1, 0, 2, kNaN}, {4}));
  CHECK(vals<double>(r) == std::vector<double>{0, 0, 3, 4});
  // Linear in g through the mask, flat in y: on both sides of y = 0.
  for (auto [lo, hi] : {std::pair{0.2, 2.0}, std::pair{-2.0, -0.2}})
    CHECK_GRADS([](const Ins& in) { return weighted_sum(relu_backward(in[0], in[1])); },
                {random({3, 4}, -2, 2), random({3, 4}, lo, hi)});
}

TEST_CASE("piecewise constant functions give zero gradients, not none") {
  using U = Tensor (*)(const Tensor&);
  for (U f : {U(sign), U(floor), U(ceil), U(round)}) {
    Tensor x = param(random({2, 3}, -3, 3));
    Tensor g = grad(weighted_sum(f(x)), {x})[0];
    CHECK(g.dtype() == DType::f64);
    CHECK(vals<double>(g) == std::vector<double>(6, 0.0));
    CHECK_GRADS([f](const Ins& in) { return weighted_sum(f(in[0])); }, {random({2, 3}, -3, 3)});
  }
}

TEST_CASE("unary gradients at the kinks follow PyTorch") {
  Tensor x = param(make<double>({-1, 0, 2}, {3}));
  CHECK(vals<double>(grad(sum(relu(x)), {x})[0]) == std::vector<double>{0, 0, 1});
  CHECK(vals<double>(grad(sum(abs(x)), {x})[0]) == std::vector<double>{-1, 0, 1});
  CHECK(vals<double>(grad(sum(leaky_relu(x, 0.1)), {x})[0]) == std::vector<double>{0.1, 0.1, 1});
}

// ---- binary -------------------------------------------------------------------------

TEST_CASE("gradients of the arithmetic ops, same shapes and broadcast") {
  using B = Tensor (*)(const Tensor&, const Tensor&);
  struct Case {
    const char* name;
    B f;
    double alo, ahi, blo, bhi;
  };
  const Case cases[] = {
      {"add", add, -2, 2, -2, 2},          {"sub", sub, -2, 2, -2, 2},
      {"mul", mul, -2, 2, -2, 2},          {"div", div, -2, 2, 0.5, 2},
      {"pow", pow, 0.5, 2, -1.5, 1.5},     {"mod", mod, -3, 3, 0.7, 2},
      {"maximum", maximum, -2, 2, -2, 2}, {"minimum", minimum, -2, 2, -2, 2},
  };
  // Same shapes; both operands broadcast ([2, 1, 3] with [4, 1]); a 0-d operand.
  const std::pair<Shape, Shape> shapes[] = {{{2, 3}, {2, 3}}, {{2, 1, 3}, {4, 1}}, {{}, {3, 2}}, {{2, 3}, {}}};
  for (const Case& c : cases)
    for (auto& [sa, sb] : shapes) {
      CAPTURE(c.name);
      CAPTURE(sa.str());
      CAPTURE(sb.str());
      B f = c.f;
      CHECK_GRADS([f](const Ins& in) { return weighted_sum(f(in[0], in[1])); },
                  {random(sa, c.alo, c.ahi, 1), random(sb, c.blo, c.bhi, 2)});
    }
  // mod with a negative divisor (the result takes the divisor's sign).
  CHECK_GRADS([](const Ins& in) { return weighted_sum(mod(in[0], in[1])); },
              {random({2, 3}, -3, 3, 3), random({3}, -2, -0.7, 4)});
  // floordiv is piecewise constant: zero gradients (PyTorch's floor_divide), checked away from its steps.
  CHECK_GRADS([](const Ins& in) { return weighted_sum(floordiv(in[0], in[1])); },
              {make<double>({0.5, 1.5, -2.5, 3.7}, {4}), make<double>({1, 1, 2, 3}, {4})});
  Tensor x = param(random({3})), y = param(random({3}, 1, 2));
  auto g = grad(sum(mul(floordiv(x, y), x)), {x, y});
  check_values(g[0], vals(floordiv(x, y)));  // d/dx (x // y) x = x // y
  check_values(g[1], {0, 0, 0});
}

TEST_CASE("a host number operand gets no gradient and keeps the tensor's dtype") {
  Tensor x = param(random({3}));
  Tensor y = add(mul(x, num(2.5)), num(1));
  CHECK(y.dtype() == DType::f64);
  CHECK(vals<double>(grad(sum(y), {x})[0]) == std::vector<double>(3, 2.5));
  CHECK_GRADS([](const Ins& in) { return weighted_sum(pow(in[0], num(3))); }, {random({4}, -2, 2)});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(div(num(2), in[0])); }, {random({4}, 0.5, 2)});
}

TEST_CASE("pow at a zero base follows PyTorch") {
  // d/da a^b = b a^(b-1), except 0 where b == 0; d/db a^b = a^b log a, except 0 where a == 0 and b >= 0.
  Tensor a = param(make<double>({0, 0, 2, 0}, {4}));
  Tensor b = param(make<double>({0, 2, 0, -1}, {4}));
  auto g = grad(sum(pow(a, b)), {a, b});
  std::vector<double> ga = vals<double>(g[0]), gb = vals<double>(g[1]);
  CHECK(ga[0] == 0);
  CHECK(ga[1] == 0);  // 2 * 0^1
  CHECK(ga[2] == 0);
  CHECK(std::isinf(ga[3]));  // -1 * 0^-2
  CHECK(gb[0] == 0);
  CHECK(gb[1] == 0);
  CHECK(gb[2] == doctest::Approx(std::log(2.0)));
  CHECK(std::isinf(gb[3]));  // 0^-1 log 0 = inf * -inf: a true singularity
}

TEST_CASE("maximum and minimum split a tie half and half, as PyTorch") {
  Tensor a = param(make<double>({1, 2, 3}, {3}));
  Tensor b = param(make<double>({2, 2, 1}, {3}));
  auto gmax = grad(sum(maximum(a, b)), {a, b});
  CHECK(vals<double>(gmax[0]) == std::vector<double>{0, 0.5, 1});
  CHECK(vals<double>(gmax[1]) == std::vector<double>{1, 0.5, 0});
  auto gmin = grad(sum(minimum(a, b)), {a, b});
  CHECK(vals<double>(gmin[0]) == std::vector<double>{1, 0.5, 0});
  CHECK(vals<double>(gmin[1]) == std::vector<double>{0, 0.5, 1});
}

TEST_CASE("gradients of where and clip; the condition gets none") {
  Tensor cond = gt(random({2, 3}, -1, 1, 9), num(0));
  CHECK_GRADS([](const Ins& in) { return weighted_sum(where(in[0], in[1], in[2])); },
              {cond, random({2, 1}, -1, 1, 1), random({3}, -1, 1, 2)});
  Tensor a = param(random({2, 3}));
  Tensor g = grad(sum(where(cond, a, num(0))), {a})[0];
  CHECK(vals<double>(g) == vals<double>(astype(cond, DType::f64)));
  CHECK_GRADS([](const Ins& in) { return weighted_sum(clip(in[0], in[1], in[2])); },
              {random({6}, -2, 2), random({6}, -1.5, -0.5, 1), random({6}, 0.5, 1.5, 2)});
  // At a bound x gets the whole gradient and the bound none, as PyTorch's clamp.
  Tensor x = param(make<double>({0, 1, 2, -1, 0.5}, {5}));
  Tensor lo = param(make<double>({0, 0, 0, 0, 0}, {5}));
  const Tensors gb = grad(sum(clip(x, lo, num(1))), {x, lo});
  CHECK(vals<double>(gb[0]) == std::vector<double>{1, 1, 0, 0, 1});
  CHECK(vals<double>(gb[1]) == std::vector<double>{0, 0, 0, 1, 0});
  // A NaN x, or a NaN bound, gives no one a gradient (PyTorch's clamp); lo >
  // hi gives hi the value and the gradient. maximum's rule gave a NaN x's
  // gradient to x and to both bounds.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor xn = param(make<double>({nan, 0.5, 0.5, 0.5}, {4}));
  Tensor lon = param(make<double>({0, nan, 2, 0}, {4}));
  Tensor hin = param(make<double>({1, 1, 1, 1}, {4}));
  Tensor cn = clip(xn, lon, hin);
  CHECK(std::isnan(vals<double>(cn)[0]));
  CHECK(std::isnan(vals<double>(cn)[1]));
  CHECK(vals<double>(cn)[2] == 1);
  const Tensors gn = grad(sum(cn), {xn, lon, hin});
  CHECK(vals<double>(gn[0]) == std::vector<double>{0, 0, 0, 1});
  CHECK(vals<double>(gn[1]) == std::vector<double>{0, 0, 0, 0});
  CHECK(vals<double>(gn[2]) == std::vector<double>{0, 0, 1, 0});
}

// ---- casts ----------------------------------------------------------------------------

TEST_CASE("a cast's gradient is cast back to the input's dtype") {
  Tensor x32 = param(astype(random({4}), DType::f32));
  Tensor y = sum(mul(astype(x32, DType::f64), random({4}, 0, 1, 5)));
  Tensor g = grad(y, {x32})[0];
  CHECK(g.dtype() == DType::f32);
  CHECK(vals<float>(g) == vals<float>(astype(random({4}, 0, 1, 5), DType::f32)));

  Tensor x64 = param(random({3}));
  Tensor g64 = grad(sum(astype(x64, DType::f32)), {x64})[0];
  CHECK(g64.dtype() == DType::f64);
  CHECK(vals<double>(g64) == std::vector<double>(3, 1.0));

  // A cast to an integer dtype ends the path: nothing is recorded, and a
  // loss past it depends on nothing (SPEC §17).
  Tensor i = astype(x64, DType::i64);
  CHECK_FALSE(requires_grad(i));
  CHECK_THROWS_WITH_AS(grad(sum(astype(i, DType::f64)), {x64}), "grad: the loss does not depend on the tensor it is differentiated with respect to; was it computed without them, under no_grad, or from detach()ed values?", Error);
}

TEST_CASE("f32 inputs get f32 gradients, f64 inputs f64, mixed operands each their own") {
  Tensor a = param(astype(random({3}), DType::f32));
  Tensor b = param(random({3}, -1, 1, 1));
  Tensor y = sum(mul(a, b));  // f64
  auto g = grad(y, {a, b});
  CHECK(g[0].dtype() == DType::f32);
  CHECK(g[1].dtype() == DType::f64);
  CHECK(vals<float>(g[0]) == vals<float>(astype(b, DType::f32)));
  CHECK(vals<double>(g[1]) == vals<double>(astype(a, DType::f64)));
}

// ---- reductions --------------------------------------------------------------------------

TEST_CASE("gradients of sum, prod, max and min over every kind of axis set") {
  using R = Tensor (*)(const Tensor&, const Axes&, bool);
  const std::pair<const char*, R> ops[] = {{"sum", sum}, {"prod", prod}, {"max", max}, {"min", min}};
  const Axes axis_sets[] = {all_axes, ax({0}), ax({1}), ax({-1}), ax({0, 2}), ax({-1, 0}), ax({0, 1, 2})};
  for (auto [name, f] : ops)
    for (const Axes& axes : axis_sets)
      for (bool keepdims : {false, true}) {
        CAPTURE(name);
        CAPTURE(keepdims);
        CAPTURE(axes ? Shape::of(*axes).str() : "all");
        CHECK_GRADS([f, axes, keepdims](const Ins& in) { return weighted_sum(f(in[0], axes, keepdims)); },
                    {random({2, 3, 4}, 0.5, 1.5)});
      }
}

TEST_CASE("prod's gradient with zeros") {
  Tensor x = param(make<double>({2, 0, 3, 4, 5, 6, 0, 1, 0}, {3, 3}));
  // Row 0 has one zero: it gets the product of the others. Row 1 none: p / x.
  // Row 2 two zeros: all zero.
  Tensor g = grad(sum(prod(x, ax({1}))), {x})[0];
  CHECK(vals<double>(g) == std::vector<double>{0, 6, 0, 30, 24, 20, 0, 0, 0});
  // Over all elements: three zeros, all zero.
  CHECK(vals<double>(grad(prod(x), {x})[0]) == std::vector<double>(9, 0.0));
  // And by finite differences (prod is a polynomial: smooth at zeros too).
  Tensor one_zero = random({2, 3}, 0.5, 1.5);
  one_zero.data<double>()[4] = 0;
  CHECK_GRADS([](const Ins& in) { return weighted_sum(prod(in[0], ax({-1}))); }, {one_zero});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(prod(in[0])); }, {one_zero});
}

TEST_CASE("max and min split the gradient evenly between tied extremes, as PyTorch's max() and amax()") {
  Tensor x = param(make<double>({1, 3, 3, 2, 2, 0}, {2, 3}));
  CHECK(vals<double>(grad(max(x), {x})[0]) == std::vector<double>{0, 0.5, 0.5, 0, 0, 0});
  CHECK(vals<double>(grad(sum(max(x, ax({1}))), {x})[0]) == std::vector<double>{0, 0.5, 0.5, 0.5, 0.5, 0});
  CHECK(vals<double>(grad(sum(max(x, ax({0}))), {x})[0]) == std::vector<double>{0, 1, 1, 1, 0, 0});
  CHECK(vals<double>(grad(sum(min(x, ax({0}))), {x})[0]) == std::vector<double>{1, 0, 0, 0, 1, 1});
  CHECK(vals<double>(grad(min(x), {x})[0]) == std::vector<double>{0, 0, 0, 0, 0, 1});
  Tensor t = param(make<float>({4, 4, 4, 1}, {4}));
  CHECK(vals<float>(grad(add(min(t), max(t)), {t})[0]) == std::vector<float>{1.f / 3, 1.f / 3, 1.f / 3, 1});
  // A NaN is the extreme: the NaNs share its gradient.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor n = param(make<double>({1, nan, 5, nan}, {4}));
  CHECK(vals<double>(grad(max(n), {n})[0]) == std::vector<double>{0, 0.5, 0, 0.5});
}

TEST_CASE("gradients of the composite reductions") {
  CHECK_GRADS([](const Ins& in) { return weighted_sum(mean(in[0], ax({1}))); }, {random({3, 4})});
  CHECK_GRADS([](const Ins& in) { return mean(in[0]); }, {random({3, 4})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(var(in[0], ax({0}), false, 1)); }, {random({3, 4})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(nn::backend::std(in[0], ax({-1}), true)); }, {random({3, 4})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(logsumexp(in[0], ax({1}))); }, {random({3, 4}, -3, 3)});
  CHECK_GRADS([](const Ins& in) { return norm(in[0]); }, {random({3, 4})});
}

TEST_CASE("norm's and std's gradients are 0 at an all-zero or constant input, as PyTorch's") {
  // Elsewhere x / norm and (x - mean) / (N std), which CHECK_GRADS above covers.
  Tensor z = param(make<double>({0, 0, 3, 4}, {2, 2}));
  const std::vector<double> gz = vals<double>(grad(sum(norm(z, ax({1}))), {z})[0]);
  CHECK((gz[0] == 0 && gz[1] == 0));
  CHECK(gz[2] == doctest::Approx(0.6));
  CHECK(gz[3] == doctest::Approx(0.8));
  Tensor tiny = param(make<float>({1e-30f, 0}, {2}));  // its squares underflow to 0 in f32
  CHECK(vals<float>(grad(norm(tiny), {tiny})[0]) == std::vector<float>{0, 0});
  Tensor c = param(make<double>({2, 2, 1, 3}, {2, 2}));
  const std::vector<double> gc = vals<double>(grad(sum(nn::backend::std(c, ax({1}))), {c})[0]);
  CHECK((gc[0] == 0 && gc[1] == 0));
  CHECK(gc[2] == doctest::Approx(-0.5));
  CHECK(gc[3] == doctest::Approx(0.5));
  CHECK(vals<double>(grad(sum(nn::backend::std(c, ax({1}), false, 1)), {c})[0])[0] == 0);
  CHECK(vals<double>(norm(z, ax({1})))[0] == 0);  // the values are sqrt's
}

// ---- matmul --------------------------------------------------------------------------------

TEST_CASE("gradients of matmul in every NumPy case") {
  const std::pair<Shape, Shape> shapes[] = {
      {{4}, {4}},                // inner product
      {{4}, {4, 3}},             // vector @ matrix
      {{3, 4}, {4}},             // matrix @ vector
      {{3, 4}, {4, 5}},          // matrices
      {{2, 3, 4}, {2, 4, 5}},    // batches
      {{2, 1, 3, 4}, {3, 4, 5}}, // broadcast batch dims on both sides
      {{3, 4}, {2, 4, 5}},       // a matrix against a batch
      {{2, 3, 4}, {4, 5}},       // a batch against a shared matrix
      {{4}, {2, 4, 3}},          // a vector against a batch
      {{2, 3, 4}, {4}},          // a batch against a vector
  };
  for (auto& [sa, sb] : shapes) {
    CAPTURE(sa.str());
    CAPTURE(sb.str());
    CHECK_GRADS([](const Ins& in) { return weighted_sum(matmul(in[0], in[1])); },
                {random(sa, -1, 1, 1), random(sb, -1, 1, 2)});
  }
  CHECK_GRADS([](const Ins& in) { return weighted_sum(outer(in[0], in[1])); }, {random({3}, -1, 1, 1), random({2})});
  CHECK_GRADS([](const Ins& in) { return dot(in[0], in[1]); }, {random({5}, -1, 1, 1), random({5})});
}

// ---- shape ops ---------------------------------------------------------------------------------

TEST_CASE("gradients of reshape, permute, transpose and broadcast_to") {
  CHECK_GRADS([](const Ins& in) { return weighted_sum(reshape(in[0], {4, -1})); }, {random({2, 3, 2})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(permute(in[0], {2, 0, 1})); }, {random({2, 3, 4})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(transpose(in[0], 0, -1)); }, {random({2, 3, 4})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(broadcast_to(in[0], {2, 3, 4})); }, {random({3, 1})});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(unsqueeze(squeeze(flatten(in[0]), 0), 1)); },
              {random({1, 2, 3})});
}

TEST_CASE("gradients of concat and stack: g is split by sizes") {
  CHECK_GRADS([](const Ins& in) { return weighted_sum(concat({in[0], in[1], in[2]}, 1)); },
              {random({2, 1, 3}, -1, 1, 1), random({2, 4, 3}, -1, 1, 2), random({2, 2, 3}, -1, 1, 3)});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(concat({in[0], in[1]}, -1)); },
              {random({2, 2}, -1, 1, 1), random({2, 3}, -1, 1, 2)});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(stack({in[0], in[1]}, 1)); },
              {random({2, 3}, -1, 1, 1), random({2, 3}, -1, 1, 2)});
  // Mixed dtypes: each operand gets its own dtype back; an integer one none.
  Tensor a = param(astype(random({2}), DType::f32));
  Tensor b = param(random({3}));
  Tensor ids = from_ints({1, 2}, {2}, DType::i64);
  Tensor y = sum(concat({a, b, ids}));
  auto g = grad(y, {a, b});
  CHECK(g[0].dtype() == DType::f32);
  CHECK(vals<float>(g[0]) == std::vector<float>{1, 1});
  CHECK(vals<double>(g[1]) == std::vector<double>{1, 1, 1});
}

// ---- indexing ----------------------------------------------------------------------------------

TEST_CASE("gradients of slicing: zeros with g in the region") {
  const std::vector<std::vector<IndexItem>> cases = {
      {at(1)},
      {sl(1), sl(std::nullopt, std::nullopt, 2)},
      {sl(std::nullopt, std::nullopt, -1)},
      {at(-1), sl(), sl(3, 0, -2)},
      {sl(), at(2)},
      {sl(0, 2), sl(1, 3), at(0)},
      {sl(5, 9)},  // empty
  };
  for (const auto& items : cases)
    CHECK_GRADS([items](const Ins& in) { return weighted_sum(index(in[0], items)); }, {random({3, 4, 5})});
  Tensor x = param(random({4}));
  CHECK(vals<double>(grad(sum(index(x, {sl(std::nullopt, std::nullopt, 2)})), {x})[0]) ==
        std::vector<double>{1, 0, 1, 0});
}

TEST_CASE("gradients of take add up over repeated ids") {
  Tensor ids = from_ints({0, 2, 2, 4, 0, 0}, {3, 2}, DType::i64);
  CHECK_GRADS([](const Ins& in) { return weighted_sum(take(in[0], in[1])); }, {random({5, 3}), ids});
  CHECK_GRADS([](const Ins& in) { return weighted_sum(take(in[0], in[1])); },
              {random({6}), from_ints({5, 5, 1}, {3}, DType::i32)});
  Tensor x = param(random({5, 2}));
  Tensor g = grad(sum(take(x, ids)), {x})[0];
  CHECK(vals<double>(g) == std::vector<double>{3, 3, 0, 0, 2, 2, 0, 0, 1, 1});
  // Many ids onto few rows: the scatter-add runs over threads without races.
  std::vector<int64_t> many(200000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = int64_t(i % 3);
  Tensor big = param(random({3, 4}));
  Tensor gb = grad(sum(take(big, from_ints(many, {int64_t(many.size())}, DType::i64))), {big})[0];
  std::vector<double> expect(12);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) expect[size_t(r * 4 + c)] = double((many.size() + size_t(2 - r)) / 3);
  CHECK(vals<double>(gb) == expect);
}

TEST_CASE("in-place slice assignment is never recorded") {
  Tensor p = param(random({4}));
  Tensor v = param(random({2}, -1, 1, 1));
  Tensor t = zeros({4}, DType::f64);
  index_assign(t, {sl(0, 2)}, v);
  CHECK_FALSE(requires_grad(t));
  CHECK(t.impl()->grad_fn == nullptr);
  index_assign(p, {sl(1, 3)}, v);  // writes into the param's memory
  CHECK(requires_grad(p));
  CHECK(p.impl()->grad_fn == nullptr);
  CHECK(vals<double>(grad(sum(mul(p, p)), {p})[0]) == vals<double>(mul(p, num(2))));
}

// ---- the tape ------------------------------------------------------------------------------------

TEST_CASE("a value used several times accumulates its gradient") {
  CHECK_GRADS([](const Ins& in) { return weighted_sum(add(mul(in[0], in[0]), in[0])); }, {random({3, 2})});
  Tensor x = param(make<double>({1, 2, 3}, {3}));
  // d/dx sum(x*x + x) = 2x + 1
  CHECK(vals<double>(grad(sum(add(mul(x, x), x)), {x})[0]) == std::vector<double>{3, 5, 7});
  // A leaf reached along separate branches: d/dx (sum(x) + sum(3x)) = 4.
  Tensor y = add(sum(x), sum(mul(x, num(3))));
  CHECK(vals<double>(grad(y, {x})[0]) == std::vector<double>{4, 4, 4});
  // Diamond: h used by two ops that meet again.
  Tensor h = exp(x);
  Tensor z = sum(mul(sin(h), cos(h)));
  CHECK_GRADS([](const Ins& in) {
    Tensor hh = exp(in[0]);
    return sum(mul(sin(hh), cos(hh)));
  }, {random({3})});
  (void)z;
}

TEST_CASE("tensors the loss does not depend on get zeros of their own type") {
  Tensor x = param(random({3}));
  Tensor unrelated = param(astype(random({2, 2}), DType::f32));
  Tensor plain = random({2});
  auto g = grad(sum(x), {unrelated, x, plain});
  CHECK(g[0].dtype() == DType::f32);
  CHECK(g[0].shape() == Shape{2, 2});
  CHECK(vals<float>(g[0]) == std::vector<float>(4, 0.0f));
  CHECK(vals<double>(g[1]) == std::vector<double>(3, 1.0));
  CHECK(vals<double>(g[2]) == std::vector<double>(2, 0.0));
  // A loss that depends on none of them is an error, not zeros (SPEC §17):
  // an optimizer would do nothing, step after step.
  Tensor c = sum(random({3}));
  CHECK_THROWS_WITH_AS(grad(c, {x}), "grad: the loss does not depend on the tensor it is differentiated with respect to; was it computed without them, under no_grad, or from detach()ed values?", Error);
  CHECK_THROWS_WITH_AS(grad(sum(x), {unrelated, plain}),
                       "grad: the loss does not depend on any of the 2 tensors it is differentiated with respect to; "
                       "was it computed without them, under no_grad, or from detach()ed values?",
                       Error);
}

TEST_CASE("grad of a non-scalar is an error naming its type") {
  Tensor x = param(random({2, 3}));
  Tensor y = mul(x, x);
  CHECK_THROWS_WITH_AS(grad(y, {x}), "grad needs a scalar loss, not f64[2, 3]; reduce it first, e.g. with sum() or mean()",
                       Error);
  // One element in any shape is fine.
  CHECK(grad(reshape(sum(y), {1, 1}), {x})[0].shape() == Shape{2, 3});
}

TEST_CASE("no_grad records nothing and restores the mode") {
  Tensor x = param(random({3}));
  CHECK(grad_enabled());
  Tensor y;
  {
    NoGradGuard guard;
    CHECK_FALSE(grad_enabled());
    y = mul(x, x);
    {
      NoGradGuard inner;
    }
    CHECK_FALSE(grad_enabled());
  }
  CHECK(grad_enabled());
  CHECK_FALSE(requires_grad(y));
  CHECK(y.impl()->grad_fn == nullptr);
  CHECK_THROWS_WITH_AS(grad(sum(y), {x}), "grad: the loss does not depend on the tensor it is differentiated with respect to; was it computed without them, under no_grad, or from detach()ed values?", Error);
  // grad itself leaves no history on its results.
  Tensor g = grad(sum(mul(x, x)), {x})[0];
  CHECK_FALSE(requires_grad(g));
}

TEST_CASE("detach stops gradients and shares memory") {
  Tensor x = param(make<double>({1, 2, 3}, {3}));
  Tensor d = detach(x);
  CHECK_FALSE(requires_grad(d));
  CHECK(d.raw_data() == x.raw_data());
  // d/dx sum(stop(x) * x) = x, not 2x.
  CHECK(vals<double>(grad(sum(mul(d, x)), {x})[0]) == std::vector<double>{1, 2, 3});
}

TEST_CASE("params: floats only, sharing memory; records only what takes part") {
  Tensor t = random({2});
  Tensor p = param(t);
  CHECK(requires_grad(p));
  CHECK_FALSE(requires_grad(t));
  CHECK(p.raw_data() == t.raw_data());
  CHECK_THROWS_WITH_AS(param(from_ints({1, 2}, {2}, DType::i64)),
                       "param needs a float tensor, not i64[2]; convert it first, e.g. astype(x, f32)", Error);
  CHECK(requires_grad(exp(p)));
  CHECK(requires_grad(reshape(p, {2, 1})));  // the view path of dispatch
  CHECK_FALSE(requires_grad(exp(t)));
  CHECK_FALSE(requires_grad(argmax(p)));  // no backward rule, integer result
  CHECK_FALSE(requires_grad(gt(p, num(0))));
  // A weak host number becomes an f32 param.
  Tensor h = param(num(2.5));
  CHECK(h.dtype() == DType::f32);
  CHECK_FALSE(h.weak());
}

TEST_CASE("intermediate tensors and the loss itself can be wrt") {
  Tensor x = param(make<double>({1, 2}, {2}));
  Tensor h = mul(x, num(3));         // h = 3x
  Tensor y = sum(mul(h, h));         // y = sum(h^2)
  auto g = grad(y, {h, x, y});
  CHECK(vals<double>(g[0]) == std::vector<double>{6, 12});   // 2h
  CHECK(vals<double>(g[1]) == std::vector<double>{18, 36});  // 18x
  CHECK(vals<double>(g[2]) == std::vector<double>{1});
  // The same tensor twice gets the same gradient; distinct tensors never
  // share gradient memory even where a rule passed one gradient on (add).
  Tensor a = param(random({2})), b = param(random({2}, -1, 1, 1));
  auto gab = grad(sum(add(a, b)), {a, b, a});
  CHECK(gab[0].raw_data() != gab[1].raw_data());
  CHECK(vals<double>(gab[2]) == vals<double>(gab[0]));
}

TEST_CASE("a 50,000-op chain neither overflows the stack going back nor when freed") {
  Tensor x = param(make<double>({0.5}, {}));
  Tensor y = x;
  for (int i = 0; i < 50000; ++i) y = add(mul(y, num(1.0)), num(1e-6));
  Tensor g = grad(y, {x})[0];
  CHECK(vals<double>(g) == std::vector<double>{1.0});
  y = Tensor();  // frees 100,000 nodes: iteratively
  CHECK(requires_grad(x));
}
