// ir::compile, the one entry from a traced graph to a runnable one: it keeps
// the graph as traced, runs the passes in pipeline order (without those
// turned off), plans every node, shows each stage to `dump`, refuses an
// invalid graph when asked to verify, and what it makes runs.
#include <doctest/doctest.h>

#include <cmath>

#include "backend/ops.h"
#include "ir/compile.h"
#include "ir/executor.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;

namespace {

// exp(x * 1) + c, with c = 2: `algebraic` drops the `* 1`, fusion merges
// the rest.
ir::Graph exp_plus_two() {
  ir::Graph g;
  g.name = "step";
  ir::ValueId x = input(g, f32({3}), "x");
  ir::ValueId one = constant(g, backend::full(backend::Shape({}), 1.0));
  ir::ValueId two = constant(g, backend::full(backend::Shape({3}), 2.0));
  output(g, add(g, "add", {add(g, "exp", {add(g, "mul", {x, one})}), two}));
  return g;
}

}  // namespace

TEST_CASE("compile: the raw graph, the passes in order, a plan of every node, and it runs") {
  ir::CompiledGraph c = ir::compile(exp_plus_two());
  CHECK(ops(c.raw) == "mul exp add");
  CHECK(ops(c.graph) == "fused");
  std::vector<std::string> ran;
  for (const ir::PassResult& r : c.passes) ran.push_back(r.pass);
  CHECK(ran == ir::pass_names());
  CHECK(c.plan.order.size() == c.graph.nodes.size());
  CHECK(c.compile_ms >= c.plan_ms);

  const float x[] = {0.0f, 1.0f, -1.0f};
  backend::Tensor in = backend::full(backend::Shape({3}), 0.0);
  for (int i = 0; i < 3; ++i) in.data<float>()[i] = x[i];
  std::vector<backend::Tensor> out = ir::run(c.graph, c.plan, std::vector<backend::Tensor>{in});
  REQUIRE(out.size() == 1);
  const std::vector<float> y = values(out[0]);
  for (int i = 0; i < 3; ++i) CHECK(y[i] == doctest::Approx(std::exp(x[i]) + 2.0f));
}

TEST_CASE("compile: a pass turned off does not run; dump sees the traced graph, then each pass") {
  ir::CompileOptions o;
  o.disabled_passes = {"algebraic", "fuse-elementwise"};
  std::vector<std::string> stages;
  o.dump = [&](const std::string& stage, const ir::Graph& g) {
    stages.push_back(stage);
    if (stage == "traced") CHECK(ops(g) == "mul exp add");
  };
  ir::CompiledGraph c = ir::compile(exp_plus_two(), o);
  CHECK(ops(c.graph) == "mul exp add");
  REQUIRE(stages.size() == c.passes.size() + 1);
  CHECK(stages[0] == "traced");
  for (size_t i = 0; i < c.passes.size(); ++i) {
    CHECK(stages[i + 1] == c.passes[i].pass);
    CHECK(c.passes[i].pass != "algebraic");
    CHECK(c.passes[i].pass != "fuse-elementwise");
  }
}

TEST_CASE("compile: with verify, an invalid graph is refused before any pass") {
  ir::Graph g = exp_plus_two();
  g.nodes[0].inputs[0] = 99;  // reads a value that does not exist
  ir::CompileOptions o;
  o.verify = true;
  bool dumped = false;
  o.dump = [&](const std::string&, const ir::Graph&) { dumped = true; };
  CHECK_THROWS_WITH_AS(ir::compile(std::move(g), o), doctest::Contains("IR of graph step is invalid"), backend::Error);
  CHECK(!dumped);
}
