// Eager op overhead through the whole interpreter: the nn loop
//   for i in 0..N { x = x * 1.0001 + 0.0001 }
// on a 4-element f32 tensor, timed per op (two ops per iteration). The
// loop's own cost (range step, scope, assignment) is included, as a user
// sees it. Prints the best of several runs.
#include <chrono>
#include <cstdio>
#include <sstream>

#include "frontend/interpreter.h"

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  nn::frontend::InterpreterOptions opts;
  opts.threads = 2;
  nn::frontend::Interpreter vm(opts);
  vm.run_code("<setup>", "let x = ones([4])\nfn run(n) { for i in 0..n { x = x * 1.0001 + 0.0001 } }\n");
  std::string call = "run(" + std::to_string(iterations) + ")";
  vm.run_code("<warmup>", call);
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    vm.run_code("<bench>", call);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
  }
  double per_op_us = best / (2.0 * iterations) * 1e6;
  std::printf("eager op overhead (interpreter, f32[4], %d iterations, 2 ops each): %.3f us per op\n", iterations,
              per_op_us);
  std::printf("goal: <= 0.9 us per op; PyTorch 1.13 on this machine: 1.85 us\n");
  return 0;
}
