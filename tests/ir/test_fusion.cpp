// The fusion passes on small graphs built by hand: the IR before and after
// (golden text), which nodes may join a group (dtypes, shapes, host
// numbers), what never joins (random ops and host calls keep their order; a
// merge that would make a cycle), the GEMM epilogue, fused nodes written
// in place (runs checked against the graph unfused), and groups on a GPU.
#include <doctest/doctest.h>

#include <cmath>

#include "backend/cuda_backend.h"
#include "backend/ops.h"
#include "backend/ops/fused_program.h"
#include "ir/executor.h"
#include "ir/printer.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;

namespace {

backend::TensorType typed(backend::DType d, std::initializer_list<int64_t> dims) {
  return {d, backend::Shape(dims), backend::cpu_device()};
}

ir::ValueId host_number(ir::Graph& g, double v) { return constant(g, backend::scalar(v, backend::DType::f64, true)); }

ir::ValueId captured(ir::Graph& g, ir::Role role, backend::TensorType t) {
  ir::ValueId v = g.add_value(t, role);
  g.values[v].captured = backend::zeros(t.shape, t.dtype);
  return v;
}

}  // namespace

TEST_CASE("fuse-elementwise: an sgd update with momentum is one node with two state updates") {
  ir::Graph g;
  g.name = "step";
  ir::ValueId grad = input(g, f32({4}), "g");
  ir::ValueId p = captured(g, ir::Role::param, f32({4}));
  ir::ValueId m = captured(g, ir::Role::state, f32({4}));
  ir::ValueId m2 = add(g, "add", {add(g, "mul", {m, host_number(g, 0.9)}), grad});
  ir::ValueId p2 = add(g, "sub", {p, add(g, "mul", {host_number(g, 0.1), m2})});
  g.updates = {{m, m2}, {p, p2}};
  CHECK(run_pass(g, "fuse-elementwise") == 1);
  CHECK(ir::print_ir(g) ==
        "graph step(%0 g: f32[4]) {\n"
        "  param %1: f32[4]\n"
        "  state %2: f32[4]\n"
        "  # forward\n"
        "  %3, %4 = fused %2, %0, %1 : f32[4], f32[4] {\n"
        "      t0 = mul %2, 0.9\n"
        "      t1 = add t0, %0 -> %3\n"
        "      t2 = mul 0.1, t1\n"
        "      t3 = sub %1, t2 -> %4\n"
        "    }\n"
        "  %2 <- %3\n"
        "  %1 <- %4\n"
        "}\n");
}

TEST_CASE("fuse-elementwise: groups follow shapes and dtypes; broadcast operands join") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({3, 4}), "x");
  ir::ValueId b = input(g, f32({4}), "b");
  ir::ValueId d = input(g, typed(backend::DType::f64, {3, 4}), "d");
  ir::ValueId ids = input(g, typed(backend::DType::i64, {3, 4}), "ids");
  ir::ValueId h = add(g, "relu", {add(g, "add", {x, b})});           // f32 [3, 4], b broadcast: one group
  ir::ValueId r = add(g, "sum", {h}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", false}});
  ir::ValueId small = add(g, "exp", {add(g, "neg", {r})});           // [3]: a group of its own
  ir::ValueId wide = add(g, "tanh", {add(g, "mul", {d, d})});        // f64: a group of its own
  ir::ValueId mixed = add(g, "add", {add(g, "mul", {ids, ids}), x});  // i64 ops never fuse
  output(g, small);
  output(g, wide);
  output(g, mixed);
  CHECK(run_pass(g, "fuse-elementwise") == 3);
  CHECK(ops(g) == "fused sum fused fused mul add");
  const auto& prog = backend::program_of(g.nodes[3].attrs);
  CHECK(prog.compute == backend::DType::f64);
  CHECK(backend::program_text(backend::program_of(g.nodes[0].attrs)) == "f32: t0 = add(i0, i1); t1 = relu(t0) -> t1");
}

TEST_CASE("fuse-elementwise: a member read outside the group is an output of the fused node") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({5}), "x");
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId b = add(g, "mul", {a, a});
  ir::ValueId c = add(g, "sum", {a}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  output(g, b);
  output(g, c);
  CHECK(run_pass(g, "fuse-elementwise") == 1);
  CHECK(ops(g) == "fused sum");
  CHECK(g.nodes[0].outputs.size() == 2);  // exp's result (read by sum) and b
  CHECK(backend::program_text(backend::program_of(g.nodes[0].attrs)) == "f32: t0 = exp(i0); t1 = mul(t0, t0) -> t0, t1");
  CHECK(g.nodes[0].parts().size() == 2);
}

// Twin recomputed steps (the same op of the same operands, as recompute
// makes one for each backward reader) are one step; a twin read outside is
// that step's output. tanh(x) * tanh(x) + tanh(x), with x = [0, 0.5, -1]:
// one tanh.
TEST_CASE("fuse-elementwise: a recomputed step equal to an earlier one is that step") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({3}), "x");
  ir::ValueId a = add(g, "tanh", {x}), b = add(g, "tanh", {x}), c = add(g, "tanh", {x});
  for (ir::ValueId v : {a, b, c}) g.nodes[g.values[v].producer].recomputed = true;
  ir::ValueId d = add(g, "add", {add(g, "mul", {a, b}), c});
  output(g, d);
  output(g, c);
  CHECK(run_pass(g, "fuse-elementwise") == 1);
  CHECK(ops(g) == "fused");
  CHECK(backend::program_text(backend::program_of(g.nodes[0].attrs)) ==
        "f32: t0 = tanh(i0); t1 = mul(t0, t0); t2 = add(t1, t0) -> t0, t2");
  CHECK(g.nodes[0].parts().size() == 3);
  backend::Tensor in = backend::Tensor::empty(backend::Shape({3}), backend::DType::f32);
  const float xs[] = {0.0f, 0.5f, -1.0f};
  std::copy(xs, xs + 3, in.data<float>());
  const std::vector<backend::Tensor> args = {in};
  const std::vector<backend::Tensor> out = ir::run(g, ir::make_plan(g), args);
  const std::vector<float> t = values(backend::tanh(in));  // the op alone
  for (size_t i = 0; i < 3; ++i) {
    CHECK(t[i] == doctest::Approx(std::tanh(xs[i])).epsilon(1e-6));
    CHECK(values(out[0])[i] == t[i] * t[i] + t[i]);
    CHECK(values(out[1])[i] == t[i]);
  }
}

TEST_CASE("fuse-elementwise: no merge through a node outside the group (it would be a cycle)") {
  // a = -exp(x); s = sum(a) (not elementwise); y = relu(a * s): the mul
  // cannot join a's group, since s needs that group first and the mul needs s.
  ir::Graph g;
  ir::ValueId x = input(g, f32({2, 3}), "x");
  ir::ValueId a = add(g, "neg", {add(g, "exp", {x})});
  ir::ValueId s = add(g, "sum", {a}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", true}});
  output(g, add(g, "relu", {add(g, "mul", {a, s})}));
  CHECK(run_pass(g, "fuse-elementwise") == 2);
  CHECK(ops(g) == "fused sum fused");
}

TEST_CASE("fuse-elementwise: two groups that meet at one node merge (adam's moments meet at the update)") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({8}), "x");
  ir::ValueId y = input(g, f32({8}), "y");
  ir::ValueId m = add(g, "mul", {add(g, "exp", {x}), host_number(g, 2)});
  ir::ValueId v = add(g, "sqrt", {add(g, "abs", {y})});
  output(g, add(g, "div", {m, v}));
  CHECK(run_pass(g, "fuse-elementwise") == 1);
  CHECK(ops(g) == "fused");
  CHECK(backend::program_text(backend::program_of(g.nodes[0].attrs)) ==
        "f32: t0 = exp(i0); t1 = mul(t0, 2); t2 = abs(i1); t3 = sqrt(t2); t4 = div(t1, t3) -> t4");
}

TEST_CASE("fuse-elementwise: random ops and host calls split groups and keep their order") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId a = add(g, "neg", {add(g, "exp", {x})});
  ir::NodeId pr = g.add_node(nullptr, {a}, {}, {});
  g.nodes[pr].set_host(ir::host_call("print"));
  ir::ValueId r = add(g, "rand", {}, {{"shape", backend::Shape({4})}, {"dtype", backend::DType::f32}});
  output(g, add(g, "relu", {add(g, "mul", {a, r})}));
  CHECK(run_pass(g, "fuse-elementwise") == 2);
  CHECK(ops(g) == "fused print rand fused");
}

TEST_CASE("fuse-elementwise: a backward op joins the forward only when that frees memory (a relu's mask)") {
  // Forward y = relu(x), out = exp(y); backward where(y > 0, g, 0). When
  // the backward reads y nowhere else, the mask joins the forward: y dies
  // there and a bool mask is kept instead. When y is needed later anyway,
  // the mask stays with its where and is never written.
  for (bool y_read_later : {false, true}) {
    ir::Graph g;
    g.name = "step";
    ir::ValueId x = input(g, f32({8}), "x");
    ir::ValueId gin = input(g, f32({8}), "g");
    ir::ValueId y = add(g, "relu", {x});
    output(g, add(g, "exp", {y}));
    const size_t backward = g.nodes.size();
    ir::ValueId mask = add(g, "gt", {y, host_number(g, 0)});
    output(g, add(g, "where", {mask, gin, host_number(g, 0)}));
    if (y_read_later) output(g, add(g, "sum", {y}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}}));
    for (size_t i = backward; i < g.nodes.size(); ++i) g.nodes[i].phase = ir::Phase::backward;
    CHECK(run_pass(g, "fuse-elementwise") == (y_read_later ? 2 : 1));
    const std::string ir = ir::print_ir(g);
    INFO(ir);
    if (!y_read_later) {
      CHECK(ir.find("  %2, %3 = fused %0 : f32[8], bool[8] {\n"
                    "      t0 = relu %0\n"
                    "      t1 = exp t0 -> %2\n"
                    "      t2 = gt t0, 0 : bool -> %3\n") != std::string::npos);
      CHECK(ir.find("  %5 = where %3, %1, %4 : f32[8]") != std::string::npos);
    } else {
      CHECK(ir.find("  %2, %3 = fused %0 : f32[8], f32[8] {") != std::string::npos);
      CHECK(ir.find("  %4 = fused %2, %1 : f32[8] {\n"
                    "      t0 = gt %2, 0 : bool\n"
                    "      t1 = where t0, %1, 0 -> %4\n") != std::string::npos);
    }
  }
}

TEST_CASE("fuse-elementwise: comparisons fuse only when they compare in the compute dtype") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId ids = input(g, typed(backend::DType::i64, {4}), "ids");
  // where(x > 0, x, 0): the relu's backward; gt of i64 ids stays alone.
  ir::ValueId r = add(g, "where", {add(g, "gt", {x, host_number(g, 0)}), x, host_number(g, 0)});
  ir::ValueId k = add(g, "gt", {ids, host_number(g, 1)});
  output(g, add(g, "where", {k, r, x}));
  CHECK(run_pass(g, "fuse-elementwise") == 1);
  CHECK(ops(g) == "gt fused");
  CHECK(backend::program_text(backend::program_of(g.nodes[1].attrs)) ==
        "f32: t0 = gt(i0, 0) : bool; t1 = where(t0, i0, 0); t2 = where(i1, t1, i0) -> t2");
}

TEST_CASE("fuse-matmul-epilogue: a GEMM read only by one elementwise node takes it as its epilogue") {
  ir::Graph g;
  g.name = "layer";
  ir::ValueId x = input(g, f32({8, 4}), "x");
  ir::ValueId w = input(g, f32({4, 3}), "w");
  ir::ValueId b = input(g, f32({3}), "b");
  output(g, add(g, "relu", {add(g, "add", {add(g, "matmul", {x, w}), b})}));
  // A product read by two nodes, and a batched one, keep their GEMM.
  ir::ValueId p = add(g, "matmul", {x, w});
  output(g, add(g, "add", {p, host_number(g, 1)}));
  output(g, add(g, "exp", {p}));
  ir::ValueId xb = input(g, f32({2, 8, 4}), "xb");
  output(g, add(g, "neg", {add(g, "matmul", {xb, w})}));
  CHECK(run_pass(g, "fuse-elementwise") == 1);
  CHECK(run_pass(g, "fuse-matmul-epilogue") == 1);
  CHECK(ops(g) == "matmul_epilogue matmul add exp matmul neg");
  CHECK(ir::print_ir(g).find("  %3 = matmul_epilogue %0, %1, %2 {ta=false, tb=false} : f32[8, 3] {\n"
                             "      t0 = add product, %2\n"
                             "      t1 = relu t0 -> %3\n"
                             "    }\n"
                             "  %4 = matmul %0, %1 : f32[8, 3]\n") != std::string::npos);
}

namespace {

backend::Tensor counting(backend::Shape s, float step) {
  backend::Tensor t = backend::Tensor::empty(s, backend::DType::f32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = step * float(i % 7) - 1.0f;
  return t;
}

}  // namespace

TEST_CASE("inplace after fusion: an sgd update runs in its param's and buffer's memory") {
  // The gradient is the run's own value (a sum over rows) and dies at the
  // update too; the new param still goes into the param's memory.
  ir::Graph g;
  ir::ValueId rows = input(g, f32({2, 4}), "rows");
  ir::ValueId grad = add(g, "sum", {rows}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  ir::ValueId p = captured(g, ir::Role::param, f32({4}));
  ir::ValueId m = captured(g, ir::Role::state, f32({4}));
  ir::ValueId m2 = add(g, "add", {add(g, "mul", {m, host_number(g, 0.9)}), grad});
  ir::ValueId p2 = add(g, "sub", {p, add(g, "mul", {host_number(g, 0.1), m2})});
  g.updates = {{m, m2}, {p, p2}};
  CHECK(run_pass(g, "fuse-elementwise") == 1);
  CHECK(run_pass(g, "inplace") == 2);
  const ir::Node& update = g.nodes.back();
  REQUIRE(update.inputs.size() == 3);
  CHECK(update.inputs[0] == m);
  CHECK(update.inputs[2] == p);
  CHECK(overwrites_of(update) == std::vector<int32_t>{0, 2});  // m's new value over m, p's over p, not over the gradient
  backend::Tensor gv = counting(backend::Shape({2, 4}), 0.5f);  // rows -1 -0.5 0 0.5 and 1 1.5 2 -1: sums 0 1 2 -0.5
  for (int step = 1; step <= 2; ++step) ir::run(g, ir::make_plan(g), std::span(&gv, 1));
  // Two steps from zero: m = g then 1.9 g; p = -0.1 g - 0.19 g.
  const std::vector<float> pv = values(g.values[p].captured), mv = values(g.values[m].captured);
  const double gsum[4] = {0, 1, 2, -0.5};
  for (int i = 0; i < 4; ++i) {
    CHECK(mv[size_t(i)] == doctest::Approx(1.9 * gsum[i]));
    CHECK(pv[size_t(i)] == doctest::Approx(-0.29 * gsum[i]));
  }
}

TEST_CASE("inplace after fusion: a GEMM epilogue writes over its program's dying operand, never its matrices") {
  // relu(x @ w + x @ v): one product becomes the epilogue's, the other is
  // operand 2 and dies there, so the result takes its memory.
  auto build = [](ir::Graph& g) {
    ir::ValueId x = input(g, f32({8, 4}), "x");
    ir::ValueId w = input(g, f32({4, 3}), "w");
    ir::ValueId v = input(g, f32({4, 3}), "v");
    output(g, add(g, "relu", {add(g, "add", {add(g, "matmul", {x, w}), add(g, "matmul", {x, v})})}));
  };
  ir::Graph plain, fused;
  build(plain);
  build(fused);
  CHECK(run_pass(fused, "fuse-elementwise") == 1);
  CHECK(run_pass(fused, "fuse-matmul-epilogue") == 1);
  CHECK(ops(fused) == "matmul matmul_epilogue");
  CHECK(run_pass(fused, "inplace") == 1);
  CHECK(overwrites_of(fused.nodes.back()) == std::vector<int32_t>{2});
  std::vector<backend::Tensor> args = {counting(backend::Shape({8, 4}), 0.5f), counting(backend::Shape({4, 3}), 0.25f),
                                       counting(backend::Shape({4, 3}), -0.5f)};
  const std::vector<float> want = values(ir::run(plain, ir::make_plan(plain), args)[0]);
  for (ir::MemoryMode mode : {ir::MemoryMode::arena, ir::MemoryMode::pool}) {
    const std::vector<float> got = values(ir::run(fused, ir::make_plan(fused, ir::Schedule::automatic, mode), args)[0]);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]));
  }
  // The matrices themselves are read while the product is made: a product
  // read again by its own epilogue keeps its inputs apart.
  ir::Graph self;
  ir::ValueId x = input(self, f32({4, 4}), "x");
  ir::ValueId sq = add(self, "exp", {x});
  output(self, add(self, "mul", {add(self, "matmul", {sq, sq}), sq}));
  run_pass(self, "fuse-elementwise");
  CHECK(run_pass(self, "fuse-matmul-epilogue") == 1);
  CHECK(run_pass(self, "inplace") == 0);
}

namespace {

// x0 + x1 + ... + x(n-1) on `gpu`: n - 1 adds, n inputs.
ir::Graph gpu_sum(backend::Device* gpu, int n) {
  ir::Graph g;
  const backend::TensorType t{backend::DType::f32, backend::Shape({4}), gpu};
  ir::ValueId v = input(g, t, "x");
  for (int k = 1; k < n; ++k) v = add(g, "add", {v, input(g, t, "x")});
  output(g, v);
  return g;
}

}  // namespace

TEST_CASE("fuse-elementwise on a GPU: only with GPU fusion on, and no wider than its kernel takes") {
  if (!backend::cuda_built()) return;  // without the CUDA backend, GPU fusion is always off
  nntest::FakeGpu gpu;
  ir::Graph off = gpu_sum(&gpu, 10);
  {
    nntest::GpuFusionScope fusion(false);
    CHECK(run_pass(off, "fuse-elementwise") == 0);
  }
  nntest::GpuFusionScope fusion(true);
  ir::Graph narrow = gpu_sum(&gpu, backend::kGpuFusedInputs);
  ir::Graph wide = gpu_sum(&gpu, backend::kGpuFusedInputs + 1);
  const size_t fused_narrow = run_pass(narrow, "fuse-elementwise"), fused_wide = run_pass(wide, "fuse-elementwise");
  CHECK(fused_narrow == 1);
  CHECK(ops(narrow) == "fused");
  CHECK(fused_wide == 0);  // 17 inputs: the adds stay as they are
  CHECK(wide.nodes.size() == size_t(backend::kGpuFusedInputs));
  // On the CPU the same sum is one node however wide.
  ir::Graph cpu = gpu_sum(backend::cpu_device(), backend::kGpuFusedInputs + 1);
  CHECK(run_pass(cpu, "fuse-elementwise") == 1);
}

TEST_CASE("fuse-elementwise: f16 and bf16 ops fuse into f32 programs on a GPU, not on the CPU") {
  if (!backend::cuda_built()) return;
  // relu(cast(x, f32) + b) cast back to bf16, as autocast leaves a linear
  // layer's bias and activation.
  auto graph = [](backend::Device* dev) {
    ir::Graph g;
    ir::ValueId x = input(g, {backend::DType::bf16, backend::Shape({4}), dev}, "x");
    ir::ValueId b = input(g, {backend::DType::f32, backend::Shape({4}), dev}, "b");
    ir::ValueId wide = add(g, "cast", {x}, {{"dtype", backend::DType::f32}});
    ir::ValueId r = add(g, "relu", {add(g, "add", {wide, b})});
    output(g, add(g, "cast", {r}, {{"dtype", backend::DType::bf16}}));
    return g;
  };
  nntest::FakeGpu gpu;
  nntest::GpuFusionScope fusion(true);
  ir::Graph on_gpu = graph(&gpu), on_cpu = graph(backend::cpu_device());
  CHECK(run_pass(on_gpu, "fuse-elementwise") == 1);
  CHECK(ops(on_gpu) == "fused");
  const auto& p = *on_gpu.nodes[0].attrs.get<backend::ProgramPtr>("program");
  CHECK(p.compute == backend::DType::f32);
  CHECK(p.steps.back().dtype == backend::DType::bf16);
  // The CPU's tile evaluator computes in f32 or f64 only: the add and relu
  // fuse, the casts stay.
  CHECK(run_pass(on_cpu, "fuse-elementwise") == 1);
  CHECK(ops(on_cpu) == "cast fused cast");
}

TEST_CASE("fuse-elementwise: no merge that makes a cycle through another group (it will be one node too)") {
  // a1 = exp(x) and a2 = a1 * k2 are forward; k1 = -a1, k2 = |x| and
  // k3 = k1 + k2 are one backward group K. a2 joining a1 would give
  // {a1, a2} -> K (a1 -> k1) and K -> {a1, a2} (k2 -> a2): a cycle once K is
  // one node, though no path of single nodes runs from a1 to a2 through K.
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  auto backward = [&](ir::ValueId v) {
    g.nodes[g.values[v].producer].phase = ir::Phase::backward;
    return v;
  };
  ir::ValueId a1 = add(g, "exp", {x});
  ir::ValueId k1 = backward(add(g, "neg", {a1}));
  ir::ValueId k2 = backward(add(g, "abs", {x}));
  output(g, backward(add(g, "add", {k1, k2})));
  output(g, add(g, "mul", {a1, k2}));
  CHECK(run_pass(g, "fuse-elementwise") == 1);  // K alone
  CHECK(ops(g) == "exp fused mul");
}
