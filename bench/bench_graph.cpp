// Graph mode against eager mode on CPU: SINGA's benchmark table (memory and
// speed of a training step run eagerly, as a graph with the serial schedule
// and as a graph with the BFS schedule), plus the graph as compiled by
// default (`auto`: the order whose memory plan is smallest), each graph in
// its arena (ir/plan.h), for three models under bench/models/:
//   digits_mlp.nn  the MLP of examples/digits_mlp.nn, 64-128-10, batch 64
//   digits_cnn.nn  the CNN of examples/digits_cnn.nn, 1x8x8, batch 64
//   resnet8.nn     a ResNet-8 on 3x32x32, batch 32, 10 classes, random data
// Each script defines `graph train_step(xb, yb)` (forward, minimize, returns
// the loss) and its batches `xs`, `ys`. One interpreter per mode loads the
// script (same seed, hence the same initial weights); the modes run their
// steps interleaved (rotating which goes first) so that a change in the
// machine's load hits all rows alike, and the losses of the same step can be
// compared: eager's and the graphs' must agree.
//
// Per row: peak memory of one step (the device pool's window: begin_window
// before the step, window_peak minus the bytes in use before it, so for a
// graph its arena, its outputs and any temporaries the arena had no room
// for; the largest of a few steps after warm-up), the median time per step, samples/s, memory
// reduction and speedup against eager. PyTorch's eager step for the same
// model (bench/torch_graph.py, Debian's python3-torch, same thread count) is
// timed in the same run: a torch_graph.py --serve process (TorchPeer,
// common/torch_peer.h) runs blocks of PyTorch steps between nn's rounds
// (while nn waits), so that both see the same load on a shared machine; its
// column is skipped with a note when torch is missing.
//
// Per model, also its floor (common/floor.h): the step's products and
// convolutions, counted from the compiled graph, at the rate cblas_sgemm
// reaches in this run (measured between the blocks of rounds, while nn and
// PyTorch both wait); the CNNs' goal is a graph step of at most 1.3x that
// floor and 0.5x PyTorch's step.
//
// Then the replay overhead per node on bench/models/tiny_chain.nn (2,000 x
// `x = x * 1.0001 + 0.0001` on f32[4] in a graph function: 4,000 nodes of
// almost no work), see replay_overhead().
//
// Usage: bench_graph [--threads N] [--steps N] [--resnet-steps N]
//                    [--warmup N] [--no-torch] [--no-pass NAME]...
// (--no-pass: the graphs compiled without that pass, as nn's own option, to
// measure what one pass is worth.)
// Defaults (2 threads, 500 steps for the digits models, 40 ResNet steps, 5
// warm-up steps) take well under a minute on an idle 2-core machine, about
// two on a busy one; raise --steps / --resnet-steps for steadier medians.
// The table's last column is each row's fastest step: on a busy machine the
// least disturbed figure.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/floor.h"
#include "common/median.h"
#include "backend/device.h"
#include "backend/op_registry.h"
#include "common/torch_peer.h"
#include "frontend/interpreter.h"
#include "ir/executor.h"

namespace {

using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;
using nn::frontend::Value;
using nn::bench::TorchPeer;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

using nn::bench::median;

struct Config {
  int threads = 2;
  int steps = 500;
  int resnet_steps = 40;
  int warmup = 5;
  bool torch = true;
  std::set<std::string> disabled_passes;  // --no-pass NAME: the graphs without that pass
};

// ---------------------------------------------------------------- modes

struct Mode {
  const char* name;
  bool eager;
  nn::ir::Schedule schedule;
};
const Mode kModes[] = {
    {"eager", true, nn::ir::Schedule::serial},
    {"graph serial", false, nn::ir::Schedule::serial},
    {"graph BFS", false, nn::ir::Schedule::bfs},
    {"graph auto", false, nn::ir::Schedule::automatic},
};
constexpr int kNumModes = 4;

// One mode's interpreter with the model loaded, and what it measured.
struct Runner {
  const Mode* mode = nullptr;
  std::unique_ptr<Interpreter> vm;
  Value step_fn;
  std::vector<Value> xs, ys;
  int64_t batch = 0;
  std::string error;                 // non-empty: this mode failed
  std::vector<double> losses;        // every step's loss, in order
  std::vector<double> step_ms;       // the timed steps
  size_t peak_bytes = 0;             // the largest window peak of the measured steps
  size_t graph_nodes = 0, planned_bytes = 0, lower_bound_bytes = 0;
  const char* order = "";
  double compile_ms = 0;
  double flops = 0;  // of the step's products and convolutions (common/floor.h)
  std::vector<nn::backend::Tensor> final_state;  // model and optimizer tensors after the last step

  bool ok() const { return error.empty(); }
};

std::string describe(Interpreter& vm, const std::exception& e) {
  if (auto* se = dynamic_cast<const nn::frontend::ScriptError*>(&e)) return vm.render(*se);
  return std::string("C++ exception: ") + e.what() + "\n";
}

void load(Runner& r, const std::string& script, const Config& cfg) {
  InterpreterOptions opts;
  opts.threads = cfg.threads;
  opts.eager_graphs = r.mode->eager;
  opts.schedule = r.mode->schedule;
  opts.disabled_passes = cfg.disabled_passes;
  r.vm = std::make_unique<Interpreter>(opts);
  try {
    r.vm->run_file(script);
    Value* f = r.vm->find_global("train_step");
    Value* xs = r.vm->find_global("xs");
    Value* ys = r.vm->find_global("ys");
    if (!f || !xs || !ys || !xs->is_list() || !ys->is_list() || xs->as_list()->items.empty()) {
      r.error = script + " must define train_step, and xs, ys as non-empty lists of batches\n";
      return;
    }
    r.step_fn = *f;
    r.xs = xs->as_list()->items;
    r.ys = ys->as_list()->items;
    r.batch = r.xs[0].as_tensor().shape()[0];
  } catch (const std::exception& e) {
    r.error = describe(*r.vm, e);
  }
}

// One training step on batch i; returns its time in ms. With `peak`, also
// measures the step's memory peak over what was in use before it.
double run_step(Runner& r, size_t i, size_t* peak) {
  nn::backend::CachingPool& pool = nn::backend::cpu_device()->pool();
  const Value& x = r.xs[i % r.xs.size()];
  const Value& y = r.ys[i % r.ys.size()];
  size_t before = 0, enclosing = 0;
  if (peak) {
    before = pool.stats().current;
    enclosing = pool.begin_window();
  }
  double ms = 0;
  try {
    auto t0 = Clock::now();
    Value loss = r.vm->call(r.step_fn, {x, y});
    ms = ms_since(t0);
    if (peak) *peak = pool.stats().window_peak - before;
    if (!loss.is_tensor()) throw std::runtime_error("train_step returned no tensor");
    r.losses.push_back(loss.as_tensor().item_double());
  } catch (const std::exception& e) {
    r.error = describe(*r.vm, e);
  }
  if (peak) pool.end_window(enclosing);
  return ms;
}

// Every tensor in a value (records, lists, tuples), depth first, in order.
void collect(const Value& v, std::vector<nn::backend::Tensor>& out) {
  if (v.is_tensor()) out.push_back(v.as_tensor());
  else if (v.is_list()) for (const Value& x : v.as_list()->items) collect(x, out);
  else if (v.is_tuple()) for (const Value& x : v.as_tuple()->items) collect(x, out);
  else if (v.is_record()) for (const auto& [k, x] : v.as_record()->fields) collect(x, out);
}

// The model's params and buffers (BN running statistics) and the
// optimizer's state, after the last step.
void keep_final_state(Runner& r) {
  if (!r.ok()) return;
  for (const char* name : {"model", "opt"})
    if (Value* v = r.vm->find_global(name)) collect(*v, r.final_state);
}

// Largest |a - b| over two lists of tensors of the same types (f32, f64;
// other dtypes must be equal); -1 when the lists do not match in shape.
double max_abs_diff(const std::vector<nn::backend::Tensor>& a, const std::vector<nn::backend::Tensor>& b) {
  using nn::backend::DType;
  if (a.size() != b.size()) return -1;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype() != b[i].dtype() || a[i].shape() != b[i].shape()) return -1;
    const int64_t n = a[i].numel();
    if (a[i].dtype() == DType::f32) {
      for (int64_t j = 0; j < n; ++j)
        worst = std::max(worst, double(std::fabs(a[i].data<float>()[j] - b[i].data<float>()[j])));
    } else if (a[i].dtype() == DType::f64) {
      for (int64_t j = 0; j < n; ++j) worst = std::max(worst, std::fabs(a[i].data<double>()[j] - b[i].data<double>()[j]));
    } else if (std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()) != 0) {
      worst = std::max(worst, 1.0);
    }
  }
  return worst;
}

// The compiled train_step of a graph mode: node count, arena and its lower
// bound, the order taken.
void graph_info(Runner& r) {
  if (r.mode->eager || !r.ok()) return;
  for (const auto& c : r.vm->graphs())
    if (c->name == "train_step" && c->latest()) {
      const auto* cg = c->latest();
      r.graph_nodes = cg->graph.nodes.size();
      r.planned_bytes = cg->plan.planned_bytes;
      r.lower_bound_bytes = cg->plan.lower_bound_bytes;
      r.order = nn::ir::schedule_name(cg->plan.kind);
      r.compile_ms = cg->trace_ms + cg->compile_ms;
      r.flops = nn::bench::product_flops(cg->graph);
    }
}

// ---------------------------------------------------------------- models

struct Model {
  const char* title;
  const char* script;     // under bench/models/
  const char* torch_name;  // the model's name in torch_graph.py
  bool resnet;
  bool cnn;  // judged against the CNN goals: graph at most 1.3x its floor and 0.5x PyTorch
};
const Model kModels[] = {
    {"digits MLP 64-128-10, batch 64, SGD momentum 0.9", "digits_mlp.nn", "mlp", false, false},
    {"digits CNN (examples/digits_cnn.nn), 1x8x8, batch 64, Adam", "digits_cnn.nn", "cnn", false, true},
    {"ResNet-8, 3x32x32, batch 32, 10 classes, SGD momentum 0.9", "resnet8.nn", "resnet8", true, true},
};

struct ModelResult {
  Runner runs[kNumModes];
  int steps = 0;
  std::vector<double> torch_ms;  // PyTorch's timed steps
  std::string torch_why;         // why there are none
  std::vector<double> sgemm;     // cblas_sgemm's GFLOP/s, measured between the blocks of rounds
};

constexpr int kLossSteps = 3;  // steps whose losses are printed
constexpr int kMemSteps = 3;   // steps whose memory peak is measured
// Timed rounds of nn between two blocks of PyTorch steps (small models,
// ResNet), and the pause before and after each block: the worker threads of
// one process spin a while after their work (OpenMP, the BLAS), which would
// slow the other one.
constexpr int kTorchBlock = 100, kTorchBlockResNet = 10;
constexpr int kSettleMs = 300;

void bench_model(const Model& m, const Config& cfg, TorchPeer& torch, ModelResult& res) {
  const std::string script = std::string(NN_BENCH_DIR) + "/models/" + m.script;
  res.steps = m.resnet ? cfg.resnet_steps : cfg.steps;
  for (int k = 0; k < kNumModes; ++k) {
    res.runs[k].mode = &kModes[k];
    load(res.runs[k], script, cfg);
  }
  // Steps 0 .. kLossSteps-1 (the graphs trace on step 0), then warm-up,
  // then the memory steps, then the timed steps; each round runs every mode
  // once, starting with a different one each round. After every
  // kTorchBlock timed rounds, PyTorch runs as many steps (the first block
  // also builds and warms up its model, untimed).
  const int first = kLossSteps + cfg.warmup;
  const int total = first + kMemSteps + res.steps;
  int torch_due = 0;
  const int block = m.resnet ? kTorchBlockResNet : kTorchBlock;
  // Between blocks: the sgemm rate of the floor, then PyTorch's block.
  auto run_torch = [&] {
    if (torch_due == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(kSettleMs));
    res.sgemm.push_back(nn::bench::sgemm_gflops(cfg.threads));
    if (torch.on()) {
      std::vector<double> t = torch.run(m.torch_name, torch_due);
      res.torch_ms.insert(res.torch_ms.end(), t.begin(), t.end());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kSettleMs));
    torch_due = 0;
  };
  for (int i = 0; i < total; ++i) {
    if (i >= first + kMemSteps && ++torch_due == block) run_torch();
    for (int j = 0; j < kNumModes; ++j) {
      Runner& r = res.runs[(i + j) % kNumModes];
      if (!r.ok()) continue;
      if (i >= first && i < first + kMemSteps) {
        size_t peak = 0;
        run_step(r, size_t(i), &peak);
        r.peak_bytes = std::max(r.peak_bytes, peak);
      } else {
        double ms = run_step(r, size_t(i), nullptr);
        if (i >= first + kMemSteps) r.step_ms.push_back(ms);
      }
    }
  }
  run_torch();
  if (!torch.on()) res.torch_ms.clear(), res.torch_why = torch.why();
  for (auto& r : res.runs) graph_info(r), keep_final_state(r);
}

// ---------------------------------------------------------------- report

double mb(size_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

struct Goals {
  int mem_pass = 0, mem_total = 0, speed_pass = 0, speed_near = 0, speed_total = 0;
  int cnn_pass = 0, cnn_total = 0;  // graph auto at most 1.3x its floor and 0.5x PyTorch
};

void report_model(const Model& m, const ModelResult& res, const Config& cfg, Goals& goals) {
  const Runner& eager = res.runs[0];
  std::printf("\n== %s (bench/models/%s)\n", m.title, m.script);
  std::printf("   %d threads; %d loss-check + %d warm-up steps, memory = max over %d steps, time = median of %d steps\n",
              cfg.threads, kLossSteps, cfg.warmup, kMemSteps, res.steps);
  for (const Runner& r : res.runs)
    if (!r.ok()) std::printf("   %s FAILED:\n%s", r.mode->name, r.error.c_str());

  // Losses: the first steps of each mode, and the largest relative
  // difference to eager over all the steps both ran.
  std::printf("   losses of steps 0..%d:", kLossSteps - 1);
  for (const Runner& r : res.runs) {
    std::printf("  %s", r.mode->name);
    for (int i = 0; i < kLossSteps; ++i)
      if (size_t(i) < r.losses.size()) std::printf(" %.6f", r.losses[size_t(i)]);
      else std::printf(" -");
  }
  std::printf("\n");
  // A graph that rounds otherwise (blocked layouts add in another order)
  // agrees on the first steps, then drifts as training compounds the
  // rounding: ResNet-8 overfitting its four batches drifts alike between
  // eager mode on 1 and on 2 threads (about 1% by step 40). Only the first
  // steps judge the graph.
  bool first_agree[kNumModes] = {};
  for (int k = 1; k < kNumModes; ++k) {
    const Runner& r = res.runs[k];
    size_t n = std::min(r.losses.size(), eager.losses.size());
    if (n == 0) continue;
    double first = 0, all = 0;
    size_t worst = 0;
    for (size_t i = 0; i < n; ++i) {
      double d = std::fabs(r.losses[i] - eager.losses[i]) / std::max(1e-6, std::fabs(eager.losses[i]));
      if (i < size_t(kLossSteps)) first = std::max(first, d);
      if (d > all) all = d, worst = i;
    }
    first_agree[k] = first <= 1e-3;
    std::printf("   %-12s vs eager: max rel. loss diff %.2e on steps 0..%d, %.2e over all %zu steps (worst: step %zu) %s\n",
                r.mode->name, first, kLossSteps - 1, all, n, worst,
                !first_agree[k] ? "[MISMATCH]" : all <= 1e-2 ? "[agree]" : "[agree, then rounding drifts]");
  }
  for (int k = 1; k < kNumModes; ++k) {
    const Runner& r = res.runs[k];
    if (!r.ok() || !eager.ok()) continue;
    const double d = max_abs_diff(r.final_state, eager.final_state);
    if (d < 0)
      std::printf("   %-12s vs eager: final model/optimizer state differs in structure (%zu vs %zu tensors) [MISMATCH]\n",
                  r.mode->name, r.final_state.size(), eager.final_state.size());
    else
      std::printf("   %-12s vs eager: final params, buffers and optimizer state (%zu tensors): max abs diff %.2e %s\n",
                  r.mode->name, r.final_state.size(), d,
                  d <= 1e-3 ? "[agree]" : first_agree[k] ? "[rounding drift]" : "[MISMATCH]");
  }

  const double torch_med = median(res.torch_ms);
  const double* torch_ms = res.torch_ms.empty() ? nullptr : &torch_med;
  std::printf("   %-13s %10s %10s %11s %9s %8s %11s %9s\n", "mode", "peak MB", "ms/step", "samples/s", "mem red.",
              "speedup", "PyTorch ms", "(min ms)");
  const double eager_ms = median(eager.step_ms);
  for (const Runner& r : res.runs) {
    if (r.step_ms.empty()) {
      std::printf("   %-13s %10s %10s %11s %9s %8s %11s %9s\n", r.mode->name, "failed", "-", "-", "-", "-", "-", "-");
      continue;
    }
    const double ms = median(r.step_ms);
    char red[32] = "-", sp[32] = "-", pt[32] = "-";
    if (eager.ok() && &r != &eager && eager.peak_bytes > 0) {
      std::snprintf(red, sizeof red, "%.1f%%", 100.0 * (1.0 - double(r.peak_bytes) / double(eager.peak_bytes)));
      std::snprintf(sp, sizeof sp, "%.2fx", eager_ms / ms);
    } else if (&r == &eager) {
      std::snprintf(red, sizeof red, "0.0%%");
      std::snprintf(sp, sizeof sp, "1.00x");
    }
    if (torch_ms && &r == &eager) std::snprintf(pt, sizeof pt, "%.3f", *torch_ms);
    std::printf("   %-13s %10.3f %10.3f %11.0f %9s %8s %11s %9.3f\n", r.mode->name, mb(r.peak_bytes), ms,
                double(r.xs.empty() ? 0 : r.batch) / (ms / 1000.0), red, sp, pt,
                *std::min_element(r.step_ms.begin(), r.step_ms.end()));
  }
  if (!torch_ms) std::printf("   (PyTorch column skipped: %s)\n", res.torch_why.c_str());
  else
    std::printf("   PyTorch: eager, median of %zu steps (min %.3f ms), run in blocks of %d between nn's rounds\n",
                res.torch_ms.size(), *std::min_element(res.torch_ms.begin(), res.torch_ms.end()),
                m.resnet ? kTorchBlockResNet : kTorchBlock);
  for (const Runner& r : res.runs)
    if (r.graph_nodes)
      std::printf("   %s: %zu nodes, %s order, arena %.3f MB (lower bound %.3f MB), trace + plan %.1f ms\n",
                  r.mode->name, r.graph_nodes, r.order, mb(r.planned_bytes), mb(r.lower_bound_bytes), r.compile_ms);

  // The floor: the step's products and convolutions at the sgemm rate of
  // this run; graph auto against it and against PyTorch's step.
  const Runner& best = res.runs[kNumModes - 1];
  if (best.flops > 0 && !res.sgemm.empty() && !best.step_ms.empty()) {
    const double rate = median(res.sgemm), floor_ms = best.flops / (rate * 1e9) * 1e3, ms = median(best.step_ms);
    std::printf("   floor: %.1f MFLOP a step (products and convolutions) at cblas_sgemm's %.0f GFLOP/s (1024^2, %d "
                "threads, median of %zu this run) = %.3f ms; %s %.2fx the floor",
                best.flops * 1e-6, rate, cfg.threads, res.sgemm.size(), floor_ms, best.mode->name, ms / floor_ms);
    if (torch_ms) std::printf(", %.2fx PyTorch's step", ms / *torch_ms);
    std::printf("\n");
    if (m.cnn && torch_ms) {
      ++goals.cnn_total;
      goals.cnn_pass += ms <= 1.3 * floor_ms && ms <= 0.5 * *torch_ms;
    }
  }

  // Summary line.
  std::printf("SUMMARY %-10s", m.script);
  std::printf(" eager %.3f ms %.3f MB", eager_ms, mb(eager.peak_bytes));
  for (int k = 1; k < kNumModes; ++k) {
    const Runner& r = res.runs[k];
    if (!r.ok() || !eager.ok()) {
      std::printf(" | %s FAILED", r.mode->name);
      continue;
    }
    const double red = 100.0 * (1.0 - double(r.peak_bytes) / double(std::max<size_t>(1, eager.peak_bytes)));
    const double speed = eager_ms / median(r.step_ms);
    std::printf(" | %s %.3f ms (%.2fx) %.3f MB (-%.1f%%)", r.mode->name, median(r.step_ms), speed, mb(r.peak_bytes),
                red);
    ++goals.mem_total;
    ++goals.speed_total;
    goals.mem_pass += red >= 50.0;
    goals.speed_pass += speed >= 1.0;
    goals.speed_near += speed >= 0.97;
  }
  if (torch_ms) std::printf(" | PyTorch %.3f ms (nn eager/PyTorch %.2fx)", *torch_ms, eager_ms / *torch_ms);
  std::printf("\n");
}

// ---------------------------------------------------------------- replay overhead

// Replay overhead per node on bench/models/tiny_chain.nn:
//   (time of one graph call - the sum of its kernels' time) / node count.
// The graph call is `chain(x0)` through Interpreter::call (signature lookup,
// ir::run with its slot bookkeeping, allocation from the pool, recycling,
// rebuilding the result). The kernels' time is measured by calling the very
// kernels of the compiled graph (OpDef::cpu, in plan order, with the node's
// attributes) on tensors allocated once beforehand, in a tight loop: pure
// kernel work, with no dispatch, no allocation and no profiler (the
// Profiler's per-node events would include the executor's own per-node work
// and the cost of recording). Also printed: ir::run alone (without the
// interpreter's call layer) and the same chain run eagerly, per node. The
// fusion passes are off for this graph: they would make the chain one node.
struct Prepared {
  nn::backend::Kernel kernel;
  std::vector<nn::backend::Tensor> in, out;
  const nn::backend::Attrs* attrs;
};

int replay_overhead(const Config& cfg, double& overhead_us) {
  const std::string script = std::string(NN_BENCH_DIR) + "/models/tiny_chain.nn";
  InterpreterOptions opts;
  opts.threads = cfg.threads;
  // Fusion would make the whole chain one node: the overhead per node is
  // measured on the chain as traced, a node per op.
  opts.disabled_passes = {"fuse-elementwise", "fuse-matmul-epilogue"};
  Interpreter vm(opts);
  InterpreterOptions eager_opts = opts;
  eager_opts.eager_graphs = true;
  Interpreter evm(eager_opts);
  Value chain, x0, echain, ex0;
  try {
    vm.run_file(script);
    chain = *vm.find_global("chain");
    x0 = *vm.find_global("x0");
    vm.call(chain, {x0});  // trace
  } catch (const std::exception& e) {
    std::printf("replay overhead: FAILED\n%s", describe(vm, e).c_str());
    return 1;
  }
  try {
    evm.run_file(script);
    echain = *evm.find_global("chain");
    ex0 = *evm.find_global("x0");
  } catch (const std::exception& e) {
    std::printf("replay overhead: eager run FAILED\n%s", describe(evm, e).c_str());
    return 1;
  }
  const nn::frontend::CompiledGraph* cg = nullptr;
  for (const auto& c : vm.graphs())
    if (c->name == "chain") cg = c->latest();
  if (!cg) {
    std::printf("replay overhead: graph chain not found after its first call\n");
    return 1;
  }
  const nn::ir::Graph& g = cg->graph;
  const nn::ir::Plan& plan = cg->plan;

  // The kernels, with inputs and outputs allocated once.
  std::vector<nn::backend::Tensor> slots(g.values.size());
  const nn::backend::Tensor x0t = x0.as_tensor();
  for (nn::ir::ValueId v = 0; v < g.values.size(); ++v) {
    const auto& val = g.values[v];
    if (val.role == nn::ir::Role::input) slots[v] = x0t;
    else if (val.role != nn::ir::Role::intermediate) slots[v] = val.captured;
  }
  std::vector<Prepared> calls;
  size_t views = 0, hosts = 0;
  for (nn::ir::NodeId id : plan.order) {
    const nn::ir::Node& n = g.nodes[id];
    std::vector<nn::backend::Tensor> in;
    for (auto v : n.inputs) in.push_back(slots[v]);
    if (!n.op) {
      ++hosts;
      continue;
    }
    if (n.op->view) {
      ++views;
      slots[n.outputs[0]] = in[0].view(g.values[n.outputs[0]].type.shape);
      continue;
    }
    std::vector<nn::backend::Tensor> out;
    for (auto v : n.outputs) out.push_back(nn::backend::Tensor::empty(g.values[v].type));
    for (size_t i = 0; i < out.size(); ++i) slots[n.outputs[i]] = out[i];
    calls.push_back({n.op->cpu, std::move(in), std::move(out), &n.attrs});
  }
  const size_t nodes = g.nodes.size();
  std::vector<nn::backend::Tensor> args{x0t};

  // Interleaved repetitions of the four measurements; medians.
  const int reps = std::max(50, cfg.steps);
  for (int i = 0; i < 5; ++i) vm.call(chain, {x0}), nn::ir::run(g, plan, args), evm.call(echain, {ex0});
  std::vector<double> t_call, t_run, t_kern, t_eager;
  for (int rep = 0; rep < reps; ++rep) {
    auto t0 = Clock::now();
    vm.call(chain, {x0});
    t_call.push_back(ms_since(t0));
    t0 = Clock::now();
    nn::ir::run(g, plan, args);
    t_run.push_back(ms_since(t0));
    t0 = Clock::now();
    for (Prepared& p : calls) p.kernel(p.in, p.out, *p.attrs);
    t_kern.push_back(ms_since(t0));
    if (rep % 5 == 0) {
      t0 = Clock::now();
      evm.call(echain, {ex0});
      t_eager.push_back(ms_since(t0));
    }
  }
  const double call_us = median(t_call) * 1e3, run_us = median(t_run) * 1e3, kern_us = median(t_kern) * 1e3,
               eager_us = median(t_eager) * 1e3;
  overhead_us = (call_us - kern_us) / double(nodes);
  std::printf("\n== replay overhead per node (bench/models/tiny_chain.nn: 2,000 x `x = x * 1.0001 + 0.0001`, f32[4])\n");
  std::printf("   graph chain: %zu nodes (%zu kernels, %zu views, %zu host calls); medians of %d runs\n", nodes,
              calls.size(), views, hosts, reps);
  std::printf("   graph call  (Interpreter::call -> ir::run)  %10.1f us  %7.3f us/node\n", call_us,
              call_us / double(nodes));
  std::printf("   ir::run alone                              %10.1f us  %7.3f us/node\n", run_us,
              run_us / double(nodes));
  std::printf("   kernels alone (same kernels, preallocated) %10.1f us  %7.3f us/node\n", kern_us,
              kern_us / double(nodes));
  std::printf("   eager (eager_graphs=true, same chain)      %10.1f us  %7.3f us/node\n", eager_us,
              eager_us / double(nodes));
  std::printf("   replay overhead = (graph call - kernels) / nodes = %.3f us/node", overhead_us);
  std::printf("  (ir::run alone: %.3f us/node)\n", (run_us - kern_us) / double(nodes));
  return 0;
}

int parse_int(const char* s, const char* what) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!s[0] || *end || v < 1) {
    std::fprintf(stderr, "bench_graph: %s wants a positive integer, got '%s'\n", what, s);
    std::exit(2);
  }
  return int(v);
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](const char* what) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_graph: %s wants a value\n", what);
        std::exit(2);
      }
      return parse_int(argv[++i], what);
    };
    if (a == "--threads") cfg.threads = next("--threads");
    else if (a == "--steps") cfg.steps = next("--steps");
    else if (a == "--resnet-steps") cfg.resnet_steps = next("--resnet-steps");
    else if (a == "--warmup") cfg.warmup = next("--warmup");
    else if (a == "--no-torch") cfg.torch = false;
    else if (a == "--no-pass" && i + 1 < argc) cfg.disabled_passes.insert(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: bench_graph [--threads N] [--steps N] [--resnet-steps N] [--warmup N] [--no-torch] "
                   "[--no-pass NAME]...\n");
      return 2;
    }
  }
  auto t_start = Clock::now();
  std::printf("bench_graph: eager vs graph mode (serial, BFS) training steps on CPU, %d threads\n", cfg.threads);
  std::printf("goals: graph peak memory >= 50%% below eager; graph step no slower than eager; "
              "replay overhead <= 0.2 us per node; "
              "CNN graph step <= 1.3x its floor and <= 0.5x PyTorch\n");
  std::fflush(stdout);

  TorchPeer torch;
  if (cfg.torch) torch.start(cfg.threads, cfg.warmup);
  else torch.skip("skipped (--no-torch)");
  ModelResult results[std::size(kModels)];
  for (size_t k = 0; k < std::size(kModels); ++k) {
    std::fprintf(stderr, "bench_graph: %s ...\n", kModels[k].script);
    bench_model(kModels[k], cfg, torch, results[k]);
    for (auto& r : results[k].runs) r.vm.reset();  // free the model before the next one
  }
  torch.stop();

  Goals goals;
  int failed = 0;
  for (size_t k = 0; k < std::size(kModels); ++k) {
    report_model(kModels[k], results[k], cfg, goals);
    for (auto& r : results[k].runs) failed += !r.ok();
  }
  double overhead = NAN;
  failed += replay_overhead(cfg, overhead);

  std::printf("\n== goals\n");
  std::printf("   graph peak memory >= 50%% below eager:  met by %d of %d (model, schedule) pairs: %s\n", goals.mem_pass,
              goals.mem_total, goals.mem_pass == goals.mem_total && goals.mem_total ? "MET" : "NOT MET");
  std::printf("   graph step no slower than eager:      met by %d of %d (model, schedule) pairs: %s"
              " (%d of %d within 3%% of eager, about the timing noise here)\n",
              goals.speed_pass, goals.speed_total,
              goals.speed_pass == goals.speed_total && goals.speed_total ? "MET" : "NOT MET", goals.speed_near,
              goals.speed_total);
  std::printf("   replay overhead <= 0.2 us per node:    %.3f us %s\n", overhead,
              overhead <= 0.2 ? "MET" : "NOT MET");
  if (goals.cnn_total)
    std::printf("   CNN graph step <= 1.3x floor, <= 0.5x PyTorch: met by %d of %d models: %s\n", goals.cnn_pass,
                goals.cnn_total, goals.cnn_pass == goals.cnn_total ? "MET" : "NOT MET");
  if (failed) std::printf("   %d run(s) FAILED: see above\n", failed);
  std::printf("(whole run: %.1f s)\n", ms_since(t_start) / 1000.0);
  return 0;
}
