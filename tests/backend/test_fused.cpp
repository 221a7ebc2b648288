// The fused elementwise kernel and the GEMM with an epilogue: programs built
// by hand, checked against values worked out by hand and against the same
// ops run one by one (each tested on its own in test_elementwise*.cpp and
// test_matmul.cpp), across tiles, threads, broadcasting, bool steps, f64,
// and outputs sharing memory with inputs.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "backend/dispatch.h"
#include "backend/ops/fused_program.h"
#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

namespace {

using Kind = FusedProgram::Arg::Kind;
FusedProgram::Arg in(uint32_t k) { return {Kind::input, k}; }
FusedProgram::Arg st(uint32_t k) { return {Kind::step, k}; }
FusedProgram::Arg imm(uint32_t k) { return {Kind::immediate, k}; }

FusedProgram::Step step(const char* name, std::vector<FusedProgram::Arg> args, DType dtype = DType::f32,
                        Attrs attrs = {}) {
  return {&op(name), std::move(attrs), std::move(args), dtype};
}

ProgramPtr program(DType compute, Shape shape, uint32_t inputs, std::vector<double> immediates,
                   std::vector<FusedProgram::Step> steps, std::vector<uint32_t> outputs) {
  auto p = std::make_shared<FusedProgram>();
  p->compute = compute;
  p->shape = std::move(shape);
  p->num_inputs = inputs;
  p->immediates = std::move(immediates);
  p->steps = std::move(steps);
  p->outputs = std::move(outputs);
  return p;
}

Tensors run_fused_op(const ProgramPtr& p, std::vector<Tensor> inputs) {
  return dispatch(op("fused"), inputs, Attrs{{"program", p}});
}

// Deterministic values in [-2, 2) without a generator.
Tensor wavy(const Shape& s, double phase, DType dtype = DType::f32) {
  std::vector<double> v(size_t(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 2.0 * std::sin(0.37 * double(i) + phase);
  return from_doubles(v, s, dtype);
}

Tensor weak(double v) { return scalar(v, DType::f64, true); }

}  // namespace

TEST_CASE("fused: relu(x * 2 + b) - c with a row, a column and a one-element input, by hand") {
  // x [2, 3], b [3] (a row), c [2, 1] (a column), s [1] (one element).
  Tensor x = t32({1, -2, 3, -4, 5, -6}, {2, 3}), b = t32({0.5, 1, -1}), c = t32({10, 20}, {2, 1}), s = t32({3});
  ProgramPtr p = program(DType::f32, Shape{2, 3}, 4, {2.0},
                         {step("mul", {in(0), imm(0)}), step("add", {st(0), in(1)}), step("relu", {st(1)}),
                          step("sub", {st(2), in(2)}), step("mul", {st(3), in(3)})},
                         {4, 2});
  Tensors out = run_fused_op(p, {x, b, c, s});
  REQUIRE(out.size() == 2);
  // relu(x * 2 + b): 2.5, 0, 5 / 0, 11, 0; minus c, times 3.
  check_values(out[1], {2.5, 0, 5, 0, 11, 0});
  check_values(out[0], {-22.5, -30, -15, -60, -27, -60});
  CHECK(out[0].shape() == Shape{2, 3});
  CHECK(out[0].dtype() == DType::f32);
}

TEST_CASE("fused: the same values as the ops one by one, across tiles, threads and broadcasts") {
  set_num_threads(2);
  // 8 x 33 x 70 = 18480 elements: 19 tiles, split over two threads.
  const Shape shape{8, 33, 70};
  Tensor x = wavy(shape, 0.1), a = wavy({33, 1}, 0.2), b = wavy({8, 1, 70}, 0.3), r = wavy({70}, 0.4);
  ProgramPtr p = program(DType::f32, shape, 4, {0.5, 1.0},
                         {step("mul", {in(0), in(1)}), step("add", {st(0), in(2)}), step("tanh", {st(1)}),
                          step("mul", {imm(0), st(2)}), step("sub", {imm(1), in(3)}), step("maximum", {st(3), st(4)}),
                          step("leaky_relu", {st(5)}, DType::f32, Attrs{{"slope", 0.2}})},
                         {6, 2});
  Tensors out = run_fused_op(p, {x, a, b, r});
  Tensor t = tanh(add(mul(x, a), b));
  Tensor expect = leaky_relu(maximum(mul(weak(0.5), t), sub(weak(1.0), r)), 0.2);
  CHECK(vals<float>(out[1]) == vals<float>(t));  // the same functors: the same bits
  CHECK(vals<float>(out[0]) == vals<float>(expect));
}

TEST_CASE("fused: bool steps are 0 or 1, bool operands and bool outputs") {
  Tensor x = t32({-1.5, 0, 2, 3}), m = tbool({1, 0, 0, 1});
  // t0 = x > 0 (bool); t1 = t0 + t0 (bool: logical or, 1 not 2); t2 = t1 * x
  // = [0, 0, 2, 3]; t3 = -x; t4 = where(m, t2, t3) = [0, -0, -2, 3];
  // t5 = t0 and m.
  ProgramPtr p = program(DType::f32, Shape{4}, 2, {0.0},
                         {step("gt", {in(0), imm(0)}, DType::boolean), step("add", {st(0), st(0)}, DType::boolean),
                          step("mul", {st(1), in(0)}), step("neg", {in(0)}), step("where", {in(1), st(2), st(3)}),
                          step("logical_and", {st(0), in(1)}, DType::boolean)},
                         {4, 5, 1});
  Tensors out = run_fused_op(p, {x, m});
  check_values(out[0], {0, 0, -2, 3});
  CHECK(out[1].dtype() == DType::boolean);
  CHECK(vals<bool>(out[1]) == std::vector<bool>{false, false, false, true});
  CHECK(vals<bool>(out[2]) == std::vector<bool>{false, false, true, true});
}

TEST_CASE("fused: f64 programs, casts and a NaN condition") {
  Tensor x = t64({0.1, -0.2, kNaN, 4});
  // t0 = x * 3 (f64, not rounded to f32); t1 = cast(x, bool) (NaN is true);
  // t2 = where(t1, t0, 7); t3 = isnan(x).
  ProgramPtr p = program(DType::f64, Shape{4}, 1, {3.0, 7.0},
                         {step("mul", {in(0), imm(0)}, DType::f64),
                          step("cast", {in(0)}, DType::boolean, Attrs{{"dtype", DType::boolean}}),
                          step("where", {st(1), st(0), imm(1)}, DType::f64), step("isnan", {in(0)}, DType::boolean)},
                         {2, 3});
  Tensors out = run_fused_op(p, {x});
  CHECK(out[0].dtype() == DType::f64);
  CHECK(vals<double>(out[0])[0] == 0.1 * 3.0);  // exactly the f64 product
  check_values(out[0], {0.1 * 3, -0.2 * 3, kNaN, 12}, 0);
  CHECK(vals<bool>(out[1]) == std::vector<bool>{false, false, true, false});
}

TEST_CASE("fused: an output may share memory with an input of its own dtype and shape") {
  set_num_threads(2);
  const Shape shape{5000};
  Tensor m = wavy(shape, 0.5), g = wavy(shape, 0.6), w = wavy(shape, 0.7);
  // sgd with momentum: m' = 0.9 m + g; w' = w - 0.1 m'.
  ProgramPtr p = program(DType::f32, shape, 3, {0.9, 0.1},
                         {step("mul", {in(0), imm(0)}), step("add", {st(0), in(1)}), step("mul", {imm(1), st(1)}),
                          step("sub", {in(2), st(2)})},
                         {1, 3});
  Tensors fresh = run_fused_op(p, {m, g, w});
  // The same, writing m' into m and w' into w.
  Tensor m2 = copy_of(m), w2 = copy_of(w);
  std::vector<Tensor> ins{m2, g, w2};
  std::vector<Tensor> outs{m2, w2};
  op("fused").cpu(ins, outs, Attrs{{"program", p}});
  CHECK(vals<float>(m2) == vals<float>(fresh[0]));
  CHECK(vals<float>(w2) == vals<float>(fresh[1]));
  check_values(fresh[0], vals(add(mul(m, weak(0.9)), g)));
}

TEST_CASE("fused: a pair of arithmetic steps run in one pass gives the bits of the two ops one by one") {
  set_num_threads(2);
  // 3000 elements: three tiles, split over two threads. z has no zeros, so
  // every quotient is finite but rounded.
  const Shape shape{3000};
  Tensor x = wavy(shape, 0.1), y = wavy(shape, 0.2), z = add(mul(wavy(shape, 0.3), weak(0.25)), weak(1.5));
  const char* ops[] = {"add", "sub", "mul", "div"};
  for (const char* first : ops)
    for (const char* second : ops)
      for (bool left : {true, false}) {
        CAPTURE(first);
        CAPTURE(second);
        CAPTURE(left);
        ProgramPtr p = program(DType::f32, shape, 3, {},
                               {step(first, {in(0), in(1)}), step(second, left ? std::vector{st(0), in(2)}
                                                                              : std::vector{in(2), st(0)})},
                               {1});
        Tensor t = dispatch(op(first), std::vector<Tensor>{x, y})[0];
        Tensor expect = dispatch(op(second), left ? std::vector<Tensor>{t, z} : std::vector<Tensor>{z, t})[0];
        CHECK(vals<float>(run_fused_op(p, {x, y, z})[0]) == vals<float>(expect));
      }
  // A chain of three: the first two pair, the third runs alone; a step read
  // twice, or also an output, is not folded into its reader.
  ProgramPtr chain = program(DType::f32, shape, 3, {0.5},
                             {step("mul", {in(0), imm(0)}), step("add", {st(0), in(1)}), step("div", {st(1), in(2)}),
                              step("sub", {st(2), st(2)}), step("mul", {st(3), in(0)}), step("add", {st(1), st(4)})},
                             {5, 1});
  Tensors out = run_fused_op(chain, {x, y, z});
  Tensor t1 = add(mul(x, weak(0.5)), y), t2 = div(t1, z);
  CHECK(vals<float>(out[0]) == vals<float>(add(t1, mul(sub(t2, t2), x))));
  CHECK(vals<float>(out[1]) == vals<float>(t1));
}

TEST_CASE("fused: an output sharing memory with an input a later step reads is written after that step") {
  set_num_threads(2);
  const Shape shape{3000};
  Tensor a = wavy(shape, 0.4), b = wavy(shape, 0.5);
  // t0 = a * 2 goes into a's memory; t1 = a + b must still read the old a.
  ProgramPtr p = program(DType::f32, shape, 2, {2.0}, {step("mul", {in(0), imm(0)}), step("add", {in(0), in(1)})},
                         {0, 1});
  Tensor a2 = copy_of(a), sum = Tensor::empty(shape, DType::f32);
  std::vector<Tensor> ins{a2, b};
  std::vector<Tensor> outs{a2, sum};
  op("fused").cpu(ins, outs, Attrs{{"program", p}});
  CHECK(vals<float>(a2) == vals<float>(mul(a, weak(2.0))));
  CHECK(vals<float>(sum) == vals<float>(add(a, b)));
}

TEST_CASE("fused: the type rule refuses inputs that do not broadcast to the program's shape") {
  ProgramPtr p = program(DType::f32, Shape{2, 3}, 1, {}, {step("neg", {in(0)})}, {0});
  CHECK_THROWS_WITH(run_fused_op(p, {t32({1, 2})}), doctest::Contains("does not broadcast to [2, 3]"));
  CHECK_THROWS_WITH(run_fused_op(p, {t32({1, 2, 3}), t32({1})}), doctest::Contains("inputs for a program of 1"));
}

TEST_CASE("matmul_epilogue: the product goes through the program without being stored") {
  set_num_threads(2);
  // relu(a @ b + bias) on 70 x 50 @ 50 x 90: blocks of rows over two threads.
  Tensor a = wavy({70, 50}, 0.1), b = wavy({50, 90}, 0.2), bias = wavy({90}, 0.3);
  ProgramPtr p = program(DType::f32, Shape{70, 90}, 2, {}, {step("add", {in(0), in(1)}), step("relu", {st(0)})}, {1, 0});
  Tensors out = dispatch(op("matmul_epilogue"), std::vector<Tensor>{a, b, bias},
                         Attrs{{"ta", false}, {"tb", false}, {"program", p}});
  Tensor pre = add(matmul(a, b), bias);
  check_values(out[1], vals(pre), 1e-5);
  check_values(out[0], vals(relu(pre)), 1e-5);

  // The transposed forms read a stored [k, m] or b stored [n, k].
  Tensor at = wavy({50, 70}, 0.4), bt = wavy({90, 50}, 0.5);
  ProgramPtr q = program(DType::f32, Shape{70, 90}, 1, {2.0}, {step("mul", {in(0), imm(0)})}, {0});
  Tensor tn = dispatch(op("matmul_epilogue"), std::vector<Tensor>{at, b}, Attrs{{"ta", true}, {"tb", false}, {"program", q}})[0];
  check_values(tn, vals(mul(matmul(transpose(at, 0, 1), b), weak(2.0))), 1e-5);
  Tensor nt = dispatch(op("matmul_epilogue"), std::vector<Tensor>{a, bt}, Attrs{{"ta", false}, {"tb", true}, {"program", q}})[0];
  check_values(nt, vals(mul(matmul(a, transpose(bt, 0, 1)), weak(2.0))), 1e-5);
}

TEST_CASE("matmul_epilogue: an output may overwrite an input after the matrices") {
  set_num_threads(2);
  // A weight's gradient and its update: w' = w - 0.5 (x^T @ g), written into w.
  Tensor x = wavy({64, 40}, 0.1), g = wavy({64, 30}, 0.2), w = wavy({40, 30}, 0.3);
  ProgramPtr p = program(DType::f32, Shape{40, 30}, 2, {0.5},
                         {step("mul", {imm(0), in(0)}), step("sub", {in(1), st(0)})}, {1});
  Tensor expect = sub(w, mul(weak(0.5), matmul(transpose(x, 0, 1), g)));
  Tensor w2 = copy_of(w);
  std::vector<Tensor> ins{x, g, w2};
  std::vector<Tensor> outs{w2};
  op("matmul_epilogue").cpu(ins, outs, Attrs{{"ta", true}, {"tb", false}, {"program", p}});
  check_values(w2, vals(expect), 1e-5);
}
