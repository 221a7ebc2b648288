// Inference of models moved through ONNX: the digits MLP and CNN of the
// examples, written by save_onnx (bench/models/onnx_export.nn), imported
// back by load_onnx and run by nn as a graph (`graph predict(x) { m(x) }`)
// and eagerly, against onnxruntime for Node running the same files
// (bench/onnxruntime_peer.mjs; tests/onnx_runtime holds the package), at
// batch 1 and 64. They take turns, round after round, in the same run; each
// round's figure is the median of its runs, the table the median of the
// rounds. onnxruntime runs at 1 and at the run's thread count, the faster
// kept. Also: load_onnx's time on each model and on the largest model of
// ONNX's test data that nn imports.
//
// Usage: bench_onnx [--threads N] [--runs N] [--rounds N] [--no-peer]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "common/median.h"
#include "frontend/interpreter.h"
#include "onnx/onnx_io.h"

namespace {

using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;
using nn::frontend::Value;
using Clock = std::chrono::steady_clock;
using nn::bench::median;
namespace fs = std::filesystem;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// An imported model in its own interpreter, `predict` and an input ready.
struct NnInference {
  std::unique_ptr<Interpreter> vm;
  Value predict, model, x;

  NnInference(const std::string& path, const std::string& shape, bool eager, int threads) {
    InterpreterOptions o;
    o.eager_graphs = eager;
    o.threads = threads;
    vm = std::make_unique<Interpreter>(o);
    vm->run_code("<bench_onnx>", "let m = load_onnx(\"" + path + "\")\ngraph predict(x) { m(x) }\nlet x = rand(" +
                                     shape + ")\n");
    predict = *vm->find_global("predict");
    x = *vm->find_global("x");
  }
  double run(int n) {
    for (int i = 0; i < 3; ++i) vm->call(predict, {x});
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      vm->call(predict, {x});
      ms.push_back(ms_since(t0));
    }
    return median(ms);
  }
};

// onnxruntime's median time, from a child process; NAN when it fails.
double peer_ms(const std::string& path, int batch, int runs, int threads) {
  const std::string cmd = "node " NN_BENCH_DIR "/onnxruntime_peer.mjs " + path + " " + std::to_string(batch) + " " +
                          std::to_string(runs) + " " + std::to_string(threads) + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return NAN;
  double ms = NAN;
  if (std::fscanf(p, "%lf", &ms) != 1) ms = NAN;
  pclose(p);
  return ms;
}

// load_onnx's median time on a file (5 loads).
double load_ms(const std::string& path) {
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    nn::onnx_io::load(path);
    ms.push_back(ms_since(t0));
  }
  return median(ms);
}

// The largest model.onnx of ONNX's test data that nn imports, or "".
std::string largest_importable() {
  std::string best;
  uintmax_t best_size = 0;
  const fs::path root = "/usr/share/libonnx-testdata/data";
  if (!fs::exists(root)) return best;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename() != "model.onnx" || e.file_size() <= best_size) continue;
    try {
      nn::onnx_io::load(e.path().string());
      best = e.path().string();
      best_size = e.file_size();
    } catch (const std::exception&) {
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, runs = 50, rounds = 3;
  bool peer = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--threads") threads = next();
    else if (a == "--runs") runs = next();
    else if (a == "--rounds") rounds = next();
    else if (a == "--no-peer") peer = false;
    else {
      std::fprintf(stderr, "usage: bench_onnx [--threads N] [--runs N] [--rounds N] [--no-peer]\n");
      return 2;
    }
  }
  const fs::path dir = fs::temp_directory_path() / ("nn_bench_onnx_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  try {
    InterpreterOptions o;
    o.args = {dir.string()};
    Interpreter(o).run_file(NN_BENCH_DIR "/models/onnx_export.nn");
  } catch (const std::exception& e) {
    std::printf("bench_onnx: exporting the models failed: %s\n", e.what());
    return 1;
  }
  std::printf("bench_onnx: %d threads, %d rounds of %d runs (ms per inference, median of the rounds)\n", threads,
              rounds, runs);
  std::printf("%-5s %6s %10s %10s %12s %16s\n", "model", "batch", "nn graph", "nn eager", "onnxruntime",
              "graph/onnxruntime");
  struct Case {
    const char* model;
    int batch;
  };
  for (Case c : {Case{"mlp", 1}, Case{"mlp", 64}, Case{"cnn", 1}, Case{"cnn", 64}}) {
    const std::string path = (dir / (std::string(c.model) + ".onnx")).string();
    std::string shape = "[";  // (built up: g++ 12 warns falsely of "[" + std::to_string(n))
    shape += std::to_string(c.batch);
    shape += std::string(c.model) == "cnn" ? ", 1, 8, 8]" : ", 64]";
    std::vector<double> graph, eager, ort;
    try {
      NnInference g(path, shape, false, threads), e(path, shape, true, threads);
      for (int r = 0; r < rounds; ++r) {
        graph.push_back(g.run(runs));
        eager.push_back(e.run(runs));
        if (peer) {
          const double one = peer_ms(path, c.batch, runs, 1);
          const double all = threads > 1 ? peer_ms(path, c.batch, runs, threads) : NAN;
          ort.push_back(std::isnan(all) || one < all ? one : all);
        }
      }
    } catch (const std::exception& ex) {
      std::printf("%-5s failed: %s\n", c.model, ex.what());
      continue;
    }
    const double gm = median(graph), em = median(eager), pm = median(ort);
    std::printf("%-5s %6d %10.4f %10.4f %12.4f %16.2f\n", c.model, c.batch, gm, em, pm, gm / pm);
    std::fflush(stdout);
  }
  std::printf("load_onnx: mlp %.2f ms, cnn %.2f ms", load_ms((dir / "mlp.onnx").string()),
              load_ms((dir / "cnn.onnx").string()));
  const std::string largest = largest_importable();
  if (!largest.empty())
    std::printf(", largest test model %s (%ju bytes) %.2f ms", largest.c_str(), fs::file_size(largest),
                load_ms(largest));
  std::printf("\n");
  fs::remove_all(dir);
  return 0;
}
