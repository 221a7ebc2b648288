// Training steps of the sequence models on the CPU: the character GPT
// (bench/models/gpt.nn, nanoGPT's CPU configuration: 4 blocks, 4 heads,
// width 128, context 64, batch 12) and the character LSTM
// (bench/models/lstm.nn: hidden 128, context 32, batch 16), nn as a graph
// and eagerly, against PyTorch (bench/torch_sequence.py, Debian's
// python3-torch, eager, with OPENBLAS_NUM_THREADS=1 and its intra-op
// threads at 1 and at the run's count, the faster kept). The three take
// turns, round after round, in the same run; each round's figure is the
// median of its steps, and the table gives the median of the rounds.
//
// Usage: bench_sequence [--threads N] [--steps N] [--rounds N] [--no-torch]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/median.h"
#include "frontend/interpreter.h"

namespace {

using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;
using nn::frontend::Value;
using Clock = std::chrono::steady_clock;

using nn::bench::median;

// One model's interpreter, its step ready to call.
struct NnModel {
  std::unique_ptr<Interpreter> vm;
  Value step, x, y;

  NnModel(const std::string& script, bool eager, int threads) {
    InterpreterOptions o;
    o.eager_graphs = eager;
    o.threads = threads;
    vm = std::make_unique<Interpreter>(o);
    vm->run_file(script);
    step = *vm->find_global("train_step");
    x = vm->find_global("xs")->as_list()->items.at(0);
    y = vm->find_global("ys")->as_list()->items.at(0);
  }
  // The median time of n steps (after one untimed step).
  double run(int n) {
    vm->call(step, {x, y});
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      vm->call(step, {x, y});
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    return median(ms);
  }
};

// PyTorch's median step time, from a child process; NAN when it fails.
double torch_ms(const char* model, int threads, int steps) {
  const std::string cmd = "OPENBLAS_NUM_THREADS=1 /usr/bin/python3 " NN_BENCH_DIR "/torch_sequence.py " +
                          std::string(model) + " " + std::to_string(threads) + " " + std::to_string(steps) + " 2 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return NAN;
  double ms = NAN;
  if (std::fscanf(p, "%lf", &ms) != 1) ms = NAN;
  pclose(p);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, steps = 10, rounds = 3;
  bool torch = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--threads") threads = next();
    else if (a == "--steps") steps = next();
    else if (a == "--rounds") rounds = next();
    else if (a == "--no-torch") torch = false;
    else {
      std::fprintf(stderr, "usage: bench_sequence [--threads N] [--steps N] [--rounds N] [--no-torch]\n");
      return 2;
    }
  }
  std::printf("bench_sequence: %d threads, %d rounds of %d steps (ms per step, median of the rounds)\n", threads,
              rounds, steps);
  std::printf("%-6s %12s %12s %12s %14s %14s\n", "model", "nn graph", "nn eager", "PyTorch", "graph/PyTorch",
              "eager/PyTorch");
  for (const char* model : {"gpt", "lstm"}) {
    const std::string script = std::string(NN_BENCH_DIR) + "/models/" + model + ".nn";
    std::vector<double> graph, eager, peer;
    try {
      NnModel g(script, false, threads), e(script, true, threads);
      for (int r = 0; r < rounds; ++r) {
        graph.push_back(g.run(steps));
        eager.push_back(e.run(steps));
        if (torch) {
          // Its best configuration: one intra-op thread or the run's count.
          const double one = torch_ms(model, 1, steps), all = threads > 1 ? torch_ms(model, threads, steps) : NAN;
          peer.push_back(std::isnan(all) || one < all ? one : all);
        }
      }
    } catch (const std::exception& ex) {
      std::printf("%-6s failed: %s\n", model, ex.what());
      continue;
    }
    const double gm = median(graph), em = median(eager), pm = median(peer);
    std::printf("%-6s %12.2f %12.2f %12.2f %14.2f %14.2f\n", model, gm, em, pm, gm / pm, em / pm);
    std::fflush(stdout);
  }
  return 0;
}
