// Cost of the capture guards (frontend/capture_guard.h) on each call of a
// compiled graph: a model of 50 layers, 100 params in all (`m.layers[i].w`,
// `.b`), trained by adam in a graph, so the graph captured 300 tensors
// (params, first and second moments) plus the step count, reached through
// `m` and `opt`. Times CaptureGuards::hold, the check every call makes, and a
// whole call of the graph for scale. Prints the best of several runs, in ns.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "frontend/interpreter.h"

namespace {

template <class F>
double best_ns_per_call(int iterations, F&& f) {
  double best = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) f();
    best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
  }
  return best / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nn::frontend;
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 100000;
  InterpreterOptions opts;
  opts.threads = 1;
  Interpreter vm(opts);
  vm.run_code("<setup>", R"(
let layers = []
for i in 0..50 { append(layers, {w: param(randn([4, 4])), b: param(zeros([4]))}) }
let m = {layers: layers}
let opt = adam(params(m), lr=1e-3)
graph step(x) {
  let h = x
  for l in m.layers { h = tanh(h @ l.w + l.b) }
  let loss = mean(h * h)
  minimize(loss, opt)
  return loss
}
let x = randn([2, 4])
step(x)
)");
  const CompiledGraph& cg = *vm.graphs().back()->latest();
  const Function& step = *vm.find_global("step")->as_function();
  std::vector<Value> args{*vm.find_global("x")};
  const GuardScope scope{{}, args, step.env.get(), nullptr};
  if (!cg.guards.hold(scope)) {
    std::fprintf(stderr, "the guards fail: %s\n", cg.guards.why_not(scope).c_str());
    return 1;
  }
  const double guard = best_ns_per_call(iterations, [&] {
    if (!cg.guards.hold(scope)) std::abort();
  });
  const double call = best_ns_per_call(std::max(1, iterations / 1000), [&] { vm.call(Value(vm.find_global("step")->as_function()), args); });
  std::printf("capture guards, 100 params + adam (%zu guarded paths): %7.1f ns per call\n", cg.guards.paths(), guard);
  std::printf("whole graph call, for scale:                           %7.1f ns per call\n", call);
  return 0;
}
