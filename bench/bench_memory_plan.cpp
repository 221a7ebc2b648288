// bench_memory_plan: the static memory plan of the training steps of
// bench/models/ (digits MLP, digits CNN, ResNet-8). For each model's compiled
// train_step and each order (serial, greedy, frees-first, BFS, and the one
// `auto` takes): nodes, arena bytes, the liveness lower bound for that
// order, their ratio (goal: at most 1.10 on the CNN and ResNet-8 with the
// order auto takes), and the peak of the same buffers recycled by the pool
// by size class. Then one step's measured peak (the pool's window: the arena
// or the recycled blocks, plus outputs, states' new values and the
// temporaries that found no room in the arena) with the arena, with the
// pool, and eagerly. Then the recompute pass (ir/passes/recompute.cpp) on
// ResNet-8 and on ResNet-50's training step (bench/models/resnet50.nn,
// 3x224x224, batch 32 and 64, traced and planned on the CPU, never run: the
// arena bench_gpu's graph rows take on a GPU), each with the pass and
// without. Last, the time make_plan takes on synthetic graphs of 1,000,
// 4,000 and 16,000 nodes.
//
//   bench_memory_plan [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backend/device.h"
#include "backend/op_registry.h"
#include "frontend/interpreter.h"
#include "ir/pass.h"
#include "ir/plan.h"

namespace {

using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;
using nn::frontend::Value;
using Clock = std::chrono::steady_clock;

double mb(size_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

struct Model {
  const char* script;
  const char* title;
  bool goal;  // the 1.10 goal applies
};
const Model kModels[] = {
    {"digits_mlp.nn", "digits MLP 64-128-10, batch 64", false},
    {"digits_cnn.nn", "digits CNN, 1x8x8, batch 64", true},
    {"resnet8.nn", "ResNet-8, 3x32x32, batch 32", true},
};

// An interpreter with the model loaded; its train_step compiled by one step.
struct Loaded {
  std::unique_ptr<Interpreter> vm;
  Value step, xs, ys;
  std::string error;
};

// With `plan_only`, the step stops once compiled (nothing runs).
Loaded load(const std::string& script, int threads, bool eager, nn::ir::MemoryMode memory,
            std::set<std::string> disabled = {}, std::vector<std::string> args = {}, bool plan_only = false) {
  Loaded l;
  InterpreterOptions o;
  o.threads = threads;
  o.eager_graphs = eager;
  o.memory = memory;
  o.disabled_passes = std::move(disabled);
  o.args = std::move(args);
  if (plan_only) o.on_compiled = [](const nn::ir::CompiledGraph&) { throw nn::frontend::ExitRequest{0}; };
  l.vm = std::make_unique<Interpreter>(o);
  try {
    l.vm->run_file(script);
    l.step = *l.vm->find_global("train_step");
    l.xs = *l.vm->find_global("xs");
    l.ys = *l.vm->find_global("ys");
    l.vm->call(l.step, {l.xs.as_list()->items[0], l.ys.as_list()->items[0]});
  } catch (const nn::frontend::ExitRequest&) {
  } catch (const nn::frontend::ScriptError& e) {
    l.error = l.vm->render(e);
  } catch (const std::exception& e) {
    l.error = e.what();
  }
  return l;
}

// The largest peak of a few steps after the first: bytes the pool handed
// out at the step's peak over what was in use before it.
size_t measured_peak(Loaded& l) {
  nn::backend::CachingPool& pool = nn::backend::cpu_device()->pool();
  size_t worst = 0;
  for (size_t i = 1; i <= 3; ++i) {
    const auto& xs = l.xs.as_list()->items;
    const auto& ys = l.ys.as_list()->items;
    size_t before = pool.stats().current, enclosing = pool.begin_window();
    l.vm->call(l.step, {xs[i % xs.size()], ys[i % ys.size()]});
    worst = std::max(worst, pool.stats().window_peak - before);
    pool.end_window(enclosing);
  }
  return worst;
}

const nn::frontend::CompiledGraph* train_step(const Interpreter& vm) {
  for (const auto& c : vm.graphs())
    if (c->name == "train_step" && c->latest()) return c->latest();
  return nullptr;
}

// A graph shaped like a training step, with n nodes: a forward chain of
// elementwise ops and matmuls whose values the backward half reads again in
// reverse, each backward value also read by an update of a param.
nn::ir::Graph synthetic(size_t n) {
  using nn::backend::Shape;
  nn::ir::Graph g;
  const nn::backend::TensorType t{nn::backend::DType::f32, Shape({64, 64}), nn::backend::cpu_device()};
  auto node = [&](const char* op, std::vector<nn::ir::ValueId> in) {
    const nn::backend::OpDef& d = nn::backend::op(op);
    std::vector<nn::backend::TensorType> types;
    for (auto v : in) types.push_back(g.values[v].type);
    nn::ir::NodeId id = g.add_node(&d, in, {}, d.type_rule(types, {}));
    return g.nodes[id].outputs[0];
  };
  nn::ir::ValueId x = g.add_value(t, nn::ir::Role::input, "x");
  g.inputs.push_back(x);
  const size_t layers = n / 4;
  std::vector<nn::ir::ValueId> fwd, params;
  nn::ir::ValueId v = x;
  for (size_t i = 0; i < layers; ++i) {
    nn::ir::ValueId w = g.add_value(t, nn::ir::Role::param);
    g.values[w].captured = nn::backend::Tensor::empty(t);
    params.push_back(w);
    v = node(i % 2 ? "matmul" : "mul", {v, w});
    fwd.push_back(v);
  }
  nn::ir::ValueId grad = v;
  for (size_t i = layers; i-- > 0;) {
    grad = node("mul", {grad, fwd[i]});
    nn::ir::ValueId upd = node("sub", {params[i], node("mul", {grad, params[i]})});
    g.updates.push_back({params[i], upd});
  }
  g.outputs.push_back(grad);
  g.values[grad].output = true;
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: bench_memory_plan [--threads N]\n");
      return 2;
    }
  }
  std::printf("bench_memory_plan: static memory plans of training steps (%d threads)\n", threads);
  std::printf("goal: arena <= 1.10 x the liveness lower bound on the CNN and ResNet-8 (order taken by auto)\n");
  int goals_met = 0, goals = 0, failed = 0;
  for (const Model& m : kModels) {
    const std::string script = std::string(NN_BENCH_DIR) + "/models/" + m.script;
    std::printf("\n== %s (bench/models/%s)\n", m.title, m.script);
    Loaded arena = load(script, threads, false, nn::ir::MemoryMode::arena);
    const nn::frontend::CompiledGraph* cg = arena.error.empty() ? train_step(*arena.vm) : nullptr;
    if (!cg) {
      std::printf("   FAILED: %s\n", arena.error.empty() ? "no compiled train_step" : arena.error.c_str());
      ++failed;
      continue;
    }
    const nn::ir::Graph& g = cg->graph;
    std::printf("   %zu nodes, %zu values\n", g.nodes.size(), g.values.size());
    std::printf("   %-16s %10s %12s %7s %15s %11s\n", "order", "arena MB", "lower bd MB", "ratio", "pool recycl. MB",
                "plan ms");
    for (nn::ir::Schedule s : {nn::ir::Schedule::serial, nn::ir::Schedule::greedy, nn::ir::Schedule::frees_first,
                               nn::ir::Schedule::bfs, nn::ir::Schedule::automatic}) {
      auto t0 = Clock::now();
      nn::ir::Plan p = nn::ir::make_plan(g, s);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      const double ratio = p.lower_bound_bytes ? double(p.planned_bytes) / double(p.lower_bound_bytes) : 1.0;
      std::string name = nn::ir::schedule_name(s);
      if (s == nn::ir::Schedule::automatic) name += std::string(" -> ") + nn::ir::schedule_name(p.kind);
      std::printf("   %-16s %10.3f %12.3f %7.3f %15.3f %11.2f\n", name.c_str(), mb(p.planned_bytes),
                  mb(p.lower_bound_bytes), ratio, mb(p.pool_bytes), ms);
      if (s == nn::ir::Schedule::automatic && m.goal) {
        ++goals;
        goals_met += ratio <= 1.10;
      }
    }
    Loaded pool = load(script, threads, false, nn::ir::MemoryMode::pool);
    Loaded eager = load(script, threads, true, nn::ir::MemoryMode::arena);
    if (!pool.error.empty() || !eager.error.empty()) {
      std::printf("   FAILED: %s%s\n", pool.error.c_str(), eager.error.c_str());
      ++failed;
      continue;
    }
    const size_t pa = measured_peak(arena), pp = measured_peak(pool), pe = measured_peak(eager);
    std::printf("   measured peak of a step: arena %.3f MB, pool %.3f MB, eager %.3f MB (graph with arena %.1f%% below eager)\n",
                mb(pa), mb(pp), mb(pe), 100.0 * (1.0 - double(pa) / double(std::max<size_t>(1, pe))));
  }

  std::printf("\n== recompute: activations made again in the backward rather than kept (auto order)\n");
  std::printf("   %-34s %14s %14s %10s %8s\n", "training step", "arena MB", "without MB", "change", "nodes");
  struct Case {
    const char* script;
    const char* title;
    std::vector<std::string> args;
  };
  for (const Case& c : {Case{"resnet8.nn", "ResNet-8, 3x32x32, b32", {}},
                        Case{"resnet50.nn", "ResNet-50, 3x224x224, b32 (planned)", {"32"}},
                        Case{"resnet50.nn", "ResNet-50, 3x224x224, b64 (planned)", {"64"}}}) {
    const std::string script = std::string(NN_BENCH_DIR) + "/models/" + c.script;
    Loaded with = load(script, threads, false, nn::ir::MemoryMode::arena, {}, c.args, true);
    Loaded without = load(script, threads, false, nn::ir::MemoryMode::arena, {"recompute"}, c.args, true);
    const nn::frontend::CompiledGraph* a = with.error.empty() ? train_step(*with.vm) : nullptr;
    const nn::frontend::CompiledGraph* b = without.error.empty() ? train_step(*without.vm) : nullptr;
    if (!a || !b) {
      std::printf("   %-34s FAILED: %s%s\n", c.title, with.error.c_str(), without.error.c_str());
      ++failed;
      continue;
    }
    std::printf("   %-34s %14.1f %14.1f %9.1f%% %3zu/%zu\n", c.title, mb(a->plan.planned_bytes),
                mb(b->plan.planned_bytes),
                100.0 * (double(a->plan.planned_bytes) / double(std::max<size_t>(1, b->plan.planned_bytes)) - 1.0),
                a->graph.nodes.size(), b->graph.nodes.size());
  }

  std::printf("\n== make_plan time on synthetic training-like graphs, median of 5 (auto: three orders, the\n"
              "   promising ones placed; serial: one order placed)\n");
  std::printf("   %8s %12s %12s %16s\n", "nodes", "auto ms", "serial ms", "nodes in place");
  for (size_t n : {1000, 4000, 16000}) {
    nn::ir::Graph g = synthetic(n);
    for (auto& pass : nn::ir::default_passes())
      if (std::string(pass->name()) == "inplace") pass->run(g);
    std::vector<double> ta, ts;
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = Clock::now();
      nn::ir::Plan a = nn::ir::make_plan(g);
      ta.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      t0 = Clock::now();
      nn::ir::Plan s = nn::ir::make_plan(g, nn::ir::Schedule::serial);
      ts.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ta.begin(), ta.end());
    std::sort(ts.begin(), ts.end());
    size_t inplace = 0;
    for (const auto& node : g.nodes) inplace += !node.overwrites().empty();
    std::printf("   %8zu %12.2f %12.2f %16zu\n", g.nodes.size(), ta[2], ts[2], inplace);
  }

  std::printf("\n== goal\n   arena <= 1.10 x lower bound: met by %d of %d models: %s\n", goals_met, goals,
              goals_met == goals && goals ? "MET" : "NOT MET");
  if (failed) std::printf("   %d model(s) FAILED: see above\n", failed);
  return failed ? 1 : 0;
}
