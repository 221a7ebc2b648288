// Graph mode against eager mode on real training: the digits MLP and CNN
// give the same losses for 20 steps (relative 1e-5) traced and eager, and
// with the graph passes on and off; a graph step of the CNN takes less
// memory at its peak than the eager step.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "backend/device.h"
#include "frontend/interpreter.h"
#include "ir/pass.h"

namespace {

using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;
using nn::frontend::Value;

const char* kMlp = R"(
seed(0)
let (x, y) = load_digits()
let model = Sequential(Linear(64, 128), relu, Linear(128, 10))
let opt = sgd(params(model), lr=0.1, momentum=0.9)
let images = x
)";

const char* kCnn = R"(
seed(0)
let (x, y) = load_digits()
let images = reshape(x, [-1, 1, 8, 8])
let model = Sequential(
  Conv2d(1, 16, 3, padding=1), relu, MaxPool2d(2),
  Conv2d(16, 32, 3, padding=1), relu, MaxPool2d(2),
  Flatten(), Linear(128, 64), relu, Linear(64, 10))
let opt = adam(params(model), lr=0.005)
)";

const char* kTrain = R"(
graph train_step(xb, yb) {
  let loss = softmax_cross_entropy(model(xb), yb)
  minimize(loss, opt)
  return loss
}
let losses = []
for i in 0..20 {
  let lo = (i * 64) % 1700
  losses.append(item(train_step(images[lo:lo + 64], y[lo:lo + 64])))
}
losses
)";

std::vector<double> losses(const std::string& model, bool eager, const std::set<std::string>& disabled = {}) {
  InterpreterOptions o;
  o.eager_graphs = eager;
  o.threads = 1;
  o.disabled_passes = disabled;
  Interpreter vm(o);
  Value v = vm.run_code("train.nn", model + kTrain);
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
  vm.run_code("setup.nn", std::string(kCnn) + R"(
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

TEST_CASE("graph mode: the digits MLP trains with the losses of eager mode") { same_losses(kMlp); }

TEST_CASE("graph mode: the digits CNN (adam) trains with the losses of eager mode") { same_losses(kCnn); }

TEST_CASE("graph passes: the digits MLP and CNN train with the same losses with every pass off") {
  same_losses_without_passes(kMlp);
  same_losses_without_passes(kCnn);
}

TEST_CASE("graph mode: a CNN training step peaks lower than the eager step") {
  size_t graph = step_peak(false), eager = step_peak(true);
  INFO("graph peak " << graph << " bytes, eager peak " << eager << " bytes");
  CHECK(graph > 0);
  CHECK(graph < eager);
}
