// ir::compile (ir/compile.h): check, passes, plan.
#include "ir/compile.h"

#include <chrono>

#include "ir/verifier.h"

namespace nn::ir {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CompiledGraph compile(Graph traced, const CompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  CompiledGraph c;
  if (options.verify) check(traced);
  c.raw = traced;
  c.graph = std::move(traced);
  if (options.dump) options.dump("traced", c.raw);
  c.passes = optimize(c.graph, options.disabled_passes, options.dump);
  if (options.verify) check(c.graph);
  const auto t1 = std::chrono::steady_clock::now();
  c.plan = make_plan(c.graph, options.schedule, options.memory);
  c.plan_ms = ms_since(t1);
  c.compile_ms = ms_since(t0);
  return c;
}

}  // namespace nn::ir
