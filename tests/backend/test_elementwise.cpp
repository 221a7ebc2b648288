// Tests of the elementwise engine, the shared type-rule helpers, the unary
// ops and casts. Expected numbers are worked out by hand or with an
// independent formula (Python's math module), never with the code under test.
#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "backend/ops/elementwise.h"
#include "backend/ops/type_rules.h"
#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

namespace {

TensorType tt(DType d, Shape s, bool weak = false) { return {d, s, cpu_device(), weak}; }

}  // namespace

TEST_CASE("type rules: broadcast shapes and their error message") {
  std::vector<TensorType> ok{tt(DType::f32, {2, 1, 3}), tt(DType::f32, {4, 1}), tt(DType::f32, {})};
  CHECK(broadcast_shape("add", ok) == Shape{2, 4, 3});

  std::vector<TensorType> bad{tt(DType::f32, {2, 3}), tt(DType::f32, {4})};
  CHECK_THROWS_WITH_AS(broadcast_shape("add", bad), "add: cannot broadcast f32[2, 3] with f32[4] (dimension -1: 3 != 4)",
                       Error);
  // Through the op itself: the type rule is the one source of the message.
  CHECK_THROWS_WITH_AS(add(zeros({2, 3}), zeros({4})),
                       "add: cannot broadcast f32[2, 3] with f32[4] (dimension -1: 3 != 4)", Error);
  CHECK_THROWS_WITH_AS(mul(zeros({5, 2, 3}), zeros({4, 1, 3}, DType::i64)),
                       "mul: cannot broadcast f32[5, 2, 3] with i64[4, 1, 3] (dimension -3: 5 != 4)", Error);
  std::vector<TensorType> three{tt(DType::boolean, {2}), tt(DType::f32, {2}), tt(DType::f32, {3})};
  CHECK(describe_operands(three) == "bool[2], f32[2] and f32[3]");
  CHECK_THROWS_WITH_AS(broadcast_shape("where", three),
                       "where: cannot broadcast bool[2], f32[2] and f32[3] (dimension -1: 2 != 3)", Error);
}

TEST_CASE("type rules: SPEC §3 promotion of N operands") {
  auto promoted = [](std::vector<TensorType> v) { return promote_types(v); };
  CHECK(promoted({tt(DType::f32, {2}), tt(DType::f64, {}, true)}).dtype == DType::f32);  // f32 * 2.5
  CHECK(promoted({tt(DType::i64, {2}), tt(DType::f64, {}, true)}).dtype == DType::f32);  // i64 * 2.5
  CHECK(promoted({tt(DType::i32, {2}), tt(DType::i64, {}, true)}).dtype == DType::i32);  // i32 + 3
  CHECK(promoted({tt(DType::boolean, {2}), tt(DType::i64, {}, true)}).dtype == DType::i64);  // bool + 1
  CHECK(promoted({tt(DType::i32, {2}), tt(DType::i64, {2})}).dtype == DType::i64);
  // A 0-d tensor counts only where it raises the category (PyTorch's result_type).
  CHECK(promoted({tt(DType::f32, {2}), tt(DType::f64, {})}).dtype == DType::f32);
  CHECK(promoted({tt(DType::i32, {2}), tt(DType::i64, {})}).dtype == DType::i32);
  CHECK(promoted({tt(DType::f16, {2}), tt(DType::f32, {})}).dtype == DType::f16);
  CHECK(promoted({tt(DType::i32, {2}), tt(DType::f64, {})}).dtype == DType::f64);
  CHECK(promoted({tt(DType::boolean, {2}), tt(DType::i32, {})}).dtype == DType::i32);
  CHECK(promoted({tt(DType::i32, {}), tt(DType::i64, {})}).dtype == DType::i64);  // 0-d among themselves: the table
  CHECK(promoted({tt(DType::i32, {}), tt(DType::f64, {}, true)}).dtype == DType::f32);
  CHECK(promoted({tt(DType::i32, {2}), tt(DType::f32, {2})}).dtype == DType::f32);
  // Not pairwise: bool, weak int, i32 gives i32 (a pairwise fold would give i64).
  CHECK(promoted({tt(DType::boolean, {2}), tt(DType::i64, {}, true), tt(DType::i32, {2})}).dtype == DType::i32);
  // Weak float with strong ints then a strong f64: f64.
  CHECK(promoted({tt(DType::i32, {2}), tt(DType::f64, {}, true), tt(DType::f64, {2})}).dtype == DType::f64);
  Promoted all_weak = promoted({tt(DType::i64, {}, true), tt(DType::i64, {}, true)});
  CHECK(all_weak.weak);
  CHECK_FALSE(promoted({tt(DType::i64, {}, true), tt(DType::i32, {})}).weak);
  CHECK(float_result(DType::i64) == DType::f32);
  CHECK(float_result(DType::f64) == DType::f64);
}

TEST_CASE("unary float functions on f32") {
  const double pi = 3.141592653589793;
  check_values(exp(t32({0, 1, -1})), {1, 2.718281828459045, 0.36787944117144233});
  check_values(log(t32({1, 2.718281828459045, 0, -1})), {0, 1, -kInf, kNaN});
  check_values(sqrt(t32({4, 2, 0})), {2, 1.4142135623730951, 0});
  check_values(rsqrt(t32({4, 0.25})), {0.5, 2});
  check_values(sin(t32({0, pi / 2, pi / 6})), {0, 1, 0.5});
  check_values(cos(t32({0, pi, pi / 3})), {1, -1, 0.5});
  check_values(tanh(t32({0, 1, -2})), {0, 0.7615941559557649, -0.9640275800758169});
  check_values(sigmoid(t32({0, 2, -2})), {0.5, 0.8807970779778823, 0.11920292202211755});
  // Stable at the extremes: no inf/inf, no 1 - 1.
  std::vector<double> s = vals(sigmoid(t32({100, -100})));
  CHECK(s[0] == 1.0);
  CHECK(s[1] >= 0.0);
  CHECK(s[1] < 1e-40);
  check_values(leaky_relu(t32({-2, 3, 0})), {-0.02, 3, 0});
  check_values(leaky_relu(t32({-2, 3}), 0.1), {-0.2, 3});
  // gelu(x) = x Phi(x); the tanh form is close to it.
  check_values(gelu(t32({1, -1, 2, 0})), {0.8413447460685429, -0.15865525393145707, 1.9544997361036416, 0});
  check_values(gelu(t32({1, -1, 2}), true), {0.8411919906082768, -0.15880800939172324, 1.954597694087775});
  // softplus: log 2 at 0; x at large x (the naive log(1 + e^x) overflows in f32).
  check_values(softplus(t32({0, 1, -1, 100})), {0.6931471805599453, 1.3132616875182228, 0.31326168751822286, 100});
  std::vector<double> sp = vals(softplus(t32({-100})));
  CHECK(sp[0] >= 0.0);
  CHECK(sp[0] < 1e-40);
}

TEST_CASE("erf") {
  // Values from Python's math.erf.
  check_values(erf(t32({0, 1, -0.5, 4})), {0, 0.8427007929497149, -0.5204998778130465, 0.9999999845827421});
  check_values(erf(from_doubles({1, -0.5}, {2}, DType::f64)), {0.8427007929497149, -0.5204998778130465}, 1e-15);
  check_values(erf(t32({kInf, -kInf, kNaN})), {1, -1, kNaN});
  CHECK(erf(tint({1})).dtype() == DType::f32);
}

TEST_CASE("erfc") {
  // Values from Python's math.erfc; erfc(10) is far below 1 - erf(10)'s f32 resolution.
  check_values(erfc(t32({0, 1, -1, 3})), {1, 0.15729920705028513, 1.842700792949715, 2.2090496998585438e-05});
  std::vector<double> tail = vals(erfc(from_doubles({10}, {1}, DType::f64)));
  CHECK(tail[0] == doctest::Approx(2.088487583762545e-45).epsilon(1e-12));
  CHECK(erfc(tint({1})).dtype() == DType::f32);
}

TEST_CASE("silu") {
  // x / (1 + e^-x), worked out in Python; large |x| neither overflows nor gives NaN.
  check_values(silu(t32({0, 1, -2, 3})), {0, 0.7310585786300049, -0.2384058440442351, 2.8577223804673});
  check_values(silu(t32({100, -100})), {100, 0}, 1e-30);
  CHECK(silu(tint({1})).dtype() == DType::f32);
}

TEST_CASE("log1p") {
  // Values from Python's math.log1p; log(1 + 1e-10) in f32 would give 0.
  check_values(log1p(t32({0, 1, -0.5, -1})), {0, 0.6931471805599453, -0.6931471805599453, -kInf});
  std::vector<double> tiny = vals(log1p(t32({1e-10})));
  CHECK(tiny[0] == doctest::Approx(9.999999999500001e-11).epsilon(1e-6));
  check_values(log1p(t32({-2})), {kNaN});
  CHECK(log1p(tint({1})).dtype() == DType::f32);
}

TEST_CASE("expm1") {
  // Values from Python's math.expm1; exp(1e-10) - 1 in f32 would give 0.
  check_values(expm1(t32({0, 1, -2})), {0, 1.718281828459045, -0.8646647167633873});
  std::vector<double> tiny = vals(expm1(t32({1e-10})));
  CHECK(tiny[0] == doctest::Approx(1.00000000005e-10).epsilon(1e-6));
  check_values(expm1(t32({-kInf, kInf})), {-1, kInf});
  CHECK(expm1(tint({1})).dtype() == DType::f32);
}

TEST_CASE("unary float functions: dtypes") {
  Tensor e = exp(tint({0, 1}));
  CHECK(e.dtype() == DType::f32);
  check_values(e, {1, 2.718281828459045});
  Tensor b = sqrt(from_ints({1, 0}, {2}, DType::boolean));
  CHECK(b.dtype() == DType::f32);
  check_values(b, {1, 0});
  Tensor d = exp(from_doubles({1}, {1}, DType::f64));
  CHECK(d.dtype() == DType::f64);
  check_values(d, {2.718281828459045}, 1e-15);
  CHECK(tanh(tint({1}, DType::i32)).dtype() == DType::f32);
  CHECK(gelu(tint({1})).dtype() == DType::f32);
}

TEST_CASE("dtype-keeping unary ops") {
  Tensor n = neg(tint({1, -2}, DType::i32));
  CHECK(n.dtype() == DType::i32);
  check_values(n, {-1, 2});
  check_values(neg(tint({std::numeric_limits<int32_t>::min()}, DType::i32)), {-2147483648.0});  // wraps
  check_values(neg(t32({1.5, -0.0})), {-1.5, 0});
  CHECK_THROWS_WITH_AS(neg(from_ints({1, 0}, {2}, DType::boolean)),
                       "neg: negation of a bool tensor is not defined; use logical_not (got bool[2])", Error);

  // copy: the same values and dtype, in memory of its own (bools and -0.0 too).
  const Tensor src = t32({1.5, -0.0});
  const Tensor c = copy(src);
  CHECK(c.raw_data() != src.raw_data());
  check_values(c, {1.5, 0});
  CHECK(std::signbit(c.data<float>()[1]));
  CHECK(copy(from_ints({1, 0}, {2}, DType::boolean)).dtype() == DType::boolean);
  check_values(copy(tint({-3, 4}, DType::i32)), {-3, 4});

  Tensor a = abs(tint({-3, 4}));
  CHECK(a.dtype() == DType::i64);
  check_values(a, {3, 4});
  check_values(abs(t32({-0.5, 2})), {0.5, 2});

  check_values(sign(t32({-2, 0, 3, kNaN})), {-1, 0, 1, kNaN});
  Tensor si = sign(tint({-5, 0, 7}, DType::i32));
  CHECK(si.dtype() == DType::i32);
  check_values(si, {-1, 0, 1});

  Tensor r = relu(tint({-1, 2}, DType::i32));
  CHECK(r.dtype() == DType::i32);
  check_values(r, {0, 2});
  check_values(relu(t32({-1, 0.5, kNaN})), {0, 0.5, kNaN});  // NaN propagates

  check_values(floor(t32({-1.5, 1.5, 2.0})), {-2, 1, 2});
  check_values(ceil(t32({-1.5, 1.5, 2.0})), {-1, 2, 2});
  // Half to even, as NumPy.
  check_values(round(t32({0.5, 1.5, 2.5, -0.5, -1.5, 2.6, -2.6})), {0, 2, 2, 0, -2, 3, -3});
  Tensor fi = floor(tint({-3, 5}));
  CHECK(fi.dtype() == DType::i64);
  check_values(fi, {-3, 5});
  check_values(round(tint({7}, DType::i32)), {7});
}

TEST_CASE("predicates: logical_not and isnan") {
  Tensor ln = logical_not(t32({0, 2, kNaN, -0.0}));
  CHECK(ln.dtype() == DType::boolean);
  check_values(ln, {1, 0, 0, 1});
  check_values(logical_not(tint({0, 5}, DType::i32)), {1, 0});
  check_values(logical_not(from_ints({1, 0}, {2}, DType::boolean)), {0, 1});
  Tensor nan = isnan(t32({kNaN, 1, kInf, -kInf}));
  CHECK(nan.dtype() == DType::boolean);
  check_values(nan, {1, 0, 0, 0});
  Tensor ni = isnan(tint({1, 2}));
  CHECK(ni.dtype() == DType::boolean);
  check_values(ni, {0, 0});
  check_values(isnan(from_doubles({kNaN}, {1}, DType::f64)), {1});
}

TEST_CASE("unary ops on 0-d and empty tensors") {
  Tensor z = exp(scalar(0.0, DType::f32));
  CHECK(z.shape() == Shape{});
  check_values(z, {1});
  Tensor e = exp(zeros({0, 3}));
  CHECK(e.shape() == Shape{0, 3});
  CHECK(e.numel() == 0);
  CHECK(neg(zeros({2, 0}, DType::i64)).shape() == Shape{2, 0});
}

TEST_CASE("registry traits of unary ops") {
  for (const char* name : {"exp", "neg", "relu", "gelu", "isnan", "logical_not"}) {
    const OpDef& d = op(name);
    CHECK(d.elementwise);
    CHECK(d.num_inputs == 1);
    CHECK(d.inplace_input == 0);
    CHECK(d.effect == Effect::pure);
  }
}

TEST_CASE("astype") {
  Tensor x = t32({1.7, -1.7, 0, kNaN, 1e20, -1e20});
  Tensor i = astype(x, DType::i32);
  CHECK(i.dtype() == DType::i32);
  // Toward zero; NaN gives 0 and out-of-range saturates (defined, unlike a C++ cast).
  check_values(i, {1, -1, 0, 0, 2147483647.0, -2147483648.0});
  check_values(astype(t32({0, 0.5, -2, kNaN}), DType::boolean), {0, 1, 1, 1});
  check_values(astype(from_ints({1, 0}, {2}, DType::boolean), DType::f32), {1, 0});
  Tensor big = astype(tint({int64_t(1) << 40}), DType::f64);
  CHECK(vals(big)[0] == 1099511627776.0);
  check_values(astype(tint({-7, 300}), DType::i32), {-7, 300});
  CHECK(astype(x, DType::f32).same(x));  // no copy when the dtype matches
  Tensor s = astype(scalar(2.5, DType::f64), DType::f32);
  CHECK(s.shape() == Shape{});
  check_values(s, {2.5});
  CHECK(astype(zeros({0}), DType::i64).numel() == 0);
  CHECK(op("cast").elementwise);
}

TEST_CASE("to_device on the CPU is the identity") {
  Tensor x = t32({1, 2});
  CHECK(to_device(x, cpu_device()).same(x));
  CHECK_THROWS_AS(to_device(x, nullptr), Error);
}

TEST_CASE("engine: broadcasting patterns") {
  // [2, 3] + [3]
  check_values(add(t32({1, 2, 3, 4, 5, 6}, {2, 3}), t32({10, 20, 30})), {11, 22, 33, 14, 25, 36});
  // [2, 1] + [1, 3]: an outer sum
  Tensor o = add(t32({1, 2}, {2, 1}), t32({10, 20, 30}, {1, 3}));
  CHECK(o.shape() == Shape{2, 3});
  check_values(o, {11, 21, 31, 12, 22, 32});
  // 0-d with [3], both ways round
  check_values(sub(scalar(1.0, DType::f32), t32({1, 2, 3})), {0, -1, -2});
  check_values(sub(t32({1, 2, 3}), scalar(1.0, DType::f32)), {0, 1, 2});
  // [1] with [2, 2] (a single element that is not 0-d)
  check_values(mul(t32({3}), t32({1, 2, 3, 4}, {2, 2})), {3, 6, 9, 12});
  // Empty results
  CHECK(add(zeros({0, 3}), zeros({3})).shape() == Shape{0, 3});
  CHECK(add(zeros({2, 0}), scalar(1.0, DType::f32, true)).shape() == Shape{2, 0});
  // A middle broadcast dim: [2, 3, 4] + [3, 1]; expected from a plain loop.
  std::vector<double> av(24), bv{100, 200, 300}, expect(24);
  for (int i = 0; i < 24; ++i) av[size_t(i)] = i;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) expect[size_t(i * 12 + j * 4 + k)] = (i * 12 + j * 4 + k) + bv[size_t(j)];
  check_values(add(t32(av, {2, 3, 4}), t32(bv, {3, 1})), expect);
  // The same, with the broadcast operand first and of another dtype.
  check_values(add(from_doubles(bv, {3, 1}, DType::i32), t32(av, {2, 3, 4})), expect);
}

TEST_CASE("engine: long loops over threads, with conversion and broadcasting") {
  const int prev = num_threads();
  const int64_t rows = 300, cols = 257;  // 77,100 elements: past the grain, odd row length
  std::vector<double> av(static_cast<size_t>(rows * cols)), bv(static_cast<size_t>(cols)), expect(av.size());
  for (int64_t i = 0; i < rows * cols; ++i) av[size_t(i)] = double(i % 1000) - 500;
  for (int64_t j = 0; j < cols; ++j) bv[size_t(j)] = double(j) * 0.5;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) expect[size_t(i * cols + j)] = av[size_t(i * cols + j)] * bv[size_t(j)];
  for (int threads : {1, 3}) {
    set_num_threads(threads);
    INFO("threads: " << threads);
    Tensor a = from_doubles(av, {rows, cols}, DType::i32);  // converted to f32 in the kernel
    Tensor b = t32(bv, {cols});
    Tensor out = mul(a, b);
    CHECK(out.dtype() == DType::f32);
    check_values(out, expect);
    check_values(mul(b, a), expect);
    // Same-shape flat path and scalar path.
    std::vector<double> twice(av.size());
    for (size_t i = 0; i < av.size(); ++i) twice[i] = av[i] * 2;
    check_values(add(a, a), twice);
    check_values(mul(a, scalar_int(2, DType::i64, true)), twice);
  }
  set_num_threads(prev);
}

TEST_CASE("engine: ew::map directly, in place") {
  // The output may be an input of its shape and dtype (a pass's in-place reuse).
  Tensor x = t32({1, 2, 3, 4}, {2, 2});
  ew::map<float, float, float>(x, ew::kCheapGrain, [](float a, float b) { return a * 10 + b; }, x, t32({1, 2}));
  check_values(x, {11, 22, 31, 42});
  CHECK(ew::read_as<int64_t>(scalar(3.9, DType::f64)) == 3);
  CHECK(ew::convert_value<int32_t>(-2.5f) == -2);
  CHECK(ew::convert_value<bool>(0.0) == false);
}
