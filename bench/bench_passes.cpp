// The graph passes against PyTorch: training steps of the MLP 784-512-256-10
// and the LeNet CNN of bench_training (bench/models/mlp784.nn, lenet.nn;
// batch 64, SGD momentum 0.9, weight decay 1e-5) run eagerly, as a graph
// with every pass off, and as a graph with every pass on, with PyTorch's
// eager step (bench/torch_graph.py through TorchPeer) timed in the same run,
// in blocks between nn's rounds, so that both see the same load. The modes
// run their steps interleaved, each round starting with another mode.
// Goals: with all passes, MLP at most 0.35x and CNN at most 0.5x PyTorch's
// time per step (2 threads), and the CNN at most 1.3x its floor
// (common/floor.h: its products and convolutions at cblas_sgemm's rate,
// measured between the blocks of rounds). Also printed: each graph's node count traced
// and after the passes, its fused nodes, and the same for the digits CNN's
// training step (bench/models/digits_cnn.nn).
//
// Usage: bench_passes [--threads N] [--steps N] [--no-torch]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/floor.h"
#include "common/median.h"
#include "common/torch_peer.h"
#include "frontend/graph_cache.h"
#include "frontend/interpreter.h"
#include "ir/pass.h"

namespace {

using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;
using nn::frontend::Value;
using Clock = std::chrono::steady_clock;

using nn::bench::median;

struct Mode {
  const char* name;
  bool eager, passes;
};
constexpr Mode kModes[] = {{"eager", true, true}, {"graph, passes off", false, false}, {"graph, all passes", false, true}};
constexpr int kNumModes = 3;

struct Model {
  const char* title;
  const char* script;      // under bench/models/
  const char* torch_name;  // in torch_graph.py
  double goal;             // nn with all passes / PyTorch, at most
  double floor_goal;       // nn with all passes / its floor, at most (0: none)
};
constexpr Model kModels[] = {{"MLP 784-512-256-10", "mlp784.nn", "mlp784", 0.35, 0},
                             {"LeNet CNN on 1x28x28", "lenet.nn", "lenet", 0.5, 1.3}};

// One mode's interpreter with a model loaded.
struct Runner {
  std::unique_ptr<Interpreter> vm;
  Value step, x, y;
  std::vector<double> ms;
  std::string error;
};

std::unique_ptr<Interpreter> interpreter(const Mode& m, int threads) {
  InterpreterOptions o;
  o.threads = threads;
  o.eager_graphs = m.eager;
  if (!m.passes)
    for (const std::string& name : nn::ir::pass_names()) o.disabled_passes.insert(name);
  return std::make_unique<Interpreter>(o);
}

std::string describe(Interpreter& vm, const std::exception& e) {
  if (auto* se = dynamic_cast<const nn::frontend::ScriptError*>(&e)) return vm.render(*se);
  return e.what();
}

void load(Runner& r, const Mode& m, const std::string& script, int threads) {
  r.vm = interpreter(m, threads);
  try {
    r.vm->run_file(script);
    r.step = *r.vm->find_global("train_step");
    r.x = r.vm->find_global("xs")->as_list()->items.at(0);
    r.y = r.vm->find_global("ys")->as_list()->items.at(0);
  } catch (const std::exception& e) {
    r.error = describe(*r.vm, e);
  }
}

double step_ms(Runner& r) {
  if (!r.error.empty()) return NAN;
  auto t0 = Clock::now();
  try {
    r.vm->call(r.step, {r.x, r.y});
  } catch (const std::exception& e) {
    r.error = describe(*r.vm, e);
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

const nn::frontend::CompiledGraph* train_step(Interpreter& vm) {
  for (const auto& c : vm.graphs())
    if (const auto* cg = c->latest(); cg && c->name == "train_step") return cg;
  return nullptr;
}

// "168 -> 37 nodes (21 fused)" for the compiled train_step.
std::string graph_counts(Interpreter& vm) {
  const auto* cg = train_step(vm);
  if (!cg) return "not compiled";
  size_t fused = 0;
  for (const auto& n : cg->graph.nodes) fused += n.attrs.has("program");
  char buf[96];
  std::snprintf(buf, sizeof buf, "%zu -> %zu nodes (%zu fused)", cg->raw.nodes.size(), cg->graph.nodes.size(), fused);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, steps = 100;
  bool use_torch = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--no-torch")) use_torch = false;
    else {
      std::fprintf(stderr, "usage: bench_passes [--threads N] [--steps N] [--no-torch]\n");
      return 2;
    }
  }
  std::printf("bench_passes: training steps with the graph passes off and on, against PyTorch, %d threads\n", threads);
  nn::bench::TorchPeer torch;
  if (use_torch) torch.start(threads, 5);
  else torch.skip("skipped (--no-torch)");

  constexpr int kWarmup = 5, kTorchBlock = 20;
  int failed = 0, goals_met = 0;
  for (const Model& m : kModels) {
    const std::string script = std::string(NN_BENCH_DIR) + "/models/" + m.script;
    Runner runs[kNumModes];
    for (int k = 0; k < kNumModes; ++k) load(runs[k], kModes[k], script, threads);
    std::vector<double> torch_ms, sgemm;
    for (int i = 0; i < kWarmup + steps; ++i) {
      for (int j = 0; j < kNumModes; ++j) {
        Runner& r = runs[(i + j) % kNumModes];
        const double ms = step_ms(r);
        if (i >= kWarmup) r.ms.push_back(ms);
      }
      if (i >= kWarmup && (i - kWarmup + 1) % kTorchBlock == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the other side's threads go idle
        sgemm.push_back(nn::bench::sgemm_gflops(threads));
        if (torch.on()) {
          std::vector<double> t = torch.run(m.torch_name, kTorchBlock);
          torch_ms.insert(torch_ms.end(), t.begin(), t.end());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    const double pt = median(torch_ms);
    std::printf("\n== %s, batch 64 (bench/models/%s), median of %d steps\n", m.title, m.script, steps);
    std::printf("   %-20s %10s %10s %10s   %s\n", "mode", "ms/step", "min ms", "/PyTorch", "graph");
    for (int k = 0; k < kNumModes; ++k) {
      Runner& r = runs[k];
      if (!r.error.empty()) {
        std::printf("   %-20s FAILED:\n%s\n", kModes[k].name, r.error.c_str());
        ++failed;
        continue;
      }
      const double med = median(r.ms);
      char ratio[32] = "-";
      if (!torch_ms.empty()) std::snprintf(ratio, sizeof ratio, "%.2f", med / pt);
      std::printf("   %-20s %10.3f %10.3f %10s   %s\n", kModes[k].name, med, *std::min_element(r.ms.begin(), r.ms.end()),
                  ratio, kModes[k].eager ? "" : graph_counts(*r.vm).c_str());
    }
    if (torch_ms.empty()) {
      std::printf("   (PyTorch skipped: %s)\n", torch.why().c_str());
    } else {
      std::printf("   %-20s %10.3f %10.3f %10s   (%zu steps in blocks of %d)\n", "PyTorch eager", pt,
                  *std::min_element(torch_ms.begin(), torch_ms.end()), "1.00", torch_ms.size(), kTorchBlock);
      const double ratio = median(runs[2].ms) / pt;
      goals_met += ratio <= m.goal;
      std::printf("   goal: all passes <= %.2fx PyTorch: %.2fx %s\n", m.goal, ratio, ratio <= m.goal ? "MET" : "NOT MET");
    }
    const auto* cg = runs[2].error.empty() ? train_step(*runs[2].vm) : nullptr;
    if (cg && !sgemm.empty()) {
      const double flops = nn::bench::product_flops(cg->graph), rate = median(sgemm);
      const double floor_ms = flops / (rate * 1e9) * 1e3, ratio = median(runs[2].ms) / floor_ms;
      std::printf("   floor: %.1f MFLOP a step (products and convolutions) at cblas_sgemm's %.0f GFLOP/s (1024^2, "
                  "median of %zu this run) = %.3f ms; all passes %.2fx the floor",
                  flops * 1e-6, rate, sgemm.size(), floor_ms, ratio);
      if (m.floor_goal > 0) std::printf(" (goal <= %.1fx: %s)", m.floor_goal, ratio <= m.floor_goal ? "MET" : "NOT MET");
      std::printf("\n");
    }
  }
  torch.stop();

  // The digits CNN's training step (examples/digits_cnn.nn): node counts.
  Runner cnn;
  load(cnn, kModes[2], std::string(NN_BENCH_DIR) + "/models/digits_cnn.nn", threads);
  if (cnn.error.empty()) {
    nn::frontend::Value xs = *cnn.vm->find_global("xs"), ys = *cnn.vm->find_global("ys");
    cnn.x = xs.as_list()->items.at(0);
    cnn.y = ys.as_list()->items.at(0);
    step_ms(cnn);
  }
  std::printf("\n== digits CNN training step (bench/models/digits_cnn.nn): %s\n",
              cnn.error.empty() ? graph_counts(*cnn.vm).c_str() : cnn.error.c_str());
  if (failed) std::printf("%d run(s) FAILED\n", failed);
  return failed ? 1 : 0;
}
