// Graph mode against eager mode on real training: the digits MLP and CNN
// give the same losses for 20 steps (relative 1e-5) traced and eager, and
// with the graph passes on and off, and the same with the arena as with the
// pool; a graph step of the CNN takes less memory at its peak than the eager
// step, and its plan's lower bound is no more than the arena.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "backend/device.h"
#include "digits_training.h"
#include "frontend/graph_cache.h"
#include "frontend/interpreter.h"
#include "ir/pass.h"

namespace {

const std::string kTrainLoop = nntest::digits_training(20);

using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;
using nn::frontend::Value;

std::vector<double> losses(const std::string& model, bool eager, const std::set<std::string>& disabled = {},
                           nn::ir::MemoryMode memory = nn::ir::MemoryMode::arena) {
  InterpreterOptions o;
  o.eager_graphs = eager;
  o.memory = memory;
  o.threads = 1;
  o.disabled_passes = disabled;
  Interpreter vm(o);
  Value v = vm.run_code("train.nn", model + kTrainLoop);
  std::vector<double> out;
  for (const Value& x : v.as_list()->items) out.push_back(x.as_number());
  return out;
}

void same_losses(const std::vector<double>& g, const std::vector<double>& e) {
  REQUIRE(g.size() == 20);
  REQUIRE(e.size() == 20);
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("step " << i << ": " << g[i] << " against " << e[i]);
    CHECK(std::abs(g[i] - e[i]) <= 1e-5 * std::abs(e[i]));
  }
  CHECK(g.back() < g.front());  // it trains
}

void same_losses(const std::string& model) { same_losses(losses(model, false), losses(model, true)); }

// Every pass off, against every pass on.
void same_losses_without_passes(const std::string& model) {
  std::set<std::string> all;
  for (const std::string& name : nn::ir::pass_names()) all.insert(name);
  same_losses(losses(model, false), losses(model, false, all));
}

// Bytes taken at the peak of one training step after a warm-up step.
size_t step_peak(bool eager) {
  InterpreterOptions o;
  o.eager_graphs = eager;
  o.threads = 1;
  Interpreter vm(o);
  vm.run_code("setup.nn", std::string(nntest::kDigitsCnn) + R"(
graph train_step(xb, yb) {
  let loss = softmax_cross_entropy(model(xb), yb)
  minimize(loss, opt)
  return loss
}
let xb = images[0:64]
let yb = y[0:64]
train_step(xb, yb)
)");
  nn::backend::CachingPool& pool = nn::backend::cpu_device()->pool();
  size_t before = pool.stats().current;
  size_t enclosing = pool.begin_window();
  vm.run_code("step.nn", "train_step(xb, yb)");
  size_t peak = pool.stats().window_peak - before;
  pool.end_window(enclosing);
  return peak;
}

}  // namespace

TEST_CASE("graph mode: the digits MLP trains with the losses of eager mode") { same_losses(nntest::kDigitsMlp); }

TEST_CASE("graph mode: the digits CNN (adam) trains with the losses of eager mode") { same_losses(nntest::kDigitsCnn); }

TEST_CASE("graph passes: the digits MLP and CNN train with the same losses with every pass off") {
  same_losses_without_passes(nntest::kDigitsMlp);
  same_losses_without_passes(nntest::kDigitsCnn);
}

void same_losses_arena_and_pool(const std::string& model) {
  std::vector<double> a = losses(model, false), p = losses(model, false, {}, nn::ir::MemoryMode::pool);
  REQUIRE(a.size() == 20);
  REQUIRE(p.size() == 20);
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("step " << i << ": arena " << a[i] << ", pool " << p[i]);
    CHECK(std::abs(a[i] - p[i]) <= 1e-6 * std::abs(p[i]));
  }
}

TEST_CASE("graph mode: the MLP trains with the same losses in the arena as in the pool") {
  same_losses_arena_and_pool(nntest::kDigitsMlp);
}

TEST_CASE("graph mode: the CNN trains with the same losses in the arena as in the pool") {
  same_losses_arena_and_pool(nntest::kDigitsCnn);
}

TEST_CASE("graph mode: graph_stats gives the arena and its lower bound") {
  InterpreterOptions o;
  o.threads = 1;
  Interpreter vm(o);
  vm.run_code("stats.nn", std::string(nntest::kDigitsCnn) + kTrainLoop);
  const double planned = vm.run_code("planned.nn", "graph_stats(train_step).planned_bytes").as_number();
  const double lower = vm.run_code("lower.nn", "graph_stats(train_step).lower_bound_bytes").as_number();
  CHECK(lower > 0);
  CHECK(lower <= planned);
  CHECK(planned <= 1.10 * lower);  // the goal of the plan, on this model
}

TEST_CASE("graph mode: a CNN training step peaks lower than the eager step") {
  size_t graph = step_peak(false), eager = step_peak(true);
  INFO("graph peak " << graph << " bytes, eager peak " << eager << " bytes");
  CHECK(graph > 0);
  CHECK(graph < eager);
}

TEST_CASE("graph passes: each optimizer updates a param and its buffers in one kernel") {
  // A one-layer step: the weight's gradient is a GEMM, and its update (with
  // momentum, Adam's moments, Adagrad's sum, RMSprop's average) becomes that
  // GEMM's epilogue: every new value of the param and its buffers comes out
  // of one node.
  for (const char* make : {"sgd([w], lr=0.1)", "sgd([w], lr=0.1, momentum=0.9, nesterov=true, weight_decay=0.01)",
                           "adam([w], lr=0.05)", "adagrad([w], lr=0.1)", "rmsprop([w], lr=0.01, momentum=0.5)"}) {
    CAPTURE(make);
    InterpreterOptions o;
    o.threads = 1;
    Interpreter vm(o);
    vm.run_code("opt.nn", std::string("let w = param(reshape(arange(8) * 0.1 - 0.3, [4, 2]))\nlet opt = ") + make + R"(
graph step(xb) {
  let loss = sum(tanh(xb @ w) ** 2.0)
  minimize(loss, opt)
  return loss
}
step(reshape(arange(8) * 0.5 - 2.0, [2, 4]))
)");
    const nn::frontend::CompiledGraph* cg = nullptr;
    for (const auto& c : vm.graphs())
      if (c->name == "step") cg = c->latest();
    REQUIRE(cg);
    std::set<nn::ir::NodeId> makers;
    size_t per_param = 0;
    for (const nn::ir::StateUpdate& u : cg->graph.updates)
      if (cg->graph.values[u.value].type.shape == nn::backend::Shape({4, 2})) {
        makers.insert(cg->graph.values[u.value].producer);
        ++per_param;
      }
    CHECK(per_param >= 1);
    CHECK(makers.size() == 1);
    CHECK(cg->graph.nodes[*makers.begin()].name() == "matmul_epilogue");
  }
}
