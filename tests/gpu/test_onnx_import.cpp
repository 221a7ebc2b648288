// ONNX models on the GPU (SPEC §16): the digits CNN written by save_onnx and
// read back by load_onnx with the GPU as the script's device runs eagerly
// and in a graph with the same outputs, equal to the model it came from, and
// trains in a graph with the CPU's losses (within the tolerance of the
// CNN's own GPU training test: the GPU sums in another order).
#include <sstream>

#include "backend/cuda_backend.h"
#include "digits_training.h"
#include "frontend/interpreter.h"
#include "gpu/gpu_test_util.h"

using namespace nngpu;

namespace {

// The numbers: |eager - graph| and |imported - original| summed over the
// logits of 64 digits (the model of the CNN's own GPU test), the logits' sum
// of squares, then ten training losses.
std::string script(const std::string& path) {
  return std::string(nntest::kDigitsCnn) + R"(
save_onnx(fn(xb) { model(xb) }, (images[0:64],), ")" + path + R"(")
let m = load_onnx(")" + path + R"(")
graph predict(xb) { m(xb) }
let eager = m(images[0:64])
let out = []
out.append(item(sum(abs(eager - predict(images[0:64])))))
out.append(item(sum(abs(eager - model(images[0:64])))))
out.append(item(sum(eager * eager)))
let tune = adam(params(m), lr=0.005)
graph train_step(xb, yb) {
  let loss = softmax_cross_entropy(m(xb), yb)
  minimize(loss, tune)
  loss
}
for i in 0..10 { out.append(item(train_step(images[i * 64:i * 64 + 64], y[i * 64:i * 64 + 64]))) }
out
)";
}

std::vector<double> numbers(const std::string& device) {
  nn::frontend::InterpreterOptions o;
  o.device = device;
  o.threads = 1;
  std::ostringstream out;
  o.out = &out;
  std::vector<double> r;
  {
    nn::frontend::Interpreter vm(o);
    nn::frontend::Value v = vm.run_code("onnx.nn", script("/tmp/nn_test_gpu_onnx_" + device + ".onnx"));
    for (const nn::frontend::Value& x : v.as_list()->items) r.push_back(x.as_number());
  }
  set_default_device(nullptr);  // the interpreter made its device the process's default
  return r;
}

}  // namespace

TEST_CASE("an ONNX model imported on the GPU runs eagerly and in a graph, and trains with the CPU's losses") {
  NN_NEED_GPU();
#ifndef NN_HAVE_ONNX
  MESSAGE("skipped: nn was built without ONNX");
#else
  const std::vector<double> cpu = numbers("cpu"), gpu_ = numbers("cuda");
  REQUIRE(gpu_.size() == 13);
  REQUIRE(cpu.size() == gpu_.size());
  CHECK(gpu_[0] <= 1e-4 * gpu_[2]);  // graph against eager on the GPU
  CHECK(gpu_[1] <= 1e-4 * gpu_[2]);  // the imported model against the original
  CHECK(std::abs(gpu_[2] - cpu[2]) <= 1e-4 * cpu[2]);
  for (size_t i = 3; i < cpu.size(); ++i) {
    INFO("step " << i - 3 << ": cpu " << cpu[i] << ", gpu " << gpu_[i]);
    CHECK(std::abs(gpu_[i] - cpu[i]) <= 3e-3 * cpu[i]);
  }
  CHECK(gpu_.back() < gpu_[3]);
#endif
}
