// The passes fuse-conv-relu and fuse-conv-relu-pool on graphs built by
// hand: a conv2d read only by a relu becomes conv2d_relu, taking the relu's
// output and the conv's line; it stays when the conv's output has another
// reader or is the graph's output, and on a GPU. A max pool of that, its
// indices unread, becomes conv2d_relu_max_pool. The fused graphs' results
// equal the unfused ones'.
#include <doctest/doctest.h>

#include <algorithm>

#include "backend/cuda_backend.h"
#include "ir/executor.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;

namespace {

const backend::Attrs kConv = same_conv();

// relu(conv2d(x, w, b)) on `d`, the conv's output also negated when `shared`,
// or returned when `returned`.
ir::Graph conv_relu(backend::Device* d, bool shared, bool returned) {
  ir::Graph g;
  g.name = "step";
  auto typed = [&](std::initializer_list<int64_t> dims) {
    return backend::TensorType{backend::DType::f32, backend::Shape(dims), d};
  };
  ir::ValueId x = input(g, typed({2, 3, 5, 5}), "x");
  ir::ValueId w = input(g, typed({4, 3, 3, 3}), "w");
  ir::ValueId b = input(g, typed({4}), "b");
  ir::ValueId c = add(g, "conv2d", {x, w, b}, kConv);
  g.nodes.back().loc = backend::SourceLoc{1, 70, 90};
  ir::ValueId y = add(g, "relu", {c});
  output(g, y);
  if (shared) output(g, add(g, "neg", {c}));
  if (returned) output(g, c);
  return g;
}

backend::Tensor ramp(backend::Shape s, float step, float from) {
  backend::Tensor t = backend::Tensor::empty(s, backend::DType::f32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = from + step * float(i % 11);
  return t;
}

// x, w and b of conv_relu's graph, with both signs: ReLU cuts part of the output.
std::vector<backend::Tensor> conv_args() {
  return {ramp(backend::Shape({2, 3, 5, 5}), 0.25f, -1.0f), ramp(backend::Shape({4, 3, 3, 3}), 0.1f, -0.5f),
          ramp(backend::Shape({4}), 0.3f, -0.4f)};
}

}  // namespace

TEST_CASE("pass fuse-conv-relu: conv2d then relu is one conv2d_relu with the relu's output") {
  ir::Graph g = conv_relu(backend::cpu_device(), false, false);
  const ir::Graph plain = g;
  const ir::ValueId y = g.outputs[0];
  CHECK(run_pass(g, "fuse-conv-relu") == 1);
  CHECK(ops(g) == "conv2d_relu");
  const ir::Node& n = g.nodes[0];
  CHECK(n.outputs[0] == g.outputs[0]);
  CHECK(g.values[n.outputs[0]].type.str() == plain.values[y].type.str());
  CHECK(n.inputs.size() == 3);
  CHECK(n.attrs.get<int64_t>("groups") == 1);
  CHECK(n.loc.begin == 70);
  const std::vector<backend::Tensor> args = conv_args();
  const std::vector<float> want = values(ir::run(plain, ir::make_plan(plain), args)[0]);
  const std::vector<float> got = values(ir::run(g, ir::make_plan(g), args)[0]);
  CHECK(got == want);
  CHECK(std::count(want.begin(), want.end(), 0.0f) > 0);
  CHECK(std::count_if(want.begin(), want.end(), [](float v) { return v > 0; }) > 0);
}

TEST_CASE("pass fuse-conv-relu: left alone where the conv's output is needed on its own") {
  for (bool shared : {true, false}) {
    ir::Graph g = conv_relu(backend::cpu_device(), shared, !shared);
    CHECK(run_pass(g, "fuse-conv-relu") == 0);
    CHECK(ops(g).starts_with("conv2d relu"));
  }
  if (!backend::cuda_built()) return;
  nntest::FakeGpu gpu;  // cuDNN runs its own convolutions: the pass is the CPU's
  ir::Graph g = conv_relu(&gpu, false, false);
  CHECK(run_pass(g, "fuse-conv-relu") == 0);
}

// The pass fuse-conv-relu-pool, after fuse-conv-relu: max_pool2d of a
// conv2d_relu is one conv2d_relu_max_pool when nothing reads the pool's
// indices (inference), with the pool's window under pool_ attrs; the result
// equals the unfused graph's.
TEST_CASE("pass fuse-conv-relu-pool: conv2d_relu then max_pool2d is one node where no one reads the indices") {
  const backend::Attrs pool{{"kernel", std::vector<int64_t>{2, 2}},
                            {"stride", std::vector<int64_t>{2, 2}},
                            {"padding", std::vector<int64_t>{0, 0}}};
  for (int readers : {0, 1, 2}) {  // 1: the indices are returned; 2: the conv's output too
    CAPTURE(readers);
    ir::Graph g = conv_relu(backend::cpu_device(), false, false);
    const ir::ValueId y = g.outputs[0];
    g.outputs.clear();
    g.values[y].output = false;
    const backend::OpDef& max_pool = backend::op("max_pool2d");
    const backend::TensorType in[] = {g.values[y].type};
    const ir::NodeId p =
        g.add_node(&max_pool, {y}, pool, max_pool.type_rule(std::span<const backend::TensorType>(in), pool));
    output(g, g.nodes[p].outputs[0]);
    if (readers >= 1) output(g, g.nodes[p].outputs[1]);
    if (readers >= 2) output(g, y);
    CHECK(run_pass(g, "fuse-conv-relu") == 1);
    const ir::Graph plain = g;
    if (readers > 0) {
      CHECK(run_pass(g, "fuse-conv-relu-pool") == 0);
      continue;
    }
    CHECK(run_pass(g, "fuse-conv-relu-pool") == 1);
    CHECK(ops(g) == "conv2d_relu_max_pool");
    const ir::Node& n = g.nodes[0];
    CHECK(n.outputs.size() == 1);
    CHECK(n.outputs[0] == g.outputs[0]);
    CHECK(g.values[n.outputs[0]].type.str() == "f32[2, 4, 2, 2]");
    CHECK(n.attrs.get<std::vector<int64_t>>("pool_kernel") == std::vector<int64_t>{2, 2});
    CHECK(n.attrs.get<int64_t>("groups") == 1);
    CHECK(n.loc.begin == 70);
    const std::vector<backend::Tensor> args = conv_args();
    const std::vector<float> want = values(ir::run(plain, ir::make_plan(plain), args)[0]);
    CHECK(values(ir::run(g, ir::make_plan(g), args)[0]) == want);
    CHECK(std::count(want.begin(), want.end(), 0.0f) > 0);
  }
}
