// Elementwise ops, casts and creation ops on the GPU against the CPU
// backend: every unary and binary op of the registry on random inputs of
// each dtype it takes, broadcasting (and host numbers), the integer rules
// (wraparound, Python's %, errors), NaN rules, and the random ops drawing
// the CPU's numbers under one seed.
#include "gpu/gpu_test_util.h"

using namespace nngpu;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Floats with the awkward values mixed in: NaN, infinities, signed zeros,
// halves (rounding), large magnitudes.
Tensor awkward(DType d) {
  return from_doubles({kNaN, kInf, -kInf, 0.0, -0.0, 0.5, 1.5, 2.5, -2.5, -0.7, 3.25, 1e30, -1e-30, 7, -7, 100},
                      Shape{16}, d);
}
}  // namespace

TEST_CASE("unary ops on the GPU give the CPU's values") {
  NN_NEED_GPU();
  // Every line of the unary table without an attribute (those with one are
  // tested below with theirs).
  std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> float_fns;
#define NN_UNARY_LINE(id, F, kind, gradient, ...) \
  __VA_OPT__(if (false)) float_fns.emplace_back(#id, [](const Tensor& x) { return call(op(OpId::id), {x}); });
  NN_UNARY_OPS(NN_UNARY_LINE)
#undef NN_UNARY_LINE
  for (DType d : {DType::f32, DType::f64})
    for (auto& [name, f] : float_fns) {
      same_on_gpu(std::string(name) + " " + std::string(dtype_name(d)),
                  [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0]), f(in[1])}; },
                  {random({4, 33}, -3, 3, d), awkward(d)}, 2e-6, 1e-6);
    }
  same_on_gpu("leaky_relu, gelu (exact and tanh)", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{leaky_relu(in[0], 0.2), gelu(in[0]), gelu(in[0], true), gelu_backward(in[1], in[0]),
                               gelu_backward(in[1], in[0], true)};
  }, {random({50}, -4, 4), random({50}, -1, 1, DType::f32, 3)}, 2e-6, 1e-6);
  // Integers and bools: kept dtypes, float functions give f32.
  const Tensor ints = from_ints({-9223372036854775807LL - 1, -5, -1, 0, 1, 7, 9223372036854775807LL}, Shape{7},
                                DType::i64);
  for (auto& [name, f] : float_fns)
    same_on_gpu(std::string(name) + " of integers and bools", [&](const std::vector<Tensor>& in) {
      std::vector<Tensor> out{f(in[0]), f(astype(in[0], DType::i32))};
      if (std::string(name) != "neg") out.push_back(f(astype(in[0], DType::boolean)));  // -bool is an error
      return out;
    }, {ints}, 2e-6, 1e-6);
}

TEST_CASE("binary ops broadcast on the GPU as on the CPU, for every dtype") {
  NN_NEED_GPU();
  using B = Tensor (*)(const Tensor&, const Tensor&);
  const std::vector<std::pair<const char*, B>> ops{
      {"add", add}, {"sub", sub}, {"mul", mul}, {"div", div}, {"pow", pow}, {"mod", mod},
      {"maximum", maximum}, {"minimum", minimum}, {"eq", eq}, {"ne", ne}, {"lt", lt}, {"le", le},
      {"gt", gt}, {"ge", ge}, {"logical_and", logical_and}, {"logical_or", logical_or}};
  for (auto& [name, f] : ops) {
    for (DType d : {DType::f32, DType::f64, DType::i32, DType::i64}) {
      // pow of integers wants non-negative exponents; mod wants no zero divisor.
      const bool ints = !is_floating(d);
      const double lo = ints && std::string(name) == "pow" ? 0 : -6;
      Tensor a = random({3, 1, 5}, lo, 6, d), b = random({4, 5}, lo, 6, d, 5);
      if (ints && std::string(name) == "mod") {
        a = where(eq(a, scalar_int(0, d)), scalar_int(3, d), a);
        b = where(eq(b, scalar_int(0, d)), scalar_int(3, d), b);
      }
      same_on_gpu(std::string(name) + " " + std::string(dtype_name(d)), [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{f(in[0], in[1]), f(in[1], in[0]), f(in[0], scalar(2.0, DType::f64, true)),
                                   f(scalar_int(3, DType::i64, true), in[1])};
      }, {a, b}, 3e-6, 1e-6);
    }
    same_on_gpu(std::string(name) + " with NaN and infinities", [&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{f(in[0], in[1])};
    }, {awkward(DType::f32), neg(awkward(DType::f32))}, 3e-6, 1e-6);
  }
  // Mixed dtypes promote (i32 with f64, bool with i64) inside the op.
  same_on_gpu("promotion", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{add(in[0], in[1]), mul(in[2], in[0]), div(in[0], in[0]), add(in[2], in[2])};
  }, {random({6}, -5, 5, DType::i32), random({6}, -1, 1, DType::f64), random({6}, 0, 2, DType::boolean)});
}

TEST_CASE("integer arithmetic wraps around and % follows Python on the GPU") {
  NN_NEED_GPU();
  const Tensor big = from_ints({9223372036854775807LL, -9223372036854775807LL - 1, 2147483647, -7, 7, -7},
                               Shape{6}, DType::i64);
  const Tensor by = from_ints({1, -1, 2, 3, -3, -3}, Shape{6}, DType::i64);
  same_on_gpu("wraparound and mod", [](const std::vector<Tensor>& in) {
    Tensor i32 = astype(in[0], DType::i32);
    return std::vector<Tensor>{add(in[0], in[1]), sub(in[0], in[1]), mul(in[0], in[0]), mod(in[0], in[1]),
                               neg(in[0]), abs(in[0]), pow(in[1], abs(in[1])), add(i32, i32), mod(i32, astype(in[1], DType::i32))};
  }, {big, by});
  Tensor x = on(gpu(), from_ints({1, 2}, Shape{2}, DType::i64));
  CHECK(error_of([&] { mod(x, on(gpu(), from_ints({1, 0}, Shape{2}, DType::i64))); }) == "integer modulo by zero");
  CHECK(error_of([&] { pow(x, scalar_int(-1, DType::i64, true)); }) ==
        "pow: integers to negative integer powers are not allowed");
}

TEST_CASE("where, clip and casts between every pair of dtypes") {
  NN_NEED_GPU();
  same_on_gpu("where and clip", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{where(gt(in[0], scalar(0.0, DType::f64, true)), in[0], in[1]),
                               where(lt(in[1], scalar(0.0, DType::f64, true)), scalar(1.0, DType::f64, true), in[0]),
                               clip(in[0], scalar(-0.5, DType::f64, true), scalar(0.5, DType::f64, true))};
  }, {random({2, 3, 4}), random({3, 1}, -2, 2, DType::f32, 9)});
  for (DType from : {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean})
    for (DType to : {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean}) {
      Tensor x = is_floating(from) ? astype(awkward(DType::f64), from) : random({16}, -1000, 1000, from);
      same_on_gpu(std::string("cast ") + std::string(dtype_name(from)) + " to " + std::string(dtype_name(to)),
                  [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{astype(in[0], to)}; }, {x}, 0, 0);
    }
}

TEST_CASE("creation ops and the random ops under one seed give the CPU's tensors") {
  NN_NEED_GPU();
  same_on_gpu("creation", [](const std::vector<Tensor>&) {
    return std::vector<Tensor>{full({2, 3}, 2.5), full({4}, 9007199254740993.0, DType::i64), zeros({3}, DType::boolean),
                               ones({2, 2}, DType::i32), arange(0, 10, 1.5, DType::f32), arange(5, -5, -2, DType::i64),
                               linspace(0, 1, 7), linspace(-3, 3, 5, DType::i64), eye(4, DType::f64)};
  }, {}, 0, 0);
  manual_seed(1234);
  same_on_gpu("random", [](const std::vector<Tensor>&) {
    return std::vector<Tensor>{rand({1000}), rand({17}, DType::f64), randn({1000}), randn({3, 3}, DType::f64),
                               randint(-5, 5, {1000}), randint(0, 1000000007, {10}, DType::i32),
                               dropout(ones({64}), 0.5)};
  }, {}, 1e-6, 1e-7);
}
