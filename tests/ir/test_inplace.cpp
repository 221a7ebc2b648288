// The inplace pass on graphs built by hand: which output overwrites which
// input, each case where it must not (an input, a constant, a param the
// graph does not update, an output, a state's new value, a value read twice
// by the node or read again later, a view of it read later or kept, another
// dtype or shape), and runs of the graphs where a wrong choice would change
// the numbers.
#include <doctest/doctest.h>

#include <cmath>

#include "backend/ops.h"
#include "ir/executor.h"
#include "ir/pass.h"
#include "ir/verifier.h"
#include "graph_builder.h"
#include "two_output_op.h"

using namespace nn;
using namespace nntest;

namespace {

ir::ValueId captured(ir::Graph& g, const backend::Tensor& t, ir::Role role) {
  ir::ValueId v = g.add_value(t.type(), role);
  g.values[v].captured = t;
  return v;
}

ir::ValueId reshape(ir::Graph& g, ir::ValueId v, backend::Shape s) { return add(g, "reshape", {v}, {{"shape", s}}); }

// The node that makes v.
const ir::Node& maker(const ir::Graph& g, ir::ValueId v) { return g.nodes[g.values[v].producer]; }
int overwrites(const ir::Graph& g, ir::ValueId v) { return maker(g, v).overwritten_input(g.values[v].index); }

backend::Tensor iota(backend::Shape s) {
  backend::Tensor t = backend::Tensor::empty(s, backend::DType::f32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = float(i);
  return t;
}

}  // namespace

TEST_CASE("inplace: a dying intermediate is overwritten; inputs and constants never") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId c = captured(g, backend::full(backend::Shape({4}), 2.0), ir::Role::constant);
  ir::ValueId a = add(g, "exp", {x});     // x is the caller's
  ir::ValueId b = add(g, "neg", {a});     // a dies here
  ir::ValueId d = add(g, "mul", {c, b});  // c is a constant; b dies here: input 1
  output(g, add(g, "exp", {d}));
  CHECK(nntest::run_pass(g, "inplace") == 3);
  CHECK(overwrites(g, a) == -1);
  CHECK(overwrites(g, b) == 0);
  CHECK(overwrites(g, d) == 1);
}

TEST_CASE("inplace: never into an output, a state's new value, or a value read twice or later") {
  ir::Graph g;
  backend::Tensor s = backend::zeros(backend::Shape({4}));
  ir::ValueId x = input(g, f32({4}), "x");
  ir::ValueId st = captured(g, s, ir::Role::state);
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId o = add(g, "neg", {a});     // o is an output
  ir::ValueId b = add(g, "exp", {o});     // so b may not take o
  ir::ValueId n = add(g, "sin", {x});
  ir::ValueId u = add(g, "add", {st, n});  // u: the state's new value (st dies, but not updated in place:
  ir::ValueId r = add(g, "exp", {u});      //   see below); r may not take u
  ir::ValueId t = add(g, "cos", {x});
  ir::ValueId sq = add(g, "mul", {t, t});  // t read twice by one node
  ir::ValueId e = add(g, "exp", {x});
  ir::ValueId early = add(g, "neg", {e});  // e is read again below
  ir::ValueId late = add(g, "sub", {early, e});  // e's last reader: input 1 (input 0 dies here too: taken first)
  output(g, o);
  g.updates.push_back({st, u});
  for (ir::ValueId v : {b, r, sq, late}) output(g, v);
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g, o) == 0);  // a dies there
  CHECK(overwrites(g, b) == -1);
  CHECK(overwrites(g, r) == -1);
  CHECK(overwrites(g, sq) == -1);
  CHECK(overwrites(g, early) == -1);
  CHECK(overwrites(g, late) == 0);  // early dies at late too, and comes first
  // The state: st is read once, by u's node, and updated: u is written into
  // st's own memory (its new value, kept: allowed for a state's own update).
  CHECK(overwrites(g, u) == 0);
}

TEST_CASE("inplace: another dtype or shape is no fit; an elementwise op may take any input of its type") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2, 3}), "x");
  ir::ValueId y = input(g, f32({3}), "y");
  ir::ValueId a = add(g, "exp", {x});                          // f32[2, 3]
  ir::ValueId b = add(g, "exp", {y});                          // f32[3]
  ir::ValueId s = add(g, "add", {b, a});                       // f32[2, 3]: only a fits (input 1)
  ir::ValueId gt = add(g, "gt", {s, add(g, "exp", {x})});      // bool: neither f32 input fits
  ir::ValueId f = add(g, "cast", {add(g, "exp", {x})}, {{"dtype", backend::DType::f64}});  // f64 from f32
  output(g, gt);
  output(g, f);
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g, s) == 1);
  CHECK(overwrites(g, gt) == -1);
  CHECK(overwrites(g, f) == -1);
}

TEST_CASE("inplace: a view read later blocks it, and the run gives the numbers of the graph as written") {
  // z = x + 1; a = reshape(reshape(z)); out = a + 1; z2 = z + 1. a dies at
  // `out`, but a is z's memory and z is read later: writing out over a
  // would make z2 = x + 3. The last reader of the whole class (z2) may.
  ir::Graph g;
  ir::ValueId x = input(g, f32({4, 2}), "x");
  ir::ValueId one = captured(g, backend::full(backend::Shape({4, 2}), 1.0), ir::Role::constant);
  ir::ValueId z = add(g, "add", {x, one});
  ir::ValueId a = reshape(g, reshape(g, z, backend::Shape({8})), backend::Shape({4, 2}));
  ir::ValueId out = add(g, "add", {a, one});
  ir::ValueId z2 = add(g, "add", {z, one});
  output(g, out);
  output(g, z2);
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g, out) == -1);
  CHECK(overwrites(g, z2) == 0);
  for (ir::Schedule s : {ir::Schedule::serial, ir::Schedule::bfs, ir::Schedule::greedy})
    for (ir::MemoryMode m : {ir::MemoryMode::arena, ir::MemoryMode::pool}) {
      backend::Tensor in = iota(backend::Shape({4, 2}));
      std::vector<backend::Tensor> r = ir::run(g, ir::make_plan(g, s, m), std::span(&in, 1));
      for (int i = 0; i < 8; ++i) {
        CHECK(values(r[0])[size_t(i)] == float(i + 2));
        CHECK(values(r[1])[size_t(i)] == float(i + 2));
      }
    }
}

TEST_CASE("inplace: a value whose view the host keeps is never overwritten") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({6}), "x");
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId v = reshape(g, a, backend::Shape({2, 3}));
  ir::ValueId b = add(g, "neg", {a});  // a's last reader, but v is an output
  output(g, v);
  output(g, b);
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g, b) == -1);
  backend::Tensor in = backend::zeros(backend::Shape({6}));
  std::vector<backend::Tensor> r = ir::run(g, ir::make_plan(g), std::span(&in, 1));
  CHECK(values(r[0]) == std::vector<float>(6, 1.0f));   // exp(0)
  CHECK(values(r[1]) == std::vector<float>(6, -1.0f));
}

TEST_CASE("inplace: a param only when the graph updates it and reads it here for the last time") {
  ir::Graph g;
  backend::Tensor w = backend::full(backend::Shape({3}), 2.0), k = backend::full(backend::Shape({3}), 5.0);
  ir::ValueId x = input(g, f32({3}), "x");
  ir::ValueId pw = captured(g, w, ir::Role::param);  // updated below
  ir::ValueId pk = captured(g, k, ir::Role::param);  // never updated
  ir::ValueId y = add(g, "mul", {pk, x});            // pk: not updated; x: an input
  ir::ValueId early = add(g, "sub", {pw, x});        // pw is read again below
  ir::ValueId w2 = add(g, "sub", {pw, early});       // pw's last read, and w2 its new value: yes
  ir::ValueId t = add(g, "exp", {w2});               // w2 is kept (the new value): no
  g.updates.push_back({pw, w2});
  output(g, y);
  output(g, t);
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g, y) == -1);
  CHECK(overwrites(g, early) == -1);
  CHECK(overwrites(g, w2) == 0);
  CHECK(overwrites(g, t) == -1);

  const void* memory = w.raw_data();
  backend::Tensor in = backend::full(backend::Shape({3}), 0.5);
  std::vector<backend::Tensor> r = ir::run(g, ir::make_plan(g), std::span(&in, 1));
  CHECK(values(w) == std::vector<float>(3, 0.5f));  // 2 - (2 - 0.5)
  CHECK(w.raw_data() == memory);
  CHECK(values(r[0]) == std::vector<float>(3, 2.5f));  // 5 * 0.5
  CHECK(values(r[1])[0] == doctest::Approx(std::exp(0.5)));
  CHECK(values(k) == std::vector<float>(3, 5.0f));
}

TEST_CASE("inplace: an updated param's memory never takes a value the host keeps, unless it is the new value") {
  ir::Graph g;
  backend::Tensor w = backend::full(backend::Shape({3}), 2.0);
  ir::ValueId x = input(g, f32({3}), "x");
  ir::ValueId pw = captured(g, w, ir::Role::param);
  ir::ValueId u = add(g, "sub", {pw, x});  // pw's last read, but u is an output and not w's new value
  ir::ValueId w2 = add(g, "mul", {x, x});
  g.updates.push_back({pw, w2});
  output(g, u);
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g, u) == -1);
  backend::Tensor in = backend::full(backend::Shape({3}), 3.0);
  std::vector<backend::Tensor> r = ir::run(g, ir::make_plan(g), std::span(&in, 1));
  CHECK(values(r[0]) == std::vector<float>(3, -1.0f));  // 2 - 3, not overwritten by the update
  CHECK(values(w) == std::vector<float>(3, 9.0f));
}

TEST_CASE("inplace: a stateful op writes into its first input when it dies there, else into a copy") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2}), "x");
  backend::Attrs m{{"momentum", 0.5}, {"scale", 1.0}};
  ir::ValueId a = add(g, "exp", {x});
  ir::ValueId keep = add(g, "running_stat_update", {a, x}, m);  // a dies here: in place
  ir::ValueId b = add(g, "neg", {x});
  ir::ValueId copy = add(g, "running_stat_update", {b, x}, m);  // b is read again below: a copy
  ir::ValueId again = add(g, "add", {b, copy});
  output(g, keep);
  output(g, again);
  nntest::run_pass(g, "inplace");
  CHECK(overwrites(g, keep) == 0);
  CHECK(overwrites(g, copy) == -1);
  for (ir::MemoryMode mode : {ir::MemoryMode::arena, ir::MemoryMode::pool}) {
    backend::Tensor in = backend::full(backend::Shape({2}), 1.0);
    std::vector<backend::Tensor> r = ir::run(g, ir::make_plan(g, ir::Schedule::automatic, mode), std::span(&in, 1));
    CHECK(values(r[0])[0] == doctest::Approx(0.5 * std::exp(1.0) + 0.5));
    CHECK(values(r[1])[0] == doctest::Approx(-1.0 + 0.0));  // b = -1; copy = 0.5 * -1 + 0.5 = 0
  }
}

TEST_CASE("inplace: a node with two outputs writes each over a different dying input") {
  nntest::sum_diff_op();
  ir::Graph g;
  ir::ValueId x = input(g, f32({3}), "x");
  ir::ValueId a = add(g, "exp", {x}), b = add(g, "neg", {x});
  const ir::NodeId n = g.add_node(&nntest::sum_diff_op(), {a, b}, {}, {f32({3}), f32({3})});
  ir::ValueId s = g.nodes[n].outputs[0], d = g.nodes[n].outputs[1];
  output(g, add(g, "mul", {s, d}));
  CHECK(nntest::run_pass(g, "inplace") == 3);  // the two outputs, and mul over s
  CHECK(overwrites_of(g.nodes[n]) == std::vector<int32_t>{0, 1});
  CHECK(overwrites(g, a) == -1);
  for (ir::MemoryMode mode : {ir::MemoryMode::arena, ir::MemoryMode::pool}) {
    backend::Tensor in = backend::full(backend::Shape({3}), 1.0);
    std::vector<backend::Tensor> r = ir::run(g, ir::make_plan(g, ir::Schedule::automatic, mode), std::span(&in, 1));
    // (e + -1) * (e - -1) = e^2 - 1
    CHECK(values(r[0])[2] == doctest::Approx(std::exp(2.0) - 1.0));
  }
}

TEST_CASE("inplace: the verifier refuses an output written over an input of other bytes, or one that does not exist") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2, 3}), "x");
  ir::ValueId y = input(g, f32({3}), "y");
  ir::ValueId s = add(g, "add", {x, y});
  output(g, s);
  g.nodes[0].set_overwrites({1});
  std::vector<std::string> p = ir::verify(g);
  REQUIRE(p.size() == 1);
  CHECK(p[0] == "node 0 (add): output 0 f32[2, 3] overwrites input 1 f32[3], of other bytes");
  g.nodes[0].set_overwrites({2});
  p = ir::verify(g);
  REQUIRE(p.size() == 1);
  CHECK(p[0] == "node 0 (add): output 0 overwrites input 2, which does not exist");
  g.nodes[0].set_overwrites({0});
  CHECK(ir::verify(g).empty());
}
