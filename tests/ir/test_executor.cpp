// The executor and its plan on graphs built by hand: with the pool, values
// die and go back after their last reader; a dying intermediate is
// overwritten in place but an input, an output or a param never is (unless
// it is the param's own update); BFS orders are valid, Ctrl-C stops between
// nodes. The arena runs are in test_arena_run.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "backend/dispatch.h"
#include "backend/interrupt.h"
#include "backend/ops.h"
#include "backend/profiler.h"
#include "ir/executor.h"
#include "ir/pass.h"
#include "ir/plan.h"
#include "graph_builder.h"

using namespace nn;
using nntest::add;
using nntest::f32;
using nntest::values;

namespace {

std::vector<int> overwrites(const ir::Graph& g) {
  std::vector<int> r;
  for (const ir::Node& n : g.nodes) r.push_back(n.overwritten_input(0));
  return r;
}

}  // namespace

TEST_CASE("executor: a chain recycles its values: the peak is two blocks, not the chain") {
  ir::Graph g;
  ir::ValueId x = g.add_value(f32({1024}), ir::Role::input, "x");
  g.inputs.push_back(x);
  ir::ValueId v = x;
  for (int i = 0; i < 50; ++i) v = add(g, i % 2 ? "neg" : "add", i % 2 ? std::vector{v} : std::vector{v, x});
  g.outputs.push_back(v);
  g.values[v].output = true;
  ir::Plan p = ir::make_plan(g, ir::Schedule::serial, ir::MemoryMode::pool);
  const size_t block = backend::CachingPool::size_class(4096);
  CHECK(p.planned_bytes <= 2 * block);

  backend::Tensor in = backend::full(backend::Shape({1024}), 1.0);
  backend::CachingPool& pool = backend::cpu_device()->pool();
  size_t before = pool.stats().current, enclosing = pool.begin_window();
  std::vector<backend::Tensor> out = ir::run(g, p, std::span(&in, 1));
  size_t peak = pool.stats().window_peak - before;
  pool.end_window(enclosing);
  CHECK(peak <= 2 * block);
  // Worked out by hand: x + x = 2, -2, -2 + 1 = -1, 1, 2, -2, ... period 4.
  double want = 1;
  for (int i = 0; i < 50; ++i) want = i % 2 ? -want : want + 1.0;
  CHECK(want == -2.0);
  CHECK(values(out[0])[7] == float(want));
  CHECK(values(in)[0] == 1.0f);  // the input is never written
}

TEST_CASE("executor: in place only into a dying intermediate, never into an input or an output") {
  ir::Graph g;
  ir::ValueId x = g.add_value(f32({4}), ir::Role::input, "x");
  g.inputs.push_back(x);
  ir::ValueId a = add(g, "exp", {x});  // x is the caller's: a new block
  ir::ValueId b = add(g, "neg", {a});  // a dies here: b may take its block
  ir::ValueId c = add(g, "exp", {b});  // b is an output: c may not
  g.outputs = {b, c};
  g.values[b].output = g.values[c].output = true;
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g) == std::vector<int>{-1, 0, -1});
  ir::Plan p = ir::make_plan(g, ir::Schedule::serial, ir::MemoryMode::pool);
  CHECK(p.block_of_value[b] == p.block_of_value[a]);
  CHECK(p.block_of_value[c] != p.block_of_value[b]);

  backend::Tensor in = backend::full(backend::Shape({4}), 1.0);
  std::vector<backend::Tensor> out = ir::run(g, p, std::span(&in, 1));
  CHECK(values(in) == std::vector<float>(4, 1.0f));
  CHECK(values(out[0])[0] == doctest::Approx(-std::exp(1.0)));
  CHECK(values(out[1])[0] == doctest::Approx(std::exp(-std::exp(1.0))));
}

TEST_CASE("executor: a param's update is written into the param's own memory; a state update is applied") {
  ir::Graph g;
  backend::Tensor w = backend::full(backend::Shape({3}), 2.0);
  ir::ValueId x = g.add_value(f32({3}), ir::Role::input, "x");
  ir::ValueId pw = g.add_value(f32({3}), ir::Role::param);
  g.values[pw].captured = w;
  g.inputs.push_back(x);
  ir::ValueId y = add(g, "mul", {x, pw});  // reads w first
  ir::ValueId w2 = add(g, "sub", {pw, y});  // w - x * w: w's last reader
  g.updates.push_back({pw, w2});
  g.outputs.push_back(y);
  g.values[y].output = true;
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g) == std::vector<int>{-1, 0});  // w2 into pw
  ir::Plan p = ir::make_plan(g);

  const void* memory = w.raw_data();
  backend::Tensor in = backend::full(backend::Shape({3}), 0.5);
  std::vector<backend::Tensor> out = ir::run(g, p, std::span(&in, 1));
  CHECK(values(out[0]) == std::vector<float>(3, 1.0f));  // 0.5 * 2
  CHECK(values(w) == std::vector<float>(3, 1.0f));       // 2 - 1
  CHECK(w.raw_data() == memory);
  ir::run(g, p, std::span(&in, 1));  // replayed: 1 - 0.5 * 1
  CHECK(values(w) == std::vector<float>(3, 0.5f));
}

TEST_CASE("schedule: BFS is a valid order and keeps host calls in trace order") {
  ir::Graph g;
  ir::ValueId x = g.add_value(f32({2}), ir::Role::input, "x");
  g.inputs.push_back(x);
  std::vector<int> printed;
  auto print_node = [&](ir::ValueId v, int tag) {
    ir::NodeId n = g.add_node(nullptr, {v}, {}, {});
    g.nodes[n].set_host(ir::host_call(
        "print", [&printed, tag](std::span<const backend::Tensor>) { printed.push_back(tag); }));
  };
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId b = add(g, "exp", {a});
  print_node(b, 1);  // waits for b
  ir::ValueId c = add(g, "neg", {x});
  print_node(c, 2);  // ready early, but prints after 1
  g.outputs.push_back(c);
  g.values[c].output = true;
  std::vector<ir::NodeId> order = ir::schedule(g, ir::Schedule::bfs);
  REQUIRE(order.size() == g.nodes.size());
  std::vector<size_t> at(order.size());
  for (size_t i = 0; i < order.size(); ++i) at[order[i]] = i;
  for (ir::NodeId n = 0; n < g.nodes.size(); ++n)
    for (ir::ValueId v : g.nodes[n].inputs)
      if (g.values[v].producer != ir::kNone) CHECK(at[g.values[v].producer] < at[n]);
  CHECK(at[3] < at[1]);  // neg (level 1) before the second exp (level 2)
  backend::Tensor in = backend::full(backend::Shape({2}), 0.0);
  ir::run(g, ir::make_plan(g, ir::Schedule::bfs), std::span(&in, 1));
  CHECK(printed == std::vector<int>{1, 2});
}

TEST_CASE("executor: Ctrl-C stops a run between nodes") {
  ir::Graph g;
  ir::ValueId x = g.add_value(f32({2}), ir::Role::input, "x");
  g.inputs.push_back(x);
  ir::ValueId y = add(g, "exp", {x});
  g.outputs.push_back(y);
  g.values[y].output = true;
  backend::Tensor in = backend::full(backend::Shape({2}), 0.0);
  backend::request_interrupt();
  CHECK_THROWS_WITH_AS(ir::run(g, ir::make_plan(g, ir::Schedule::serial), std::span(&in, 1)), "interrupted",
                       ir::RunError);
  CHECK_FALSE(backend::take_interrupt());  // taken by the executor
}

TEST_CASE("executor: with a profiler on, each node run is recorded once, in order, with its op and phase") {
  ir::Graph g;
  ir::ValueId x = g.add_value(f32({3}), ir::Role::input, "x");
  g.inputs.push_back(x);
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId b = add(g, "mul", {a, x});
  ir::ValueId c = add(g, "neg", {b});
  g.nodes[1].phase = ir::Phase::backward;
  g.nodes[2].phase = ir::Phase::optimizer;
  g.outputs.push_back(c);
  g.values[c].output = true;
  const ir::Plan p = ir::make_plan(g, ir::Schedule::serial);
  backend::Tensor in = backend::full(backend::Shape({3}), 2.0);
  backend::Profiler prof;
  backend::Profiler::set_active(&prof);
  std::vector<backend::Tensor> out = ir::run(g, p, std::span(&in, 1));
  out = ir::run(g, p, std::span(&in, 1));
  backend::Profiler::set_active(nullptr);
  CHECK(values(out[0])[0] == doctest::Approx(-2.0 * std::exp(2.0)));
  const std::vector<std::pair<std::string, std::string>> want{{"exp", "forward"}, {"mul", "backward"},
                                                               {"neg", "optimizer"}};
  REQUIRE(prof.events().size() == 2 * want.size());
  for (size_t i = 0; i < prof.events().size(); ++i) {
    const backend::ProfileEvent& e = prof.events()[i];
    CHECK(e.name == want[i % 3].first);
    CHECK(std::string(e.category) == want[i % 3].second);
    CHECK(e.end_ns >= e.start_ns);
    if (i > 0) CHECK(e.start_ns >= prof.events()[i - 1].end_ns);
  }
}

TEST_CASE("executor: an optimizer's chain of updates runs in the state's own memory") {
  // buf = buf * 0.9 + g; w = w - buf: both links of buf's chain write into
  // buf, and w's update into w; nothing is copied back at the end.
  ir::Graph g;
  backend::Tensor w = backend::full(backend::Shape({3}), 1.0), buf = backend::full(backend::Shape({3}), 2.0);
  ir::ValueId x = g.add_value(f32({3}), ir::Role::input, "g");
  g.inputs.push_back(x);
  ir::ValueId pw = g.add_value(f32({3}), ir::Role::param), sb = g.add_value(f32({3}), ir::Role::state);
  g.values[pw].captured = w;
  g.values[sb].captured = buf;
  ir::ValueId m = g.add_value(backend::TensorType{backend::DType::f32, backend::Shape(), backend::cpu_device()},
                              ir::Role::constant);
  g.values[m].captured = backend::full(backend::Shape(), 0.9);
  ir::ValueId b1 = add(g, "mul", {sb, m});
  ir::ValueId b2 = add(g, "add", {b1, x});
  ir::ValueId w2 = add(g, "sub", {pw, b2});
  g.updates = {{pw, w2}, {sb, b2}};
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g) == std::vector<int>{0, 0, 0});  // b1 into sb, b2 into b1, w2 into pw
  ir::Plan p = ir::make_plan(g);
  CHECK(p.planned_bytes == 0);
  CHECK(p.memory_plan.buffers.of_value[b2] == p.memory_plan.buffers.of_value[sb]);

  const void *wm = w.raw_data(), *bm = buf.raw_data();
  backend::Tensor in = backend::full(backend::Shape({3}), 0.2);
  ir::run(g, p, std::span(&in, 1));
  CHECK(values(buf)[0] == doctest::Approx(2.0));  // 2 * 0.9 + 0.2
  CHECK(values(w)[0] == doctest::Approx(-1.0));   // 1 - 2
  CHECK(w.raw_data() == wm);
  CHECK(buf.raw_data() == bm);
}
