// Compile time of a graph: trace (with its autodiff), every pass, the plan,
// for the training step of a character model: a 3-layer LSTM written by hand
// (four gates, each `x @ w + h @ u + b`, through sigmoid and tanh) unrolled
// over the time steps, with, at every step, an output projection of the top
// layer's h to the vocabulary and its softmax cross-entropy against the next
// character, the losses summed; then its backward and an Adam step. About
// 260 traced nodes per time step. 17, 50 and 170 steps make about 5k, 14k
// and 45k traced nodes; 50 steps is the issue's model (the shape of the Owl
// seed's lazy LSTM), which traces 14k nodes here, so the 45k-node graph is
// the same model over 170 steps. Per size: the traced and optimized
// node counts, the time of each phase (the median of a few compiles), the
// total, and the time per traced node: a compiler linear in the node count
// keeps the last column flat. Goal: at most 50 ms in total for the 45k-node
// step.
//
// Usage: bench_compile [--reps N] [--steps T]  (--steps: that one size only, to profile)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/median.h"
#include "frontend/graph_cache.h"
#include "frontend/heap_tuning.h"
#include "frontend/interpreter.h"

namespace {

using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;

// The model and the step; `xs` holds one [B, D] input per time step.
constexpr const char* kLstm = R"(
let B = 8
let D = 16
let H = 32
let V = 64
fn _gate(n_in, n) {
  let s = n ** -0.5
  {w: param((rand([n_in, n]) * 2 - 1) * s), u: param((rand([n, n]) * 2 - 1) * s), b: param(zeros([n]))}
}
fn lstm_layer(n_in, n) { {i: _gate(n_in, n), f: _gate(n_in, n), g: _gate(n_in, n), o: _gate(n_in, n)} }
fn gate(p, x, h) { x @ p.w + h @ p.u + p.b }
# One time step of one layer: the new (h, c).
fn lstm_cell(l, x, h, c) {
  let i = sigmoid(gate(l.i, x, h))
  let f = sigmoid(gate(l.f, x, h))
  let g = tanh(gate(l.g, x, h))
  let o = sigmoid(gate(l.o, x, h))
  let c2 = f * c + i * g
  (o * tanh(c2), c2)
}
let layers = [lstm_layer(D, H), lstm_layer(H, H), lstm_layer(H, H)]
let out = {w: param((rand([H, V]) * 2 - 1) * H ** -0.5), b: param(zeros([V]))}
let opt = adam(params([layers, out]), lr=1e-3)
# Every step predicts the next character from the top layer's h: the
# projection to the vocabulary and its cross-entropy, summed over the steps.
graph train_step(xs, ys, steps) {
  let hs = []
  let cs = []
  for k in 0..len(layers) {
    append(hs, zeros([B, H]))
    append(cs, zeros([B, H]))
  }
  let loss = 0.0
  for t in 0..steps {
    let x = xs[t]
    for k in 0..len(layers) {
      let s = lstm_cell(layers[k], x, hs[k], cs[k])
      hs[k] = s[0]
      cs[k] = s[1]
      x = s[0]
    }
    loss = loss + softmax_cross_entropy(x @ out.w + out.b, ys[t])
  }
  minimize(loss, opt)
  return loss
}
)";

struct Phases {
  size_t traced = 0, nodes = 0;
  double trace_ms = 0, plan_ms = 0, keep_ms = 0, total_ms = 0;
  std::map<std::string, double> pass_ms;
};

// One compile of the step unrolled over `steps` in a fresh interpreter.
Phases compile_once(int steps) {
  InterpreterOptions o;
  o.threads = 1;
  Interpreter vm(o);
  vm.run_code("lstm.nn", kLstm);
  vm.run_code("run.nn", "let l = train_step(randn([" + std::to_string(steps) + ", B, D]), randint(0, V, [" +
                            std::to_string(steps) + ", B]), " + std::to_string(steps) + ")");
  const nn::frontend::CompiledGraph* cg = nullptr;
  for (const auto& c : vm.graphs())
    if (c->name == "train_step") cg = c->latest();
  Phases p;
  if (!cg) return p;
  p.traced = cg->raw.nodes.size();
  p.nodes = cg->graph.nodes.size();
  p.trace_ms = cg->trace_ms;
  double passes = 0;
  for (const auto& r : cg->passes) {
    p.pass_ms[r.pass] = r.ms;
    passes += r.ms;
  }
  p.plan_ms = cg->plan_ms;
  p.keep_ms = cg->compile_ms - passes - cg->plan_ms;  // the rest: the copy of the traced graph (and checks)
  p.total_ms = cg->trace_ms + cg->compile_ms;
  return p;
}

using nn::bench::median;

// Each phase's median over the compiles.
Phases medians(const std::vector<Phases>& runs) {
  Phases m = runs.front();
  auto of = [&](auto field) {
    std::vector<double> xs;
    for (const Phases& p : runs) xs.push_back(field(p));
    return median(xs);
  };
  m.trace_ms = of([](const Phases& p) { return p.trace_ms; });
  m.plan_ms = of([](const Phases& p) { return p.plan_ms; });
  m.keep_ms = of([](const Phases& p) { return p.keep_ms; });
  m.total_ms = of([](const Phases& p) { return p.total_ms; });
  for (auto& [name, ms] : m.pass_ms)
    ms = of([&](const Phases& p) { return p.pass_ms.count(name) ? p.pass_ms.at(name) : 0.0; });
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  nn::frontend::keep_freed_memory();  // as the nn command does
  int reps = 5;
  std::vector<int> sizes = {17, 50, 170};
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps")) reps = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--steps")) sizes = {std::max(1, std::atoi(argv[i + 1]))};
  }
  std::printf("bench_compile: trace + autodiff + passes + plan of the training step (Adam) of a character\n");
  std::printf("model: a 3-layer LSTM unrolled over the time steps, a projection and a cross-entropy per step;\n");
  std::printf("median of %d compiles\n\n", reps);
  std::vector<Phases> med;
  for (int steps : sizes) {
    std::vector<Phases> runs;
    for (int r = 0; r < reps; ++r) runs.push_back(compile_once(steps));
    med.push_back(medians(runs));
  }
  std::printf("%-28s", "time steps (3 layers)");
  for (int s : sizes) std::printf("%12d", s);
  std::printf("\n%-28s", "nodes traced");
  for (const Phases& p : med) std::printf("%12zu", p.traced);
  std::printf("\n%-28s", "nodes after the passes");
  for (const Phases& p : med) std::printf("%12zu", p.nodes);
  std::printf("\n%-28s", "trace + autodiff ms");
  for (const Phases& p : med) std::printf("%12.2f", p.trace_ms);
  for (const auto& [name, ms] : med[0].pass_ms) {
    (void)ms;
    std::printf("\n  %-26s", (name + " ms").c_str());
    for (const Phases& p : med) std::printf("%12.2f", p.pass_ms.count(name) ? p.pass_ms.at(name) : 0.0);
  }
  std::printf("\n%-28s", "plan ms");
  for (const Phases& p : med) std::printf("%12.2f", p.plan_ms);
  std::printf("\n%-28s", "raw copy (and checks) ms");
  for (const Phases& p : med) std::printf("%12.2f", p.keep_ms);
  std::printf("\n%-28s", "total ms");
  for (const Phases& p : med) std::printf("%12.2f", p.total_ms);
  std::printf("\n%-28s", "us per traced node");
  for (const Phases& p : med) std::printf("%12.3f", p.traced ? 1000.0 * p.total_ms / double(p.traced) : 0.0);
  const Phases& big = med.back();
  std::printf("\n\ngoal: the %zu-node step compiled in %.1f ms (<= 50 ms): %s\n", big.traced, big.total_ms,
              big.total_ms <= 50 ? "MET" : "NOT MET");
  return 0;
}
