// Gradient buckets (SPEC §14): how tensors fall into buckets, the pass that
// turns data_parallel's one all_reduce a gradient into bucketed start/wait
// pairs in the order backward made the gradients, the schedule that starts
// a bucket early and waits for it late, and a run (one rank: the values
// come back as they went in).
#include <doctest/doctest.h>

#include <cmath>

#include "backend/comm/buckets.h"
#include "backend/ops.h"
#include "ir/executor.h"
#include "ir/plan.h"
#include "ir/schedule.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;

namespace {

backend::TensorType typed(backend::DType d, int64_t n) { return {d, backend::Shape({n}), backend::cpu_device()}; }

ir::ValueId grad_all_reduce(ir::Graph& g, ir::ValueId v, int64_t cap) {
  return add(g, "all_reduce", {v}, {{"op", std::string("mean")}, {"bucket_bytes", cap}});
}

}  // namespace

TEST_CASE("buckets: filled in order up to the cap, the first up to 1 MB, one dtype each") {
  using backend::DType;
  // 400 B; 1.2 MB (past the first bucket's 1 MB); 40 B (joins it: 2 MB cap);
  // f64 and f32 again (a dtype change starts a bucket).
  std::vector<backend::TensorType> t{typed(DType::f32, 100), typed(DType::f32, 300000), typed(DType::f32, 10),
                                     typed(DType::f64, 10), typed(DType::f32, 10)};
  CHECK(backend::comm::plan_buckets(t, 2 << 20) == std::vector<std::vector<size_t>>{{0}, {1, 2}, {3}, {4}});
  // A cap below the first bucket's: every bucket keeps to it; a tensor
  // larger than the cap has one of its own.
  CHECK(backend::comm::plan_buckets(t, 1000) == std::vector<std::vector<size_t>>{{0}, {1}, {2}, {3}, {4}});
  CHECK(backend::comm::plan_buckets({}, 1000).empty());
}

TEST_CASE("pass bucket-all-reduce: gradients in the order backward made them, one start and one wait a bucket") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId a = add(g, "exp", {x});  // made first
  ir::ValueId b = add(g, "neg", {x});
  // data_parallel reduces them in param order: b, then a.
  ir::ValueId rb = grad_all_reduce(g, b, 1024), ra = grad_all_reduce(g, a, 1024);
  output(g, add(g, "relu", {rb}));
  output(g, add(g, "relu", {ra}));
  CHECK(run_pass(g, "bucket-all-reduce") == 1);
  CHECK(ops(g) == "exp neg all_reduce_start all_reduce_wait relu relu");
  CHECK(g.nodes[2].inputs == std::vector<ir::ValueId>{a, b});
  CHECK(g.nodes[2].attrs.get<std::string>("op") == "mean");
  CHECK(g.values[g.nodes[2].outputs[0]].type.shape == backend::Shape({8}));
  // The wait gives back the all-reduces' own values, which the relus read.
  CHECK(g.nodes[3].outputs == std::vector<ir::ValueId>{ra, rb});

  // One rank: the mean of one is the value itself.
  ir::Plan p = ir::make_plan(g, ir::Schedule::serial, ir::MemoryMode::arena);
  backend::Tensor in = backend::from_doubles({-1, 0, 0.5, 2}, backend::Shape({4}), backend::DType::f32);
  std::vector<backend::Tensor> out = ir::run(g, p, std::span(&in, 1));
  CHECK(out[0].data<float>()[0] == 1.0f);
  CHECK(out[0].data<float>()[3] == 0.0f);
  CHECK(out[1].data<float>()[2] == doctest::Approx(std::exp(0.5)));
}

TEST_CASE("pass bucket-all-reduce: a small cap gives each gradient its bucket; the starts come first") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId a = add(g, "exp", {x}), b = add(g, "neg", {x});
  output(g, grad_all_reduce(g, b, 16));
  output(g, grad_all_reduce(g, a, 16));
  CHECK(run_pass(g, "bucket-all-reduce") == 2);
  CHECK(ops(g) == "exp neg all_reduce_start all_reduce_start all_reduce_wait all_reduce_wait");
  CHECK(g.nodes[2].inputs == std::vector<ir::ValueId>{a});
  CHECK(g.nodes[3].inputs == std::vector<ir::ValueId>{b});
  // Other all_reduces (a user's, without bucket_bytes) stay as they are.
  ir::Graph h;
  output(h, add(h, "all_reduce", {input(h, f32({4}), "x")}));
  CHECK(run_pass(h, "bucket-all-reduce") == 0);
}

TEST_CASE("pass bucket-all-reduce: two optimizer steps in one graph are bucketed apart") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  auto step_all_reduce = [&](ir::ValueId v, int64_t step) {
    return add(g, "all_reduce", {v}, {{"op", std::string("mean")}, {"bucket_bytes", int64_t(1024)}, {"step", step}});
  };
  ir::ValueId r1 = step_all_reduce(add(g, "exp", {x}), 1);
  // The second step's gradient depends on the first step's result.
  output(g, step_all_reduce(add(g, "neg", {r1}), 2));
  CHECK(run_pass(g, "bucket-all-reduce") == 2);
  CHECK(ops(g) == "exp all_reduce_start all_reduce_wait neg all_reduce_start all_reduce_wait");
}

TEST_CASE("schedule: a bucket starts right after its last gradient and is waited for right before its first reader") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId a = add(g, "exp", {x});                      // 0
  ir::ValueId c = add(g, "neg", {x});                      // 1: more backward
  ir::ValueId d = add(g, "abs", {c});                      // 2
  ir::ValueId r = grad_all_reduce(g, a, 1024);             // 3
  output(g, add(g, "add", {add(g, "relu", {r}), d}));      // 4, 5
  CHECK(run_pass(g, "bucket-all-reduce") == 1);
  REQUIRE(ops(g) == "exp neg abs all_reduce_start all_reduce_wait relu add");
  for (ir::Schedule s : {ir::Schedule::serial, ir::Schedule::bfs, ir::Schedule::greedy}) {
    const std::vector<ir::NodeId> order = ir::schedule(g, s);
    std::vector<size_t> at(order.size());
    for (size_t i = 0; i < order.size(); ++i) at[order[i]] = i;
    CHECK(at[3] == at[0] + 1);  // the start right after exp
    CHECK(at[4] + 1 == at[5]);  // the wait right before relu
    CHECK(at[4] > at[1]);       // neg runs while the bucket travels
    CHECK(at[4] > at[2]);
  }
}

TEST_CASE("memory plan: gradients are written where their bucket holds them, unless read after it starts") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId a = add(g, "exp", {x}), b = add(g, "neg", {x}), c = add(g, "abs", {x});
  ir::ValueId ra = grad_all_reduce(g, a, 1024), rb = grad_all_reduce(g, b, 1024), rc = grad_all_reduce(g, c, 1024);
  output(g, add(g, "add", {ra, rb}));
  output(g, add(g, "mul", {c, rc}));  // c is read again after the all-reduce
  CHECK(run_pass(g, "bucket-all-reduce") == 1);
  REQUIRE(ops(g) == "exp neg abs all_reduce_start all_reduce_wait add mul");
  CHECK(g.nodes[3].inputs == std::vector<ir::ValueId>{a, b, c});
  for (ir::Schedule s : {ir::Schedule::serial, ir::Schedule::greedy}) {
    CAPTURE(int(s));
    ir::Plan p = ir::make_plan(g, s, ir::MemoryMode::arena);
    const ir::MemoryPlan& m = p.memory_plan;
    const uint32_t bucket = m.buffers.of_value[g.nodes[3].outputs[0]];
    auto buffer = [&](ir::ValueId v) { return m.buffers.of_value[v]; };
    // a and b fill the bucket's first 32 bytes, in order; c keeps its own
    // memory, since the mul reads it where the all-reduce has overwritten
    // the bucket, and the start copies it in.
    CHECK(m.inside[buffer(a)] == bucket);
    CHECK(m.inside[buffer(b)] == bucket);
    CHECK(m.inside[buffer(c)] == ir::kNone);
    CHECK(m.offset[buffer(a)] == m.offset[bucket]);
    CHECK(m.offset[buffer(b)] == m.offset[bucket] + 16);
    CHECK(m.arena_of[buffer(a)] == m.arena_of[bucket]);
    // c's 16 bytes lie outside the bucket's 48 at every step they share.
    CHECK((m.offset[buffer(c)] + 16 <= m.offset[bucket] || m.offset[buffer(c)] >= m.offset[bucket] + 48));
    // The bucket's memory is taken from where exp or neg, whichever runs
    // first, writes its gradient.
    std::vector<uint32_t> at(p.order.size());
    for (uint32_t i = 0; i < p.order.size(); ++i) at[p.order[i]] = i;
    CHECK(m.begin[bucket] == std::min(at[0], at[1]));
    // One rank: each mean is the value itself.
    backend::Tensor in = backend::from_doubles({-1, 0, 0.5, 2}, backend::Shape({4}), backend::DType::f32);
    std::vector<backend::Tensor> out = ir::run(g, p, std::span(&in, 1));
    CHECK(out[0].data<float>()[2] == doctest::Approx(std::exp(0.5) - 0.5));
    CHECK(out[1].data<float>()[0] == 1.0f);  // |-1| * |-1|
    CHECK(out[1].data<float>()[3] == 4.0f);
  }
}
