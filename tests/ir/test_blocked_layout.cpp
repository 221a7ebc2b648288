// The pass blocked-layout on graphs built by hand: between a convolution, a
// batch norm, a relu, a second convolution, a residual sum and a global
// sum, every activation is held in nChw16c and no reorder is made but the
// one before the graph's output; the results equal the plain graph's. So
// for a training graph's max pool and its backward. A graph without batch
// norm or pooling's backward, and any graph with oneDNN off, is left alone.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "backend/onednn.h"
#include "graph_builder.h"
#include "ir/executor.h"

using namespace nn;
using namespace nntest;

namespace {

const backend::Attrs kConv = same_conv();

// x [2, 3, 6, 6] -> conv 16 -> (batch norm) -> relu r -> conv 16 -> + r ->
// per-channel scale s; outputs s's sums over (2, 3) and over (0, 2, 3)
// (kept as [1, 16, 1, 1]), and r.
ir::Graph residual(bool batch_norm) {
  ir::Graph g;
  g.name = "step";
  const ir::ValueId x = input(g, f32({2, 3, 6, 6}), "x");
  const ir::ValueId w1 = input(g, f32({16, 3, 3, 3}), "w1");
  const ir::ValueId w2 = input(g, f32({16, 16, 3, 3}), "w2");
  const ir::ValueId gamma = input(g, f32({16}), "gamma");
  const ir::ValueId beta = input(g, f32({16}), "beta");
  const ir::ValueId scale = input(g, f32({16, 1, 1}), "scale");
  ir::ValueId c = add(g, "conv2d", {x, w1}, kConv);
  if (batch_norm) c = add(g, "batch_norm_train", {c, gamma, beta}, {{"eps", 1e-5}});
  const ir::ValueId r = add(g, "relu", {c});
  const ir::ValueId c2 = add(g, "conv2d", {r, w2}, kConv);
  const ir::ValueId s = add(g, "mul", {add(g, "add", {c2, r}), scale});
  output(g, add(g, "sum", {s}, {{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", false}}));
  output(g, r);
  output(g, add(g, "sum", {s}, {{"axes", std::vector<int64_t>{0, 2, 3}}, {"keepdims", true}}));
  return g;
}

// Inputs of these shapes, f32, values spread over [-0.5, 0.5].
std::vector<backend::Tensor> args(std::initializer_list<backend::Shape> shapes) {
  std::vector<backend::Tensor> a;
  int k = 0;
  for (const backend::Shape& s : shapes) {
    backend::Tensor t = backend::Tensor::empty(s, backend::DType::f32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::sin(float(i * 7 + ++k)) * 0.5f;
    a.push_back(t);
  }
  return a;
}

// The rewritten graph's outputs equal the plain graph's on inputs a.
void check_same_results(const ir::Graph& before, const ir::Graph& g, const std::vector<backend::Tensor>& a) {
  const std::vector<backend::Tensor> want = ir::run(before, ir::make_plan(before), a);
  const std::vector<backend::Tensor> got = ir::run(g, ir::make_plan(g), a);
  for (size_t i = 0; i < want.size(); ++i) {
    const std::vector<float> w = values(want[i]), v = values(got[i]);
    REQUIRE(w.size() == v.size());
    for (size_t k = 0; k < w.size(); ++k) CHECK(v[k] == doctest::Approx(w[k]).epsilon(1e-5));
  }
}

size_t count(const std::string& ops, const std::string& op) {
  size_t n = 0;
  for (size_t at = ops.find(op); at != std::string::npos; at = ops.find(op, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("pass blocked-layout: activations stay nChw16c from the first convolution to the outputs") {
  if (!backend::onednn_enabled()) return;  // a build without oneDNN has nothing to block for
  ir::Graph g = residual(true);
  const ir::Graph before = g;
  CHECK(run_pass(g, "blocked-layout") == 8);  // 2 convs, the batch norm, relu, add, mul and both sums
  const std::string o = ops(g);
  CHECK(count(o, "to_blocked") == 0);
  CHECK(count(o, "from_blocked") == 1);  // r, an output
  CHECK(o == "conv2d batch_norm_train relu conv2d add reshape mul sum reshape sum reshape from_blocked");
  for (const ir::Node& n : g.nodes)
    if (n.is(backend::OpId::conv2d) || n.is(backend::OpId::batch_norm_train)) CHECK(n.attrs.get<bool>("blocked"));
  CHECK(g.values[g.nodes[0].outputs[0]].type.str() == "f32[2, 1, 6, 6, 16]");
  // The per-channel scale [16, 1, 1] is viewed [1, 1, 1, 1, 16].
  CHECK(g.values[g.nodes[5].outputs[0]].type.str() == "f32[1, 1, 1, 1, 16]");
  // The outputs keep their types.
  for (size_t i = 0; i < 3; ++i) CHECK(g.values[g.outputs[i]].type.str() == before.values[before.outputs[i]].type.str());
  CHECK(g.values[g.outputs[2]].type.str() == "f32[1, 16, 1, 1]");

  check_same_results(before, g, args({{2, 3, 6, 6}, {16, 3, 3, 3}, {16, 16, 3, 3}, {16}, {16}, {16, 1, 1}}));
}

namespace {

// x [2, 3, 6, 6] -> conv 16 -> relu -> max_pool2d 2x2 (y, indices); the
// pool's backward of dy [2, 16, 3, 3] by those indices (unless inference).
// Outputs y's sum over (0, 2, 3) and the backward's dx.
ir::Graph conv_pool(bool inference = false) {
  ir::Graph g;
  g.name = "step";
  const ir::ValueId x = input(g, f32({2, 3, 6, 6}), "x");
  const ir::ValueId w = input(g, f32({16, 3, 3, 3}), "w");
  const ir::ValueId dy = input(g, f32({2, 16, 3, 3}), "dy");
  const ir::ValueId r = add(g, "relu", {add(g, "conv2d", {x, w}, kConv)});
  const backend::Attrs pool{{"kernel", std::vector<int64_t>{2, 2}}, {"stride", std::vector<int64_t>{2, 2}},
                            {"padding", std::vector<int64_t>{0, 0}}};
  const backend::OpDef& max_pool = backend::op("max_pool2d");
  const backend::TensorType rt = g.values[r].type;
  const ir::NodeId p = g.add_node(&max_pool, {r}, pool, max_pool.type_rule(std::span(&rt, 1), pool));
  const ir::ValueId y = g.nodes[p].outputs[0], idx = g.nodes[p].outputs[1];
  backend::Attrs back = pool;
  back.set("input_shape", rt.shape);
  output(g, add(g, "sum", {y}, {{"axes", std::vector<int64_t>{0, 2, 3}}, {"keepdims", false}}));
  if (!inference) output(g, add(g, "max_pool2d_backward", {dy, idx}, back));
  return g;
}

}  // namespace

TEST_CASE("pass blocked-layout: a training graph's max pool and its backward stay blocked") {
  if (!backend::onednn_enabled()) return;
  ir::Graph g = conv_pool();
  const ir::Graph before = g;
  CHECK(run_pass(g, "blocked-layout") == 5);  // conv, relu, the pool, its backward, the sum
  CHECK(ops(g) == "conv2d relu max_pool2d sum reshape to_blocked max_pool2d_backward from_blocked");
  for (const ir::Node& n : g.nodes)
    if (n.is(backend::OpId::max_pool2d) || n.is(backend::OpId::max_pool2d_backward))
      CHECK(n.attrs.get<bool>("blocked"));
  CHECK(g.values[g.nodes[2].outputs[1]].type.str() == "i32[2, 1, 3, 3, 16]");  // the indices, blocked too

  check_same_results(before, g, args({{2, 3, 6, 6}, {16, 3, 3, 3}, {2, 16, 3, 3}}));
}

TEST_CASE("pass blocked-layout: left alone without batch norm or without oneDNN") {
  ir::Graph g = residual(false);
  CHECK(run_pass(g, "blocked-layout") == 0);
  const bool was_on = backend::onednn_enabled();
  backend::set_onednn_enabled(false);
  ir::Graph h = residual(true);
  CHECK(run_pass(h, "blocked-layout") == 0);
  ir::Graph p = conv_pool();
  CHECK(run_pass(p, "blocked-layout") == 0);
  backend::set_onednn_enabled(was_on);
  ir::Graph inference = conv_pool(true);  // fuse-conv-relu-pool's case
  CHECK(run_pass(inference, "blocked-layout") == 0);
}
