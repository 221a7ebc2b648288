// The recompute pass on graphs built by hand with a forward and a backward:
// what it makes again and where, the same results bit for bit, the recipe
// cap that keeps a value every few links of a chain, what it leaves alone,
// and the orders keeping a recomputed node in the backward.
#include <doctest/doctest.h>

#include <algorithm>

#include "backend/ops.h"
#include "ir/executor.h"
#include "ir/plan.h"
#include "ir/schedule.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;

namespace {

ir::ValueId backward(ir::Graph& g, const char* op, std::vector<ir::ValueId> in, backend::Attrs attrs = {}) {
  ir::ValueId v = add(g, op, std::move(in), std::move(attrs));
  g.nodes[g.values[v].producer].phase = ir::Phase::backward;
  return v;
}

ir::ValueId zero(ir::Graph& g) { return constant(g, backend::scalar(0.0, backend::DType::f64, /*weak=*/true)); }

// relu(batch_norm(x)) and its backward, as autodiff writes it: the relu's
// mask reads the relu's output, batch norm's backward reads x and the
// statistics. Outputs: the loss (sum of the relu) and dx.
ir::Graph bn_relu() {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4, 3, 2, 2}), "x");
  ir::ValueId gamma = input(g, f32({3}), "gamma"), beta = input(g, f32({3}), "beta");
  ir::ValueId dy = input(g, f32({4, 3, 2, 2}), "dy");
  const backend::Attrs eps{{"eps", 1e-5}};
  ir::ValueId y = add(g, "batch_norm_train", {x, gamma, beta}, eps);
  const ir::Node& bn = g.nodes[g.values[y].producer];
  ir::ValueId mean = bn.outputs[1], var = bn.outputs[2];
  ir::ValueId r = add(g, "relu", {y});
  output(g, add(g, "sum", {r}, {{"axes", std::vector<int64_t>{0, 1, 2, 3}}, {"keepdims", false}}));
  ir::ValueId mask = backward(g, "gt", {r, zero(g)});
  ir::ValueId d = backward(g, "where", {mask, dy, zero(g)});
  output(g, backward(g, "batch_norm_backward", {d, x, gamma, mean, var}, eps));
  return g;
}

std::vector<backend::Tensor> run(const ir::Graph& g, ir::Schedule s = ir::Schedule::serial) {
  backend::manual_seed(7);
  std::vector<backend::Tensor> in = {backend::randn(backend::Shape({4, 3, 2, 2})),
                                     backend::add(backend::rand(backend::Shape({3})), backend::scalar(0.5, backend::DType::f32)),
                                     backend::randn(backend::Shape({3})), backend::randn(backend::Shape({4, 3, 2, 2}))};
  return ir::run(g, ir::make_plan(g, s), in);
}

}  // namespace

TEST_CASE("pass recompute: relu(batch_norm(x)) is made again for its backward, bit for bit") {
  ir::Graph g = bn_relu();
  const ir::Graph before = g;
  const ir::ValueId r = g.nodes[1].outputs[0];
  CHECK(run_pass(g, "recompute") == 1);  // the relu's output; y is read in the forward alone
  CHECK(ops(g) == "batch_norm_train relu sum batch_norm_apply relu gt where batch_norm_backward");
  // The copies, in the backward, read x and the saved statistics; the mask
  // reads the copy, and nothing after the forward reads the relu's output.
  const ir::Node &apply = g.nodes[3], &again = g.nodes[4], &mask = g.nodes[5];
  CHECK((apply.recomputed && again.recomputed && !mask.recomputed));
  CHECK(apply.phase == ir::Phase::backward);
  CHECK(apply.inputs == std::vector<ir::ValueId>{0, 1, 2, g.nodes[0].outputs[1], g.nodes[0].outputs[2]});
  CHECK(again.inputs[0] == apply.outputs[0]);
  CHECK(mask.inputs[0] == again.outputs[0]);
  for (size_t i = 3; i < g.nodes.size(); ++i)
    CHECK(std::find(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end(), r) == g.nodes[i].inputs.end());

  std::vector<backend::Tensor> want = run(before), got = run(g);
  REQUIRE(got.size() == 2);
  for (size_t i = 0; i < 2; ++i) CHECK(nntest::values(got[i]) == nntest::values(want[i]));
}

TEST_CASE("pass recompute: every order keeps the recomputed nodes in the backward") {
  ir::Graph g = bn_relu();
  run_pass(g, "recompute");
  for (ir::Schedule s : {ir::Schedule::serial, ir::Schedule::bfs, ir::Schedule::greedy, ir::Schedule::frees_first}) {
    CAPTURE(ir::schedule_name(s));
    std::vector<ir::NodeId> order = ir::schedule(g, s);
    auto at = [&](ir::NodeId n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
    // BFS would otherwise run batch_norm_apply right after batch_norm_train.
    CHECK(at(3) > at(2));
    CHECK(nntest::values(run(g, s)[1]) == nntest::values(run(g)[1]));
  }
}

TEST_CASE("pass recompute: a chain is made again back to a kept value, at most 16 nodes a value") {
  // r0 = relu(c0 + x), r_k = relu(c_k + r_{k-1}): r_k's recipe has 2k + 2
  // nodes, so r0 .. r7 are made again, r8 (18) is kept, and r9 and r10
  // start again from it (2 and 4). The backward reads them last to first.
  ir::Graph g;
  ir::ValueId prev = input(g, f32({8}), "x");
  std::vector<ir::ValueId> r;
  for (int k = 0; k <= 10; ++k) {
    ir::ValueId c = input(g, f32({8}), "c");
    prev = add(g, "relu", {add(g, "add", {c, prev})});
    r.push_back(prev);
  }
  ir::ValueId gin = input(g, f32({8}), "g");
  for (int k = 10; k >= 0; --k) output(g, backward(g, "mul", {r[size_t(k)], gin}));
  CHECK(run_pass(g, "recompute") == 10);
  size_t made = 0;
  for (const ir::Node& n : g.nodes) made += n.recomputed;
  CHECK(made == 4 + 2 + 16 + 14 + 12 + 10 + 8 + 6 + 4 + 2);
  // The backward's readers: r8's reads the forward's r8; r7's a copy.
  auto reader_of = [&](int k) -> const ir::Node& { return g.nodes[g.values[g.outputs[size_t(10 - k)]].producer]; };
  CHECK(reader_of(8).inputs[0] == g.nodes[2 * 8 + 1].outputs[0]);
  CHECK(g.nodes[g.values[reader_of(7).inputs[0]].producer].recomputed);
}

TEST_CASE("pass recompute: leaves costly ops, what a costly op alone makes, outputs and draws") {
  ir::Graph g;
  ir::ValueId a = input(g, f32({4, 4}), "a"), gin = input(g, f32({4, 4}), "g");
  ir::ValueId m = add(g, "matmul", {a, a});             // costly: kept for its backward reader
  ir::ValueId h = add(g, "relu", {add(g, "matmul", {a, m})});  // needs a product nobody keeps
  ir::ValueId o = add(g, "exp", {a});                    // an output: kept anyway
  output(g, o);
  backend::Attrs r{{"shape", backend::Shape({4, 4})}, {"dtype", backend::DType::f32}};
  ir::ValueId keep = add(g, "gt", {add(g, "rand", {}, r), zero(g)});  // a draw: never made again
  for (ir::ValueId v : {m, h, o, keep}) output(g, backward(g, "mul", {v, gin}));
  const std::string was = ops(g);
  CHECK(run_pass(g, "recompute") == 0);
  CHECK(ops(g) == was);
}
