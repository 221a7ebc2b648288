// Orders: BFS and greedy are valid, keep host calls and random ops in trace
// order, and keep a node that overwrites an input after every other reader
// of it and of its views; greedy lowers the peak where the trace order makes
// every big value live at once, and `auto` takes the smallest plan.
#include <doctest/doctest.h>

#include <cmath>

#include "backend/ops.h"
#include "ir/executor.h"
#include "ir/pass.h"
#include "ir/plan.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;

namespace {

std::vector<size_t> positions(const std::vector<ir::NodeId>& order) {
  std::vector<size_t> at(order.size());
  for (size_t i = 0; i < order.size(); ++i) at[order[i]] = i;
  return at;
}

// Every node once, each after the producers of what it reads.
void check_valid(const ir::Graph& g, const std::vector<ir::NodeId>& order) {
  REQUIRE(order.size() == g.nodes.size());
  std::vector<size_t> at = positions(order);
  std::vector<bool> seen(order.size(), false);
  for (ir::NodeId n : order) {
    CHECK_FALSE(seen[n]);
    seen[n] = true;
  }
  for (ir::NodeId n = 0; n < g.nodes.size(); ++n)
    for (ir::ValueId v : g.nodes[n].inputs)
      if (g.values[v].producer != ir::kNone) CHECK(at[g.values[v].producer] < at[n]);
}

}  // namespace

TEST_CASE("schedule: BFS and greedy are valid orders and keep host calls and random ops in trace order") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2}), "x");
  std::vector<int> printed;
  auto print_node = [&](ir::ValueId v, int tag) {
    ir::NodeId n = g.add_node(nullptr, {v}, {}, {});
    g.nodes[n].set_host(ir::host_call(
        "print", [&printed, tag](std::span<const backend::Tensor>) { printed.push_back(tag); }));
    return n;
  };
  backend::Attrs r{{"shape", backend::Shape({2})}, {"dtype", backend::DType::f32}};
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId b = add(g, "exp", {a});
  ir::NodeId p1 = print_node(b, 1);  // waits for b
  ir::ValueId d1 = add(g, "rand", {}, r);  // ready at once, but draws after p1
  ir::ValueId c = add(g, "neg", {x});
  ir::NodeId p2 = print_node(c, 2);  // ready early, but prints after 1
  output(g, add(g, "add", {c, d1}));
  for (ir::Schedule s : {ir::Schedule::bfs, ir::Schedule::greedy, ir::Schedule::frees_first}) {
    printed.clear();
    std::vector<ir::NodeId> order = ir::schedule(g, s);
    check_valid(g, order);
    std::vector<size_t> at = positions(order);
    CHECK(at[p1] < at[g.values[d1].producer]);
    CHECK(at[g.values[d1].producer] < at[p2]);
    backend::Tensor in = backend::full(backend::Shape({2}), 0.0);
    ir::run(g, ir::make_plan(g, s), std::span(&in, 1));
    CHECK(printed == std::vector<int>{1, 2});
  }
  CHECK(positions(ir::schedule(g, ir::Schedule::bfs))[g.values[c].producer] <
        positions(ir::schedule(g, ir::Schedule::bfs))[g.values[b].producer]);  // level 1 before level 2
}

TEST_CASE("schedule: a node overwriting an input runs after every other reader of it and of its views") {
  // a = exp(x) is read by R = add(t3, reshape(a)) three levels down and by
  // N = neg(a), last in trace order, which overwrites it. Level by level N
  // would run before R; the in-place edge holds it back.
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId t3 = add(g, "exp", {add(g, "exp", {add(g, "exp", {x})})});
  ir::ValueId view = add(g, "reshape", {a}, {{"shape", backend::Shape({4})}});
  ir::ValueId R = add(g, "add", {t3, view});
  ir::ValueId N = add(g, "neg", {a});
  output(g, R);
  output(g, N);
  for (auto& p : ir::default_passes())
    if (std::string(p->name()) == "inplace") p->run(g);
  REQUIRE(overwrites_of(g.nodes[g.values[N].producer]) == std::vector<int32_t>{0});
  for (ir::Schedule s : {ir::Schedule::serial, ir::Schedule::bfs, ir::Schedule::greedy, ir::Schedule::frees_first}) {
    std::vector<ir::NodeId> order = ir::schedule(g, s);
    check_valid(g, order);
    std::vector<size_t> at = positions(order);
    CHECK(at[g.values[R].producer] < at[g.values[N].producer]);
    CHECK(at[g.values[view].producer] < at[g.values[N].producer]);
    backend::Tensor in = backend::full(backend::Shape({4}), 0.0);
    std::vector<backend::Tensor> out = ir::run(g, ir::make_plan(g, s), std::span(&in, 1));
    const double e3 = std::exp(std::exp(1.0));  // exp(exp(exp(0)))
    CHECK(out[0].data<float>()[0] == doctest::Approx(e3 + 1.0));  // R read a before N overwrote it
    CHECK(out[1].data<float>()[0] == doctest::Approx(-1.0));
  }
}

TEST_CASE("schedule: greedy frees each big value before making the next; auto takes its plan") {
  // Trace order: four big values, then one reader of each. In that order
  // (and level by level) all four are live at once; greedy runs each
  // reader right after its value.
  ir::Graph g;
  ir::ValueId x = input(g, f32({1024}), "x");
  std::vector<ir::ValueId> big;
  for (int i = 0; i < 4; ++i) big.push_back(add(g, "exp", {x}));
  for (ir::ValueId v : big) output(g, add(g, "sum", {v}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}}));
  const size_t block = 4096;
  ir::Plan serial = ir::make_plan(g, ir::Schedule::serial), bfs = ir::make_plan(g, ir::Schedule::bfs);
  ir::Plan greedy = ir::make_plan(g, ir::Schedule::greedy), automatic = ir::make_plan(g);
  CHECK(serial.planned_bytes == 4 * block);
  CHECK(serial.lower_bound_bytes == 4 * block);
  CHECK(bfs.planned_bytes == 4 * block);
  CHECK(greedy.planned_bytes == block);
  CHECK(greedy.lower_bound_bytes == block);
  CHECK(automatic.kind == ir::Schedule::greedy);
  CHECK(automatic.planned_bytes == block);
  check_valid(g, greedy.order);
}

TEST_CASE("schedule: frees-first keeps the trace order but for nodes that free more than they take") {
  // Trace order: big = exp(x); small = neg(y) (read at the very end); s =
  // sum(big) frees big. Greedy runs the small allocation before the big one
  // (it takes less); frees-first keeps trace order there, then runs s as
  // soon as big is made, since it frees 4 KB.
  ir::Graph g;
  ir::ValueId x = input(g, f32({1024}), "x"), y = input(g, f32({16}), "y");
  ir::ValueId big = add(g, "exp", {x});
  ir::ValueId small = add(g, "neg", {y});
  ir::ValueId mid = add(g, "exp", {x});  // 4 KB more, read at the end
  ir::ValueId s = add(g, "sum", {big}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  output(g, s);
  output(g, add(g, "add", {mid, add(g, "sum", {small}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}})}));
  std::vector<size_t> greedy = positions(ir::schedule(g, ir::Schedule::greedy));
  std::vector<size_t> first = positions(ir::schedule(g, ir::Schedule::frees_first));
  const ir::NodeId nb = g.values[big].producer, ns = g.values[small].producer, nm = g.values[mid].producer,
                   nsum = g.values[s].producer;
  CHECK(greedy[ns] < greedy[nb]);
  CHECK(first[nb] < first[ns]);
  CHECK(first[nsum] == first[nb] + 1);  // right after big, before small and mid
  CHECK(first[ns] < first[nm]);
}
