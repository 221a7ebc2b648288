// The pass slice-grads-into-concat on graphs built by hand: a sum of
// slice_backwards that tile one axis becomes one concat (in the regions'
// order, with reshapes where the slices dropped the axis), giving the values
// worked out by hand; gaps, overlaps, steps, two axes and a piece read
// elsewhere leave the sum alone.
#include <doctest/doctest.h>

#include "ir/executor.h"
#include "ir/plan.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;
using Ints = std::vector<int64_t>;

namespace {

// slice_backward of g into zeros of `shape`, region start/size, step 1 (or `step`).
ir::ValueId spread(ir::Graph& g, ir::ValueId v, backend::Shape shape, Ints start, Ints size, Ints drop = {},
                   Ints step = {}) {
  if (step.empty()) step.assign(start.size(), 1);
  return add(g, "slice_backward", {v},
             backend::Attrs{{"start", start}, {"step", step}, {"size", size}, {"drop", drop}, {"shape", shape}});
}

backend::Tensor filled(backend::Shape s, float from) {
  backend::Tensor t = backend::Tensor::empty(s, backend::DType::f32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = from + float(i);
  return t;
}

std::vector<float> run_graph(const ir::Graph& g, const std::vector<backend::Tensor>& args) {
  return values(ir::run(g, ir::make_plan(g), args)[0]);
}

}  // namespace

TEST_CASE("pass slice-grads-into-concat: two column blocks, summed out of order, are one concat") {
  ir::Graph g;
  ir::ValueId a = input(g, f32({2, 2}), "a"), b = input(g, f32({2, 3}), "b");
  ir::ValueId sa = spread(g, a, backend::Shape({2, 5}), {0, 0}, {2, 2});
  ir::ValueId sb = spread(g, b, backend::Shape({2, 5}), {0, 2}, {2, 3});
  output(g, add(g, "add", {sb, sa}));
  const ir::Graph plain = g;
  CHECK(run_pass(g, "slice-grads-into-concat") == 1);
  CHECK(ops(g) == "concat");
  CHECK(g.nodes[0].inputs[0] == a);
  CHECK(g.nodes[0].inputs[1] == b);
  CHECK(g.nodes[0].attrs.get<int64_t>("axis") == 1);
  // a = [[0, 1], [2, 3]], b = [[10, 11, 12], [13, 14, 15]]: rows a | b.
  const std::vector<backend::Tensor> args = {filled(backend::Shape({2, 2}), 0), filled(backend::Shape({2, 3}), 10)};
  const std::vector<float> want = {0, 1, 10, 11, 12, 2, 3, 13, 14, 15};
  CHECK(run_graph(g, args) == want);
  CHECK(run_graph(plain, args) == want);
}

TEST_CASE("pass slice-grads-into-concat: time steps x[:, t] of an add tree are one concat of reshapes") {
  // x: [2, 3, 2]; step t's gradient p_t: [2, 2] at x[:, t] (axis 1 dropped).
  ir::Graph g;
  std::vector<ir::ValueId> p, s;
  for (int t = 0; t < 3; ++t) {
    p.push_back(input(g, f32({2, 2}), "p"));
    s.push_back(spread(g, p.back(), backend::Shape({2, 3, 2}), {0, t, 0}, {2, 1, 2}, {1}));
  }
  output(g, add(g, "add", {add(g, "add", {s[2], s[0]}), s[1]}));
  CHECK(run_pass(g, "slice-grads-into-concat") == 1);
  CHECK(ops(g) == "reshape reshape reshape concat");
  CHECK(g.values[g.nodes[3].inputs[0]].type.str() == "f32[2, 1, 2]");
  // p_t[i, j] = 4t + 2i + j lands at x[i, t, j].
  const std::vector<backend::Tensor> args = {filled(backend::Shape({2, 2}), 0), filled(backend::Shape({2, 2}), 4),
                                             filled(backend::Shape({2, 2}), 8)};
  CHECK(run_graph(g, args) == std::vector<float>{0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11});
}

TEST_CASE("pass slice-grads-into-concat: left alone unless the regions tile one axis") {
  const backend::Shape x({2, 5});
  auto count = [](auto build) {
    ir::Graph g;
    ir::ValueId a = input(g, f32({2, 2}), "a"), b = input(g, f32({2, 2}), "b");
    build(g, a, b);
    return run_pass(g, "slice-grads-into-concat");
  };
  // A gap: columns 0-1 and 3-4.
  CHECK(count([&](ir::Graph& g, ir::ValueId a, ir::ValueId b) {
          output(g, add(g, "add", {spread(g, a, x, {0, 0}, {2, 2}), spread(g, b, x, {0, 3}, {2, 2})}));
        }) == 0);
  // Overlap: columns 0-1 and 1-2 (the shape leaves no room for a tiling).
  CHECK(count([&](ir::Graph& g, ir::ValueId a, ir::ValueId b) {
          const backend::Shape y({2, 3});
          output(g, add(g, "add", {spread(g, a, y, {0, 0}, {2, 2}), spread(g, b, y, {0, 1}, {2, 2})}));
        }) == 0);
  // A step of 2: columns 0, 2 and 1, 3.
  CHECK(count([&](ir::Graph& g, ir::ValueId a, ir::ValueId b) {
          const backend::Shape y({2, 4});
          output(g, add(g, "add", {spread(g, a, y, {0, 0}, {2, 2}, {}, {1, 2}),
                                   spread(g, b, y, {0, 1}, {2, 2}, {}, {1, 2})}));
        }) == 0);
  // Two axes: a quarter each of a [4, 4].
  CHECK(count([&](ir::Graph& g, ir::ValueId a, ir::ValueId b) {
          const backend::Shape y({4, 4});
          output(g, add(g, "add", {spread(g, a, y, {0, 0}, {2, 2}), spread(g, b, y, {2, 2}, {2, 2})}));
        }) == 0);
  // A piece the graph also returns.
  CHECK(count([&](ir::Graph& g, ir::ValueId a, ir::ValueId b) {
          const backend::Shape y({2, 4});
          ir::ValueId sa = spread(g, a, y, {0, 0}, {2, 2});
          output(g, add(g, "add", {sa, spread(g, b, y, {0, 2}, {2, 2})}));
          output(g, sa);
        }) == 0);
}
