// The static memory plan: best fit over free ranges, offsets and sizes of
// small graphs worked out by hand, the lower bound, what shares memory
// (views, in-place outputs) and what stays out of the arena (outputs,
// states' new values, what an output is a view of); on random graphs, no two
// buffers live at once overlap, lower bound <= arena <= sum of sizes, and
// each step's scratch is the largest range left free.
#include <doctest/doctest.h>

#include <algorithm>

#include "backend/ops.h"
#include "ir/memory_plan.h"
#include "ir/pass.h"
#include "ir/plan.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;

namespace {

std::vector<ir::NodeId> trace_order(const ir::Graph& g) { return ir::schedule(g, ir::Schedule::serial); }

size_t offset_of(const ir::MemoryPlan& m, ir::ValueId v) { return m.offset[m.buffers.of_value[v]]; }

}  // namespace

TEST_CASE("best fit: the smallest free range that holds a request, else the top; freed ranges merge") {
  ir::BestFitArena a;
  CHECK(a.allocate(100) == 0);
  CHECK(a.allocate(50) == 100);
  CHECK(a.allocate(200) == 150);
  CHECK(a.allocate(30) == 350);  // top 380
  a.release(0, 100);             // free [0, 100)
  a.release(150, 200);           // free [150, 350)
  CHECK(a.allocate(40) == 0);    // both hold 40: the smaller one, [0, 100)
  CHECK(a.allocate(120) == 150); // only [150, 350) holds 120
  CHECK(a.allocate(90) == 380);  // [40, 100) and [270, 350) are too small: the top
  CHECK(a.high_water() == 470);
  a.release(100, 50);             // [40, 100) + [100, 150): one range of 110
  CHECK(a.allocate(110) == 40);
  a.release(380, 90);  // at the top: the top comes down to 380
  CHECK(a.allocate(100) == 380);  // [270, 350) holds only 80
  CHECK(a.high_water() == 480);
  a.release(380, 100);  // the top: down to 380
  a.release(350, 30);   // merges with [270, 350) and reaches the top: down to 270
  CHECK(a.allocate(200) == 270);
  CHECK(a.high_water() == 480);
  CHECK(a.allocate(0) == 0);  // nothing asked, nothing taken
}

TEST_CASE("memory plan: offsets of a hand-worked graph; a request takes the smaller of two holes") {
  // Sizes: x48 is 192 bytes, x16 64 bytes (three 64-byte units).
  ir::Graph g;
  ir::ValueId x48 = input(g, f32({48}), "x48"), x16 = input(g, f32({16}), "x16");
  ir::ValueId A = add(g, "exp", {x48});  // s0: [0, 192)
  ir::ValueId K = add(g, "exp", {x16});  // s1: [192, 256)
  ir::ValueId S = add(g, "exp", {x16});  // s2: [256, 320)
  ir::ValueId M = add(g, "exp", {x16});  // s3: [320, 384)
  output(g, add(g, "exp", {A}));         // s4: A is free after it: hole [0, 192)
  output(g, add(g, "exp", {S}));         // s5: hole [256, 320)
  ir::ValueId N = add(g, "exp", {x16});  // s6: 64 bytes: the 64-byte hole, not the first
  output(g, add(g, "add", {K, N}));
  output(g, add(g, "exp", {M}));
  ir::MemoryPlan m = ir::plan_memory(g, ir::find_buffers(g), trace_order(g));
  CHECK(offset_of(m, A) == 0);
  CHECK(offset_of(m, K) == 192);
  CHECK(offset_of(m, S) == 256);
  CHECK(offset_of(m, M) == 320);
  CHECK(offset_of(m, N) == 256);
  CHECK(m.arena_bytes == 384);
  CHECK(m.lower_bound_bytes == 384);  // A, K, S, M all live at s3
  REQUIRE(m.arenas.size() == 1);
  CHECK(m.arenas[0].device == backend::cpu_device());
  // Outputs are not in the arena: each has a block of its own.
  for (ir::ValueId v : g.outputs) CHECK(m.buffers.of(v).kind == ir::BufferKind::own);
  // The picture: N reuses S's region; A's and K's regions differ.
  CHECK(m.block_of_value[N] == m.block_of_value[S]);
  CHECK(m.block_of_value[A] != m.block_of_value[K]);
  CHECK(m.block_of_value[x16] == ir::kNone);
}

TEST_CASE("memory plan: the lower bound by hand; best fit in order fragments it, largest first does not") {
  ir::Graph g;
  ir::ValueId x16 = input(g, f32({16}), "x16"), x32 = input(g, f32({32}), "x32");
  ir::ValueId A = add(g, "exp", {x16});  // s0, 64 bytes, read at s2
  ir::ValueId B = add(g, "exp", {x16});  // s1, 64 bytes, read at s5
  output(g, add(g, "exp", {A}));         // s2
  ir::ValueId C = add(g, "exp", {x32});  // s3, 128 bytes, read at s4
  output(g, add(g, "exp", {C}));
  output(g, add(g, "exp", {B}));
  // In order, best fit puts A at 0 and B at 64; A's 64 bytes, free from s2,
  // cannot hold C: it goes to 128, and the arena needs 256 bytes.
  ir::BestFitArena in_order;
  CHECK(in_order.allocate(64) == 0);
  CHECK(in_order.allocate(64) == 64);
  in_order.release(0, 64);
  CHECK(in_order.allocate(128) == 128);
  CHECK(in_order.high_water() == 256);
  // Largest first: C at 0, B (live with C) above it, A (not live with C) at
  // 0: the arena is the lower bound.
  ir::MemoryPlan m = ir::plan_memory(g, ir::find_buffers(g), trace_order(g));
  // Live at once: A + B = 128 bytes (s0 .. s2), B + C = 192 (s3 .. s4), B (s5).
  CHECK(m.lower_bound_bytes == 192);
  CHECK(m.arena_bytes == 192);
  REQUIRE(m.arenas.size() == 1);
  CHECK(m.arenas[0].largest_first);
  CHECK(offset_of(m, C) == 0);
  CHECK(offset_of(m, B) == 128);
  CHECK(offset_of(m, A) == 0);
}

TEST_CASE("largest first: larger buffers first, of equal sizes the longest-lived, each in a gap it fits") {
  // Bytes, and the steps of the live range.
  std::vector<ir::LiveRange> r{{128, 0, 9},   // 0: second: live with 3, above it
                               {64, 0, 2},    // 1: last: live with 0 and 2 only: the gap under 0
                               {64, 0, 9},    // 2: third (the longest 64): above 3 and 0
                               {192, 3, 5},   // 3: first: 0
                               {64, 6, 9}};   // 4: fourth: live with 0 and 2 only: the gap under 0
  std::vector<size_t> off;
  CHECK(ir::place_largest_first(r, off) == 384);
  CHECK(off == std::vector<size_t>{192, 0, 320, 0, 0});
}

TEST_CASE("largest first by bytes times steps: long-lived buffers at the bottom") {
  // A CNN's step in small: a large short-lived activation (0), the pooled
  // values and indices kept for the backward (1, 2), smaller short-lived
  // ones (3, 4, 5) and a large gradient at the end (6). Live at step 1:
  // 0 + 1 + 2 = 384 bytes, the lower bound.
  std::vector<ir::LiveRange> r{{256, 0, 1}, {64, 1, 9}, {64, 1, 10}, {128, 2, 3},
                               {128, 7, 8}, {64, 8, 10}, {256, 10, 11}};
  std::vector<size_t> off;
  // By bytes, 0 goes to the bottom and the long-lived pair above it.
  CHECK(ir::place_largest_first(r, off) == 448);
  // By area the order is 2, 1, 0, 6, 3, 4, 5: 2 at 0, 1 above it, 0 above
  // both; 6 above 2 (1 has died), 3 and 4 above 1; 5 above 6.
  CHECK(ir::place_largest_first(r, off, ir::Largest::bytes_times_steps) == 384);
  CHECK(off == std::vector<size_t>{128, 64, 0, 128, 128, 320, 64});
}

TEST_CASE("memory plan: views share their root's range, an in-place output its input's") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2, 8}), "x");
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId v = add(g, "reshape", {a}, {{"shape", backend::Shape({16})}});
  ir::ValueId b = add(g, "neg", {v});    // overwrites v, and so a
  ir::ValueId c = add(g, "exp", {x});    // a's range is still b's: c goes above
  const backend::Attrs all{{"axes", std::vector<int64_t>{0}}, {"keepdims", false}};
  output(g, add(g, "sum", {b}, all));    // outputs: not in the arena
  output(g, add(g, "sum", {c}, {{"axes", std::vector<int64_t>{0, 1}}, {"keepdims", false}}));
  nntest::run_pass(g, "inplace");
  REQUIRE(overwrites_of(g.nodes[g.values[b].producer]) == std::vector<int32_t>{0});
  ir::MemoryPlan m = ir::plan_memory(g, ir::find_buffers(g), trace_order(g));
  CHECK(m.buffers.of_value[v] == m.buffers.of_value[a]);
  CHECK(m.buffers.of_value[b] == m.buffers.of_value[a]);
  CHECK(offset_of(m, a) == 0);
  CHECK(offset_of(m, c) == 64);
  CHECK(m.arena_bytes == 128);
  CHECK(m.lower_bound_bytes == 128);
  CHECK(m.block_of_value[b] == m.block_of_value[a]);
}

TEST_CASE("memory plan: outputs, states' new values and what an output views stay out of the arena") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId st = g.add_value(f32({4}), ir::Role::state);
  g.values[st].captured = backend::zeros(backend::Shape({4}));
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId viewed = add(g, "reshape", {a}, {{"shape", backend::Shape({2, 2})}});  // an output views a
  ir::ValueId n = add(g, "neg", {x});
  ir::ValueId u = add(g, "add", {n, x});  // the state's new value, not written in place
  ir::ValueId t = add(g, "exp", {x});     // only lives during the run
  output(g, viewed);
  output(g, add(g, "exp", {t}));
  g.updates.push_back({st, u});
  ir::MemoryPlan m = ir::plan_memory(g, ir::find_buffers(g), trace_order(g));
  CHECK(m.buffers.of(a).kind == ir::BufferKind::own);
  CHECK(m.buffers.of(u).kind == ir::BufferKind::own);
  CHECK(m.buffers.of(n).kind == ir::BufferKind::arena);
  CHECK(m.buffers.of(t).kind == ir::BufferKind::arena);
  CHECK(m.buffers.of(x).kind == ir::BufferKind::bound);
  CHECK(m.buffers.of(st).kind == ir::BufferKind::bound);
  CHECK(m.arena_bytes == 64);  // n dies at u, before t is made: one range
  CHECK(offset_of(m, t) == offset_of(m, n));
}

TEST_CASE("memory plan: a node with two outputs gets two ranges") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({1, 2, 4, 4}), "x");
  ir::ValueId e = add(g, "exp", {x});
  const backend::OpDef& pool = backend::op("max_pool2d");
  backend::Attrs at{{"kernel", std::vector<int64_t>{2, 2}}, {"stride", std::vector<int64_t>{2, 2}},
                    {"padding", std::vector<int64_t>{0, 0}}};
  std::vector<backend::TensorType> in{g.values[e].type};
  ir::NodeId p = g.add_node(&pool, {e}, at, pool.type_rule(in, at));
  ir::ValueId y = g.nodes[p].outputs[0], idx = g.nodes[p].outputs[1];
  output(g, add(g, "exp", {y}));
  output(g, add(g, "cast", {idx}, {{"dtype", backend::DType::f32}}));
  ir::MemoryPlan m = ir::plan_memory(g, ir::find_buffers(g), trace_order(g));
  // e: 32 floats, 128 bytes at 0; y: 8 floats (64 aligned) and the indices
  // above it while e is still read.
  CHECK(offset_of(m, e) == 0);
  CHECK(offset_of(m, y) == 128);
  CHECK(offset_of(m, idx) == 192);
  CHECK(m.arena_bytes == 128 + 64 + ir::arena_size(g.values[idx].type.shape.numel() *
                                                   backend::dtype_size(g.values[idx].type.dtype)));
}

namespace {

// A random chain of adds and exps over three sizes of value (16, 40, 100
// floats); with `inplace`, run through that pass.
ir::Graph random_graph(uint64_t& state, bool inplace) {
  auto rnd = [&](uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  ir::Graph g;
  std::vector<ir::ValueId> pool_of[3];  // values by size
  const int64_t sizes[3] = {16, 40, 100};
  for (int k = 0; k < 3; ++k) pool_of[k].push_back(input(g, f32({sizes[k]}), "x"));
  for (int i = 0; i < 60; ++i) {
    const int k = int(rnd(3));
    auto& vs = pool_of[k];
    ir::ValueId a = vs[rnd(vs.size())], b = vs[rnd(vs.size())];
    ir::ValueId v = rnd(2) ? add(g, "add", {a, b}) : add(g, "exp", {a});
    vs.push_back(v);
  }
  for (auto& vs : pool_of) output(g, vs.back());
  if (inplace) nntest::run_pass(g, "inplace");
  return g;
}

}  // namespace

TEST_CASE("memory plan: on random graphs no two live buffers overlap, and lower bound <= arena <= sum of sizes") {
  uint64_t state = 12345;
  for (int trial = 0; trial < 20; ++trial) {
    const ir::Graph g = random_graph(state, trial % 2);
    for (ir::Schedule s : {ir::Schedule::serial, ir::Schedule::bfs, ir::Schedule::greedy}) {
      ir::Plan p = ir::make_plan(g, s);
      const ir::MemoryPlan& m = p.memory_plan;
      size_t sum = 0;
      std::vector<uint32_t> arena;
      for (uint32_t b = 0; b < m.buffers.list.size(); ++b)
        if (m.in_arena[b]) arena.push_back(b), sum += ir::arena_size(m.buffers.list[b].bytes);
      CHECK(m.lower_bound_bytes <= m.arena_bytes);
      CHECK(m.arena_bytes <= sum);
      for (size_t i = 0; i < arena.size(); ++i)
        for (size_t j = i + 1; j < arena.size(); ++j) {
          const uint32_t a = arena[i], b = arena[j];
          const bool in_time = m.begin[a] <= m.end[b] && m.begin[b] <= m.end[a];
          const bool in_space = m.offset[a] < m.offset[b] + m.buffers.list[b].bytes &&
                                m.offset[b] < m.offset[a] + m.buffers.list[a].bytes;
          CHECK_FALSE((in_time && in_space));
          CHECK(m.offset[a] % ir::kArenaAlignment == 0);
        }
    }
  }
}

TEST_CASE("memory plan: each step's scratch is the largest range no live buffer uses, the lowest of equals") {
  // Worked out here by sorting the buffers live at each step by offset and
  // taking the gaps between them and above the last up to the arena's size.
  uint64_t state = 777;
  int placed_by[2] = {0, 0};  // arenas placed by best fit, largest first
  for (int trial = 0; trial < 20; ++trial) {
    const ir::Graph g = random_graph(state, trial % 2);
    for (ir::Schedule s : {ir::Schedule::serial, ir::Schedule::greedy}) {
      const ir::Plan p = ir::make_plan(g, s);
      const ir::MemoryPlan& m = p.memory_plan;
      REQUIRE(m.arenas.size() == 1);
      ++placed_by[m.arenas[0].largest_first];
      REQUIRE(m.scratch.size() == p.order.size());
      for (uint32_t step = 0; step < p.order.size(); ++step) {
        std::vector<std::pair<size_t, size_t>> live;  // (offset, end)
        for (uint32_t b = 0; b < m.buffers.list.size(); ++b)
          if (m.in_arena[b] && m.begin[b] <= step && step <= m.end[b])
            live.push_back({m.offset[b], m.offset[b] + ir::arena_size(m.buffers.list[b].bytes)});
        std::sort(live.begin(), live.end());
        live.push_back({m.arena_bytes, m.arena_bytes});
        std::pair<size_t, size_t> best{0, 0};
        size_t floor = 0;
        for (auto [begin, end] : live) {
          if (begin > floor && begin - floor > best.second) best = {floor, begin - floor};
          floor = std::max(floor, end);
        }
        CHECK(m.scratch[step] == best);
      }
    }
  }
  CHECK(placed_by[0] > 0);
  CHECK(placed_by[1] > 0);
}
