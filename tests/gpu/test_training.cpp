// The example trainings on the GPU: the digits MLP (SGD with momentum) and
// CNN (Adam) run as scripts with `device` set to the GPU, in graph mode, and
// give the CPU's losses step by step within a tolerance (the GPU sums in
// another order); graph mode on the GPU gives eager mode's losses; a full
// training reaches the CPU's accuracy; the graph's memory is the GPU's;
// with GPU fusion on, the NVRTC-compiled fused kernels give the unfused
// GPU's losses; in f16 and bf16 the MLP follows f32's losses.
#include <sstream>

#include "backend/cuda_backend.h"
#include "digits_training.h"
#include "fake_gpu.h"
#include "frontend/format.h"
#include "frontend/interpreter.h"
#include "gpu/gpu_test_util.h"

using namespace nngpu;
using nn::frontend::Interpreter;
using nn::frontend::InterpreterOptions;

namespace {

const std::string kTrainLoop = nntest::digits_training(30);

// Runs `code` on `device` and returns the list of numbers it ends with.
std::vector<double> numbers(const std::string& device, const std::string& code, bool eager = false,
                            const std::string& precision = "f32") {
  InterpreterOptions o;
  o.device = device;
  o.precision = precision;
  o.eager_graphs = eager;
  o.threads = 1;
  std::ostringstream out;
  o.out = &out;
  std::vector<double> r;
  {
    Interpreter vm(o);
    nn::frontend::Value v = vm.run_code("train.nn", code);
    for (const nn::frontend::Value& x : v.as_list()->items) r.push_back(x.as_number());
  }
  set_default_device(nullptr);  // the interpreter made its device the process's default
  return r;
}

void close(const std::vector<double>& cpu, const std::vector<double>& gpu_, double rtol, const char* what) {
  REQUIRE(cpu.size() == gpu_.size());
  double worst = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double rel = std::abs(cpu[i] - gpu_[i]) / std::max(1e-12, std::abs(cpu[i]));
    worst = std::max(worst, rel);
    INFO(what << " step " << i << ": cpu " << cpu[i] << ", gpu " << gpu_[i]);
    CHECK(rel <= rtol);
  }
  MESSAGE(std::string(what) << ": largest relative difference " << worst);
}

// f's result with GPU fusion on or off.
template <class F>
auto with_fusion(bool on, F f) {
  nntest::GpuFusionScope fusion(on);
  return f();
}

}  // namespace

TEST_CASE("the digits MLP trains on the GPU in graph mode with the CPU's losses") {
  NN_NEED_GPU();
  const std::vector<double> cpu = numbers("cpu", std::string(nntest::kDigitsMlp) + kTrainLoop);
  const std::vector<double> graph = numbers("cuda", std::string(nntest::kDigitsMlp) + kTrainLoop);
  const std::vector<double> eager = numbers("cuda", std::string(nntest::kDigitsMlp) + kTrainLoop, true);
  close(cpu, graph, 1e-3, "MLP graph");
  close(eager, graph, 1e-5, "MLP graph on the GPU against eager on the GPU");
  CHECK(graph.back() < graph.front());
}

TEST_CASE("the digits CNN trains on the GPU in graph mode with the CPU's losses") {
  NN_NEED_GPU();
  const std::vector<double> cpu = numbers("cpu", std::string(nntest::kDigitsCnn) + kTrainLoop);
  const std::vector<double> graph = numbers("cuda", std::string(nntest::kDigitsCnn) + kTrainLoop);
  close(cpu, graph, 3e-3, "CNN graph");
  CHECK(graph.back() < graph.front());
}

TEST_CASE("with GPU fusion, the digits trainings run fused NVRTC kernels and give the unfused GPU's losses") {
  NN_NEED_GPU();
  // The last number is the count of fused nodes in the step.
  const std::string loop = kTrainLoop + "\nlosses.append(graph_stats(train_step).fused_groups)\nlosses\n";
  for (const char* model : {nntest::kDigitsMlp, nntest::kDigitsCnn}) {
    std::vector<double> plain = with_fusion(false, [&] { return numbers("cuda", std::string(model) + loop); });
    std::vector<double> fused = with_fusion(true, [&] { return numbers("cuda", std::string(model) + loop); });
    CHECK(plain.back() == 0);
    CHECK(fused.back() > 0);
    plain.pop_back();
    fused.pop_back();
    // Each step rounds as the op's own kernel does (no contraction): the same
    // losses, up to the order of the few sums cuBLAS and the reductions make.
    close(plain, fused, 1e-6, "fused against unfused on the GPU");
  }
}

TEST_CASE("with GPU fusion, a residual block's batch norms, made again in the backward, fuse and keep the losses") {
  NN_NEED_GPU();
  // relu(bn(conv(x)) + x) twice: recompute makes the block's outputs again
  // with batch_norm_apply, which batch-norm-apply-into-elementwise writes as
  // elementwise ops that fusion folds into the backward's kernels.
  const std::string code = R"(
seed(0)
let c1 = Conv2d(4, 4, 3, padding=1, bias=false)
let b1 = BatchNorm2d(4)
let c2 = Conv2d(4, 4, 3, padding=1, bias=false)
let b2 = BatchNorm2d(4)
let opt = sgd(params([c1, b1, c2, b2]), lr=0.05, momentum=0.9)
let x = randn([8, 4, 6, 6])
let target = randn([8, 4, 6, 6])
graph train_step(xb) {
  let h = relu(b1(c1(xb)) + xb)
  let out = relu(b2(c2(h)) + h)
  let loss = mean((out - target) * (out - target))
  minimize(loss, opt)
  return loss
}
let losses = []
for i in 0..5 { losses.append(item(train_step(x))) }
losses.append(graph_stats(train_step).fused_groups)
losses
)";
  std::vector<double> plain = with_fusion(false, [&] { return numbers("cuda", code); });
  std::vector<double> fused = with_fusion(true, [&] { return numbers("cuda", code); });
  const std::vector<double> cpu = numbers("cpu", code);
  CHECK(plain.back() == 0);
  CHECK(fused.back() > 0);
  plain.pop_back(), fused.pop_back();
  close(plain, fused, 1e-6, "residual block fused against unfused on the GPU");
  close(std::vector<double>(cpu.begin(), cpu.end() - 1), fused, 1e-4, "residual block fused on the GPU against the CPU");
}

TEST_CASE("the digits MLP trains in f16 and in bf16 on the GPU, following f32's losses") {
  NN_NEED_GPU();
  // Params, data and every intermediate in the dtype; the optimizer's state too.
  auto mlp = [](const std::string& dtype) {
    return R"(
seed(0)
let (x, y) = load_digits()
let images = astype(x, )" + dtype + R"()
let w1 = param(astype(randn([64, 128]) * 0.125, )" + dtype + R"())
let b1 = param(zeros([128], )" + dtype + R"())
let w2 = param(astype(randn([128, 10]) * 0.09, )" + dtype + R"())
let b2 = param(zeros([10], )" + dtype + R"())
let model = fn(xb) { relu(xb @ w1 + b1) @ w2 + b2 }
let opt = sgd([w1, b1, w2, b2], lr=0.1, momentum=0.9)
)" + kTrainLoop;
  };
  const std::vector<double> f32 = numbers("cuda", mlp("f32"));
  auto tail_mean = [](const std::vector<double>& v) {
    return (v[v.size() - 1] + v[v.size() - 2] + v[v.size() - 3]) / 3;
  };
  for (const char* d : {"f16", "bf16"}) {
    const std::vector<double> low = numbers("cuda", mlp(d));
    REQUIRE(low.size() == f32.size());
    INFO(d << ": first loss " << low.front() << " (f32 " << f32.front() << "), last three " << tail_mean(low)
            << " (f32 " << tail_mean(f32) << ")");
    // The first loss differs by the inputs' and weights' rounding alone.
    CHECK(std::abs(low.front() - f32.front()) <= 0.02 * f32.front());
    CHECK(std::abs(tail_mean(low) - tail_mean(f32)) <= 0.25 * tail_mean(f32));
    CHECK(tail_mean(low) < 0.5 * low.front());
  }
}

TEST_CASE("the digits CNN trains under autocast in bf16 and f16 on the GPU, following the CPU's autocast and f32") {
  NN_NEED_GPU();
  // f32 params, casts placed by autocast (SPEC §15): convolutions and
  // matmuls in the 16-bit dtype, the loss in f32.
  const std::string code = std::string(nntest::kDigitsCnn) + kTrainLoop;
  const std::vector<double> f32 = numbers("cuda", code);
  auto tail_mean = [](const std::vector<double>& v) {
    return (v[v.size() - 1] + v[v.size() - 2] + v[v.size() - 3]) / 3;
  };
  for (const char* p : {"bf16", "f16"}) {
    const std::vector<double> gpu = numbers("cuda", code, false, p), cpu = numbers("cpu", code, false, p);
    REQUIRE(gpu.size() == f32.size());
    INFO(p << ": first loss " << gpu.front() << " (cpu " << cpu.front() << ", f32 " << f32.front() << "), last three "
           << tail_mean(gpu) << " (cpu " << tail_mean(cpu) << ", f32 " << tail_mean(f32) << ")");
    // The same roundings in another summation order: the first step's loss
    // within a few 16-bit ulps of the CPU's.
    CHECK(std::abs(gpu.front() - cpu.front()) <= 0.02 * cpu.front());
    CHECK(std::abs(gpu.front() - f32.front()) <= 0.02 * f32.front());
    CHECK(std::abs(tail_mean(gpu) - tail_mean(f32)) <= 0.25 * tail_mean(f32));
    CHECK(tail_mean(gpu) < 0.5 * gpu.front());
    // Fused kernels load, compute and round 16-bit values as the ops one by one do.
    const std::vector<double> unfused = with_fusion(false, [&] { return numbers("cuda", code, false, p); });
    close(unfused, gpu, 0, "autocast fused against unfused on the GPU");
  }
}

TEST_CASE("a whole digits training on the GPU reaches the CPU's accuracy, in the GPU's memory") {
  NN_NEED_GPU();
  const std::string code = std::string(nntest::kDigitsMlp) + R"(
let (xtr, ytr, xte, yte) = split(x, y, 0.8, seed=0)
graph train_step(xb, yb) {
  let loss = softmax_cross_entropy(model(xb), yb)
  minimize(loss, opt)
  return loss
}
for epoch in 0..10 {
  for (xb, yb) in batches(xtr, ytr, 64, shuffle=true) { train_step(xb, yb) }
}
let m = mem()
let r = []
r.append(item(accuracy(model(xte), yte)))
r.append(m.peak)
r.append(graph_stats(train_step).peak_bytes)
r
)";
  const std::vector<double> cpu = numbers("cpu", code), gpu_ = numbers("cuda", code);
  MESSAGE("test accuracy: cpu " << cpu[0] << ", gpu " << gpu_[0]);
  CHECK(gpu_[0] >= 0.95);
  CHECK(std::abs(gpu_[0] - cpu[0]) <= 0.01);
  CHECK(gpu_[1] > 0);  // mem() reads the GPU's pool
  CHECK(gpu_[2] > 0);  // the graph ran in it
}

TEST_CASE("tensor literals in a graph traced on the GPU are constants of the trace") {
  NN_NEED_GPU();
  const std::string code = R"(
graph pooled(x) { return mean(x, axis=[2, 3]) * [1.0, 2.0] }
let x = reshape(arange(16.0), [1, 2, 2, 4])
let r = []
for v in pooled(x)[0] { r.append(item(v)) }
r
)";
  const std::vector<double> cpu = numbers("cpu", code), gpu_ = numbers("cuda", code);
  REQUIRE(gpu_.size() == 2);
  CHECK(gpu_ == cpu);
  CHECK(gpu_[0] == 3.5);   // mean of 0..7
  CHECK(gpu_[1] == 23.0);  // 2 * mean of 8..15
}

TEST_CASE("a GPU training is deterministic: two runs give the same losses bit for bit") {
  NN_NEED_GPU();
  const std::string code = std::string(nntest::kDigitsCnn) + kTrainLoop;
  const std::vector<double> a = numbers("cuda", code), b = numbers("cuda", code);
  CHECK(a == b);
}

TEST_CASE("scripts move tensors with to(), print them from the GPU, and name both devices on a mix") {
  NN_NEED_GPU();
  InterpreterOptions o;
  std::ostringstream out;
  o.out = &out;
  Interpreter vm(o);
  CHECK(nn::frontend::to_str(vm.run_code("t.nn", "let x = to([1.5, 2.5], device(\"cuda\"))\nx.device")) == "cuda:0");
  CHECK(nn::frontend::to_str(vm.run_code("t.nn", "item(sum(x * 2))")) == "8.0");
  CHECK(nn::frontend::to_str(vm.run_code("t.nn", "str(to(x, \"cpu\"))")) == nn::frontend::to_str(vm.run_code("t.nn", "str([1.5, 2.5])")));
  CHECK(nn::frontend::to_str(vm.run_code("t.nn", "str(x)")).find("cuda:0") != std::string::npos);
  std::string error;
  try {
    vm.run_code("t.nn", "x + [1.0, 2.0]");
  } catch (const nn::frontend::ScriptError& e) {
    error = e.diagnostics().front().message;
  }
  CHECK(error == "add: operands are on different devices: f32[2] on cuda:0 and f32[2] on cpu; move one with to(x, device)");
}
