// Training steps in eager mode against PyTorch in the same run: the MLP
// 784-512-256-10 and the CNN conv 20@5x5 -> max-pool 2 -> conv 50@5x5 ->
// max-pool 2 -> fc 500 -> fc 10 on 1x28x28, batch 64, SGD with momentum 0.9
// and weight decay 1e-5, 2 threads. PyTorch's side (torch_training.py) runs
// when Debian's python3-torch is installed. Prints the median time per step.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "frontend/interpreter.h"

namespace {

double median_step_ms(nn::frontend::Interpreter& vm, const std::string& step, int warmup, int steps) {
  for (int i = 0; i < warmup; ++i) vm.run_code("<warmup>", step);
  std::vector<double> ms;
  for (int i = 0; i < steps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    vm.run_code("<step>", step);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::map<std::string, double> torch_times(int threads) {
  std::map<std::string, double> out;
  std::string cmd = "/usr/bin/python3 " NN_BENCH_DIR "/torch_training.py " + std::to_string(threads) + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char name[64];
  double ms;
  while (std::fscanf(p, "%63s %lf", name, &ms) == 2) out[name] = ms;
  pclose(p);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  nn::frontend::InterpreterOptions opts;
  opts.threads = threads;
  nn::frontend::Interpreter vm(opts);
  try {
    vm.run_code("<mlp>",
                "let mlp = Sequential(Linear(784, 512), relu, Linear(512, 256), relu, Linear(256, 10))\n"
                "let mlp_opt = sgd(params(mlp), lr=0.01, momentum=0.9, weight_decay=1e-5)\n"
                "let mx = randn([64, 784])\nlet my = randint(0, 10, [64])\n"
                "fn mlp_step() { minimize(softmax_cross_entropy(mlp(mx), my), mlp_opt) }\n");
    vm.run_code("<cnn>",
                "let cnn = Sequential(Conv2d(1, 20, 5), relu, MaxPool2d(2), Conv2d(20, 50, 5), relu, MaxPool2d(2),\n"
                "                     Flatten(), Linear(800, 500), relu, Linear(500, 10))\n"
                "let cnn_opt = sgd(params(cnn), lr=0.01, momentum=0.9, weight_decay=1e-5)\n"
                "let cx = randn([64, 1, 28, 28])\nlet cy = randint(0, 10, [64])\n"
                "fn cnn_step() { minimize(softmax_cross_entropy(cnn(cx), cy), cnn_opt) }\n");
  } catch (const nn::frontend::ScriptError& e) {
    std::fprintf(stderr, "%s", vm.render(e).c_str());
    return 1;
  }
  double mlp = median_step_ms(vm, "mlp_step()", 5, 50);
  double cnn = median_step_ms(vm, "cnn_step()", 3, 20);
  auto torch = torch_times(threads);

  std::printf("training step, eager, batch 64, %d threads (median ms per step)\n", threads);
  std::printf("%-28s %10s %10s %8s\n", "model", "nn", "pytorch", "nn/pt");
  auto row = [&](const char* name, const char* key, double ours) {
    auto it = torch.find(key);
    if (it == torch.end())
      std::printf("%-28s %10.2f %10s %8s\n", name, ours, "-", "-");
    else
      std::printf("%-28s %10.2f %10.2f %8.2f\n", name, ours, it->second, ours / it->second);
  };
  row("MLP 784-512-256-10", "mlp_ms", mlp);
  row("CNN (LeNet, 1x28x28)", "cnn_ms", cnn);
  if (torch.empty()) std::printf("(PyTorch not found: install Debian's python3-torch for the comparison)\n");
  return 0;
}
