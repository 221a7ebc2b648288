// Per-call costs a C++ host pays through the public API (include/nn/nn.h,
// linked against libnn_embed like a host): an empty script function, a tiny
// MLP predict, eval of the same, interpreter creation, and a graph training
// step. Prints the best of several runs per call, in microseconds.
#include <nn/nn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <vector>

namespace {

const char* kModel = R"(
fn nop() { }
let model = Sequential(Linear(4, 16), relu, Linear(16, 3))
fn predict(x) { model(x) }
let opt = sgd(params(model), lr=0.01)
graph train_step(xb, yb) {
  let loss = softmax_cross_entropy(model(xb), yb)
  minimize(loss, opt)
  return loss
}
)";

// Best time of one call over `reps` runs of `n` calls, in microseconds.
double best_us(int n, const std::function<void()>& f, int reps = 7) {
  for (int i = 0; i < std::max(1, n / 10); ++i) f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  std::ostringstream sink;
  nn::Options o;
  o.threads = 1;
  o.out = &sink;
  double first_create = best_us(1, [&] { nn::Interpreter vm(o); }, 1);
  double create = best_us(20, [&] { nn::Interpreter vm(o); }, 3);
  nn::Interpreter vm(o);
  vm.eval(kModel);
  std::vector<float> xs(4, 0.5f), xb(8 * 4, 0.25f);
  std::vector<int64_t> yb(8, 1);
  vm.set("x", nn::Tensor::from_blob(xs.data(), {1, 4}));
  nn::Value nop = vm.get("nop"), predict = vm.get("predict"), step = vm.get("train_step");
  nn::Value x = vm.get("x");
  nn::Value xv(nn::Tensor::from_blob(xb.data(), {8, 4})), yv(nn::Tensor::from_blob(yb.data(), {8}));
  std::printf("empty function call from host   %8.3f us\n", best_us(n, [&] { vm.call(nop, std::vector<nn::Value>{}); }));
  std::printf("tiny MLP predict from host      %8.3f us\n", best_us(n / 4, [&] { vm.call(predict, std::vector<nn::Value>{x}); }));
  std::printf("eval(\"predict(x)\")              %8.3f us\n", best_us(n / 4, [&] { vm.eval("predict(x)"); }));
  std::printf("eval(\"1\")                       %8.3f us\n", best_us(n, [&] { vm.eval("1"); }));
  std::printf("graph training step from host   %8.3f us\n", best_us(n / 4, [&] { vm.call(step, std::vector<nn::Value>{xv, yv}); }));
  std::printf("interpreter creation (first)    %8.1f us\n", first_create);
  std::printf("interpreter creation (later)    %8.1f us\n", create);
  return 0;
}
