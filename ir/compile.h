// The one way from a traced graph to a runnable one: the IR check, the
// passes, the schedule and the memory plan, with the time each took.
#pragma once
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/pass.h"
#include "ir/plan.h"

namespace nn::ir {

struct CompileOptions {
  bool verify = false;                  // check the graph before and after the passes (ir/verifier.h)
  std::set<std::string> disabled_passes;  // --no-pass
  Schedule schedule = Schedule::automatic;
  MemoryMode memory = MemoryMode::arena;
  // Called with the graph as traced ("traced"), then after each pass with
  // its name (nn ir --dump-passes).
  std::function<void(const std::string&, const Graph&)> dump;
};

struct CompiledGraph {
  Graph raw;    // as traced, with its backward and optimizer parts
  Graph graph;  // after the passes: what runs
  std::vector<PassResult> passes;
  Plan plan;
  double compile_ms = 0;  // all of compile(): checks, passes and plan
  double plan_ms = 0;
};

CompiledGraph compile(Graph traced, const CompileOptions& options = {});

}  // namespace nn::ir
