// Training on a CUDA GPU: nn eager, nn graph without and with (the default)
// its fused NVRTC kernels (backend::set_gpu_fusion), the graph again with
// the fastest convolution algorithms whether deterministic or not
// (backend::set_gpu_deterministic_convolutions(false), what PyTorch's
// cudnn.benchmark picks from) and with those and TF32 Tensor Cores
// (backend::set_gpu_tf32, PyTorch's default for convolutions), and
// PyTorch, for the digits CNN
// (bench/models/digits_cnn.nn, batch 64) and ResNet-50
// (bench/models/resnet50.nn, 3x224x224, batch 32 and 64). Per row: peak
// memory of one step (the GPU pool's window: begin_window before the step,
// window_peak minus the bytes in use before it; for PyTorch
// torch.cuda.max_memory_allocated the same way), the median step time
// (each step ends waiting for the GPU) and samples per second.
//
// PyTorch runs bench/torch_gpu.py with `python3` from PATH, after nn's rows,
// three times: in full f32 (TF32 off, the arithmetic nn does), in full f32
// with cudnn.deterministic (the algorithms nn takes by default), and with
// its defaults' TF32 Tensor Cores on; its rows are skipped with a note when
// python3 cannot import torch or sees no GPU.
//
// With --precision bf16 (autocast) nn runs two more rows (with and without
// fused kernels); PyTorch two more:
// bf16 autocast with channels_last, eagerly and under torch.compile.
//
// Usage: bench_gpu [--steps N] [--resnet-steps N] [--warmup N] [--no-torch]
//                  [--no-resnet] [--no-64] [--quick] [--64]
// --quick: graph rows only, ResNet-50 at batch 32 only (--64 after it: and
// 64), PyTorch's ResNet-50 only.
// The models and torch_gpu.py are read from the source's bench/ folder, or
// from $NN_BENCH_DIR. Built only with the CUDA backend; without a GPU it says
// so and exits 0.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/median.h"
#include "backend/cuda_backend.h"
#include "backend/device.h"
#include "frontend/interpreter.h"

namespace {

using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;
using nn::frontend::Value;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

using nn::bench::median;

struct Config {
  int steps = 100;        // digits CNN
  int resnet_steps = 10;  // ResNet-50
  int warmup = 3;
  bool torch = true, resnet = true, batch64 = true;
  bool quick = false;  // the rows a comparison needs: graph modes, batch 32
};

struct Row {
  std::string model, mode;
  int64_t batch = 0;
  double ms = NAN;
  size_t peak = 0;
  double compile_ms = NAN;
  double first_loss = NAN, loss = NAN;  // after the first step and after the last
  std::string note;
};

std::string describe(Interpreter& vm, const std::exception& e) {
  if (auto* se = dynamic_cast<const nn::frontend::ScriptError*>(&e)) return vm.render(*se);
  return e.what();
}

// How nn runs a model: eager or graph, with the fused kernels NVRTC
// compiles (the default) or without, with deterministic convolution
// algorithms only (the default) or the fastest, in f32 (the default) or
// with TF32.
struct Mode {
  const char* name;
  bool eager, fused, deterministic, tf32 = false;
  const char* precision = "f32";  // --precision: bf16 runs the script under autocast
  bool quick = false;             // one of --quick's rows
};
const Mode kModes[] = {{"nn eager", true, true, true},
                       {"nn graph unfused", false, false, true},
                       {"nn graph", false, true, true, false, "f32", true},
                       {"nn graph fastest", false, true, false, false, "f32", true},
                       {"nn graph TF32", false, true, false, true, "f32", true},
                       {"nn graph bf16 unfused", false, false, false, true, "bf16", true},
                       {"nn graph bf16", false, true, false, true, "bf16", true}};

// Steps of an nn script's train_step on its first batch, on the GPU.
Row run_nn(const std::string& model, const std::string& script, const std::string& batch_arg, Mode mode, int steps,
           int warmup) {
  Row row;
  row.model = model;
  row.mode = mode.name;
  nn::backend::set_gpu_fusion(mode.fused);
  nn::backend::set_gpu_deterministic_convolutions(mode.deterministic);
  nn::backend::set_gpu_tf32(mode.tf32);
  nn::backend::Device* gpu = nn::backend::find_device("cuda");
  InterpreterOptions o;
  o.device = "cuda";
  o.eager_graphs = mode.eager;
  o.precision = mode.precision;
  if (!batch_arg.empty()) o.args = {batch_arg};
  std::ostringstream out;
  o.out = &out;
  auto vm = std::make_unique<Interpreter>(o);
  try {
    vm->run_file(script);
    const Value step = *vm->find_global("train_step");
    const Value x = vm->find_global("xs")->as_list()->items.at(0);
    const Value y = vm->find_global("ys")->as_list()->items.at(0);
    row.batch = x.as_tensor().shape()[0];
    nn::backend::CachingPool& pool = gpu->pool();
    std::vector<double> ms;
    for (int i = 0; i < warmup + steps; ++i) {
      gpu->synchronize();
      const size_t before = pool.stats().current;
      const size_t enclosing = pool.begin_window();
      const auto t0 = Clock::now();
      Value loss = vm->call(step, {x, y});
      gpu->synchronize();
      const double t = ms_since(t0);
      if (i >= warmup) {
        ms.push_back(t);
        row.peak = std::max(row.peak, pool.stats().window_peak - before);
      }
      pool.end_window(enclosing);
      if (i == 0) row.first_loss = loss.as_tensor().item_double();
      if (i + 1 == warmup + steps) row.loss = loss.as_tensor().item_double();
    }
    row.ms = median(ms);
    for (const auto& c : vm->graphs())
      if (c->name == "train_step" && c->latest()) row.compile_ms = c->latest()->trace_ms + c->latest()->compile_ms;
  } catch (const std::exception& e) {
    row.note = describe(*vm, e);
  }
  vm.reset();
  nn::backend::set_default_device(nullptr);
  gpu->pool().empty_cache();  // the next row starts from an empty pool, as PyTorch's process does
  nn::backend::set_gpu_fusion(true);
  nn::backend::set_gpu_deterministic_convolutions(true);
  nn::backend::set_gpu_tf32(false);
  return row;
}

// The folder of the models and of torch_gpu.py.
std::string bench_dir() {
  const char* env = std::getenv("NN_BENCH_DIR");
  return env && *env ? env : NN_BENCH_DIR;
}

// PyTorch's settings (torch_gpu.py's last argument) and the name of their row.
struct TorchMode {
  const char* arg;
  const char* name;
  bool quick = true;
};
const TorchMode kTorchModes[] = {{"f32", "PyTorch f32"},
                                 {"deterministic", "PyTorch f32 determ.", false},
                                 {"tf32", "PyTorch (TF32)"},
                                 {"bf16", "PyTorch bf16 NHWC"},
                                 {"compile", "PyTorch compile bf16"}};

// PyTorch's steps, from bench/torch_gpu.py in a child process.
Row run_torch(const std::string& model, const char* torch_model, int64_t batch, int steps, int warmup,
              const TorchMode& mode) {
  Row row;
  row.model = model;
  row.mode = mode.name;
  row.batch = batch;
  const std::string cmd = "python3 " + bench_dir() + "/torch_gpu.py " + std::string(torch_model) + " " +
                          std::to_string(batch) + " " + std::to_string(steps) + " " + std::to_string(warmup) + " " +
                          mode.arg + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string text;
  if (p) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) text += buf;
    pclose(p);
  }
  double ms = NAN;
  unsigned long long peak = 0;
  if (std::sscanf(text.c_str(), "%lf %llu", &ms, &peak) == 2) {
    row.ms = ms;
    row.peak = size_t(peak);
  } else {
    const size_t nl = text.find_last_of('\n', text.size() >= 2 ? text.size() - 2 : 0);
    row.note = "no figures from torch_gpu.py: " + (nl == std::string::npos ? text : text.substr(nl + 1));
  }
  return row;
}

void print(const std::vector<Row>& rows) {
  std::printf("%-10s %-22s %5s %11s %10s %11s %11s %10s %10s\n", "model", "mode", "batch", "peak MB", "ms/step",
              "samples/s", "compile ms", "loss 1st", "loss last");
  for (const Row& r : rows) {
    if (!r.note.empty()) {
      std::printf("%-10s %-22s %5lld  %s\n", r.model.c_str(), r.mode.c_str(), static_cast<long long>(r.batch),
                  r.note.c_str());
      continue;
    }
    std::printf("%-10s %-22s %5lld %11.1f %10.3f %11.0f %11.1f %10.6f %10.6f\n", r.model.c_str(), r.mode.c_str(),
                static_cast<long long>(r.batch), double(r.peak) / 1e6, r.ms, double(r.batch) / r.ms * 1e3,
                r.compile_ms, r.first_loss, r.loss);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--steps") cfg.steps = next();
    else if (a == "--resnet-steps") cfg.resnet_steps = next();
    else if (a == "--warmup") cfg.warmup = next();
    else if (a == "--no-torch") cfg.torch = false;
    else if (a == "--no-resnet") cfg.resnet = false;
    else if (a == "--no-64") cfg.batch64 = false;
    else if (a == "--quick") cfg.quick = true, cfg.batch64 = false;
    else if (a == "--64") cfg.batch64 = true;
    else {
      std::fprintf(stderr, "usage: bench_gpu [--steps N] [--resnet-steps N] [--warmup N] [--no-torch] [--no-resnet] [--no-64] [--quick] [--64]\n");
      return 2;
    }
  }
  nn::backend::Device* gpu = nn::backend::find_device("cuda");
  if (!gpu) {
    std::printf("bench_gpu: no GPU: %s\n", nn::backend::device_unavailable_reason("cuda").c_str());
    return 0;
  }
  std::printf("bench_gpu on %s: %d CNN steps, %d ResNet-50 steps, %d warm-up steps each\n", gpu->name().c_str(),
              cfg.steps, cfg.resnet_steps, cfg.warmup);
  const std::string models = bench_dir() + "/models/";
  std::vector<Row> rows;
  for (Mode mode : kModes)
    if (mode.quick || !cfg.quick) rows.push_back(run_nn("cnn", models + "digits_cnn.nn", "", mode, cfg.steps, cfg.warmup));
  std::vector<int64_t> batches{32};
  if (cfg.batch64) batches.push_back(64);
  if (cfg.resnet)
    for (int64_t b : batches)
      for (Mode mode : kModes)
        if (mode.quick || !cfg.quick) rows.push_back(run_nn("resnet50", models + "resnet50.nn", std::to_string(b), mode, cfg.resnet_steps,
                              cfg.warmup));
  print(rows);
  if (!cfg.torch) return 0;
  std::vector<Row> torch_rows;
  for (const TorchMode& mode : kTorchModes) {
    if (cfg.quick && !mode.quick) continue;
    if (!cfg.quick) torch_rows.push_back(run_torch("cnn", "cnn", rows[0].batch, cfg.steps, cfg.warmup, mode));
    if (cfg.resnet)
      for (int64_t b : batches)
        torch_rows.push_back(run_torch("resnet50", "resnet50", b, cfg.resnet_steps, cfg.warmup, mode));
  }
  print(torch_rows);
  return 0;
}
