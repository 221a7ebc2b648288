// Runs with the arena: one block of the plan's size from the pool per run,
// outputs in memory of their own that the next run leaves alone, the same
// numbers as the pool path on a graph with views, in-place chains and a
// two-output node, and the memory a run takes at its peak.
#include <doctest/doctest.h>

#include <cmath>

#include "backend/ops.h"
#include "ir/executor.h"
#include "ir/pass.h"
#include "ir/plan.h"
#include "graph_builder.h"
#include "two_output_op.h"

using namespace nn;
using namespace nntest;

namespace {

// y = exp(x) + exp(-x) through a few intermediates, and x * 2 as a second output.
ir::Graph two_outputs() {
  ir::Graph g;
  ir::ValueId x = input(g, f32({256}), "x");
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId b = add(g, "exp", {add(g, "neg", {x})});
  output(g, add(g, "add", {a, b}));
  output(g, add(g, "add", {x, x}));
  return g;
}

}  // namespace

TEST_CASE("arena run: outputs live in memory of their own; the next run leaves them alone") {
  ir::Graph g = two_outputs();
  nntest::run_pass(g, "inplace");
  ir::Plan p = ir::make_plan(g);
  REQUIRE(p.memory == ir::MemoryMode::arena);
  // -x, then exp(-x) over it; a's memory becomes the first output's.
  CHECK(p.planned_bytes == 1024);
  backend::Tensor in1 = backend::full(backend::Shape({256}), 0.0), in2 = backend::full(backend::Shape({256}), 1.0);
  std::vector<backend::Tensor> r1 = ir::run(g, p, std::span(&in1, 1));
  std::vector<backend::Tensor> r2 = ir::run(g, p, std::span(&in2, 1));
  CHECK(values(r1[0]) == std::vector<float>(256, 2.0f));  // e^0 + e^0
  CHECK(values(r1[1]) == std::vector<float>(256, 0.0f));
  CHECK(values(r2[0])[0] == doctest::Approx(std::exp(1.0) + std::exp(-1.0)));
  CHECK(values(r2[1]) == std::vector<float>(256, 2.0f));
  CHECK(r1[0].block() != r2[0].block());
  CHECK(r1[0].block() != r1[1].block());
}

TEST_CASE("arena run: the pool sees one arena block and the outputs at the run's peak") {
  ir::Graph g = two_outputs();
  nntest::run_pass(g, "inplace");
  ir::Plan arena = ir::make_plan(g), pool = ir::make_plan(g, ir::Schedule::automatic, ir::MemoryMode::pool);
  backend::Tensor in = backend::full(backend::Shape({256}), 0.0);
  backend::CachingPool& cp = backend::cpu_device()->pool();
  auto peak_of = [&](const ir::Plan& p) {
    size_t before = cp.stats().current, enclosing = cp.begin_window();
    std::vector<backend::Tensor> r = ir::run(g, p, std::span(&in, 1));
    size_t peak = cp.stats().window_peak - before;
    cp.end_window(enclosing);
    CHECK(cp.stats().current == before + 2 * backend::CachingPool::size_class(1024));  // only the outputs stay
    return peak;
  };
  const size_t out = 2 * backend::CachingPool::size_class(1024);
  CHECK(peak_of(arena) == backend::CachingPool::size_of(arena.planned_bytes, true) + out);
  // The pool: a with -x (then exp(-x) over it), then the two outputs.
  CHECK(pool.pool_bytes == 1024);
  CHECK(peak_of(pool) == 2 * 1024);
}

TEST_CASE("arena run: the numbers of the pool path, in every order, with views, chains and two outputs") {
  nntest::sum_diff_op();
  ir::Graph g;
  ir::ValueId x = input(g, f32({4, 8}), "x");
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId r = add(g, "reshape", {a}, {{"shape", backend::Shape({32})}});
  ir::ValueId b = add(g, "neg", {add(g, "reshape", {x}, {{"shape", backend::Shape({32})}})});
  const ir::NodeId n = g.add_node(&nntest::sum_diff_op(), {r, b}, {}, {f32({32}), f32({32})});
  ir::ValueId s = g.nodes[n].outputs[0], d = g.nodes[n].outputs[1];
  ir::ValueId m = add(g, "mul", {add(g, "tanh", {s}), d});
  ir::ValueId t = add(g, "sum", {m}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  output(g, t);
  output(g, add(g, "reshape", {add(g, "exp", {m})}, {{"shape", backend::Shape({4, 8})}}));
  nntest::run_pass(g, "inplace");
  backend::Tensor in = backend::Tensor::empty(backend::Shape({4, 8}), backend::DType::f32);
  for (int i = 0; i < 32; ++i) in.data<float>()[i] = 0.1f * float(i - 16);
  // By formula: m_i = tanh(e^x - x) * (e^x + x).
  double want = 0;
  for (int i = 0; i < 32; ++i) {
    const double xi = double(in.data<float>()[i]);
    want += std::tanh(std::exp(xi) - xi) * (std::exp(xi) + xi);
  }
  for (ir::Schedule sch : {ir::Schedule::serial, ir::Schedule::bfs, ir::Schedule::greedy})
    for (ir::MemoryMode mode : {ir::MemoryMode::arena, ir::MemoryMode::pool}) {
      std::vector<backend::Tensor> out = ir::run(g, ir::make_plan(g, sch, mode), std::span(&in, 1));
      CHECK(out[0].data<float>()[0] == doctest::Approx(want).epsilon(1e-5));
      const double x5 = double(in.data<float>()[5]);
      CHECK(out[1].data<float>()[5] == doctest::Approx(std::exp(std::tanh(std::exp(x5) - x5) * (std::exp(x5) + x5))));
      CHECK(out[1].shape() == backend::Shape({4, 8}));
    }
}

TEST_CASE("arena run: tensors with no elements take no room and still run") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({0, 3}), "x");
  ir::ValueId y = add(g, "exp", {x});
  ir::ValueId z = add(g, "sum", {add(g, "neg", {y})}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  output(g, z);
  nntest::run_pass(g, "inplace");
  ir::Plan p = ir::make_plan(g);
  CHECK(p.planned_bytes == 0);
  backend::Tensor in = backend::Tensor::empty(backend::Shape({0, 3}), backend::DType::f32);
  std::vector<backend::Tensor> r = ir::run(g, p, std::span(&in, 1));
  CHECK(values(r[0]) == std::vector<float>(3, 0.0f));
}
