// Cost of one call through the interpreter, binding included: an nn function
// and a built-in, each called with positional arguments only and with a
// keyword argument plus a default. The cost of the loop around the calls is
// measured alone and taken off. Prints the best of several runs, in ns.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "frontend/interpreter.h"

namespace {

double best_seconds(nn::frontend::Interpreter& vm, const std::string& code) {
  vm.run_code("<warmup>", code);
  double best = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    vm.run_code("<bench>", code);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 200000;
  nn::frontend::InterpreterOptions opts;
  opts.threads = 1;
  nn::frontend::Interpreter vm(opts);
  vm.run_code("<setup>", "fn f(a, b=1, c=2) { a }\nlet xs = [1, 2]\n");
  const std::string loop = "for i in 0.." + std::to_string(iterations) + " { ";
  const double empty = best_seconds(vm, loop + "i }");
  const struct {
    const char* what;
    const char* body;
  } cases[] = {
      {"nn fn, positional      f(i, 1, 2)", "f(i, 1, 2) }"},
      {"nn fn, keyword+default f(i, c=3)", "f(i, c=3) }"},
      {"built-in, positional   len(xs)", "len(xs) }"},
      {"built-in, keyword      assert(true, msg=\"m\")", "assert(true, msg=\"m\") }"},
  };
  for (auto& c : cases) {
    double s = best_seconds(vm, loop + c.body) - empty;
    std::printf("%-46s %7.1f ns per call\n", c.what, s / iterations * 1e9);
  }
  return 0;
}
