// The IR verifier: a sound graph passes; each way of breaking it (a read
// before the write, a wrong output type, a failing type rule, a bad state
// update, a value without its writer, a value written twice, a bad graph
// input) is reported in words; check() throws with the first problem.
#include <doctest/doctest.h>

#include <algorithm>

#include "backend/device.h"
#include "backend/error.h"
#include "ir/verifier.h"

using namespace nn;

namespace {

backend::TensorType f32(backend::Shape s) { return {backend::DType::f32, s, backend::cpu_device()}; }

// %0 x: input, %1 w: param, %2 s: state;
// %3 = matmul %0, %1; %4 = add %3, %2; %5 = relu %4; %2 <- %4; return %5.
ir::Graph sound_graph() {
  ir::Graph g;
  g.name = "step";
  ir::ValueId x = g.add_value(f32({2, 3}), ir::Role::input, "x");
  ir::ValueId w = g.add_value(f32({3, 4}), ir::Role::param, "w");
  ir::ValueId s = g.add_value(f32({2, 4}), ir::Role::state, "s");
  g.inputs = {x};
  ir::NodeId mm = g.add_node(&backend::op("matmul"), {x, w}, {}, {f32({2, 4})});
  ir::NodeId add = g.add_node(&backend::op("add"), {g.nodes[mm].outputs[0], s}, {}, {f32({2, 4})});
  ir::NodeId relu = g.add_node(&backend::op("relu"), {g.nodes[add].outputs[0]}, {}, {f32({2, 4})});
  ir::NodeId pr = g.add_node(nullptr, {g.nodes[relu].outputs[0]}, {}, {});
  g.nodes[pr].set_host(ir::host_call("print"));
  g.updates.push_back({s, g.nodes[add].outputs[0]});
  g.outputs = {g.nodes[relu].outputs[0]};
  return g;
}

using Problems = std::vector<std::string>;

}  // namespace

TEST_CASE("verifier: a sound graph has no problems") {
  ir::Graph g = sound_graph();
  CHECK(ir::verify(g) == Problems{});
  CHECK_NOTHROW(ir::check(g));
}

TEST_CASE("verifier: a node reading a value made by a later node") {
  ir::Graph g = sound_graph();
  g.nodes[1].inputs[1] = 5;  // add reads relu's result, same type
  CHECK(ir::verify(g) == Problems{"node 1 (add): input 1 reads %5 before node 2 makes it"});
}

TEST_CASE("verifier: a node reading a value that does not exist") {
  ir::Graph g = sound_graph();
  g.nodes[2].inputs[0] = 40;
  CHECK(ir::verify(g) == Problems{"node 2 (relu): input 0 reads %40, which does not exist"});
}

TEST_CASE("verifier: an output type the type rule does not give") {
  ir::Graph g = sound_graph();
  g.values[5].type = f32({4, 2});
  CHECK(ir::verify(g) == Problems{"node 2 (relu): output 0 %5 is f32[4, 2], the type rule gives f32[2, 4]"});
  g.values[5].type = {backend::DType::i64, backend::Shape({2, 4}), backend::cpu_device()};
  CHECK(ir::verify(g) == Problems{"node 2 (relu): output 0 %5 is i64[2, 4], the type rule gives f32[2, 4]"});
}

TEST_CASE("verifier: a type rule that throws is a problem") {
  ir::Graph g = sound_graph();
  g.nodes[0].inputs = {0, 0};  // matmul of [2, 3] by [2, 3]
  Problems p = ir::verify(g);
  REQUIRE(p.size() == 1);
  CHECK(p[0].starts_with("node 0 (matmul): the type rule fails: "));
}

TEST_CASE("verifier: the wrong number of inputs or outputs") {
  ir::Graph g = sound_graph();
  g.nodes[1].inputs.pop_back();
  CHECK(ir::verify(g) == Problems{"node 1 (add): takes 2 inputs, has 1"});

  g = sound_graph();
  g.nodes[3].outputs.push_back(5);  // the print "writes" relu's result too
  Problems p = ir::verify(g);
  CHECK(std::find(p.begin(), p.end(), "node 3 (print): a host call makes no values, but this one has 1 outputs") !=
        p.end());
  CHECK(std::find(p.begin(), p.end(), "%5 is produced twice, by node 2 and node 3") != p.end());
}

TEST_CASE("verifier: a state update of a value that is not a state") {
  ir::Graph g = sound_graph();
  g.values[2].role = ir::Role::constant;
  CHECK(ir::verify(g) == Problems{"state update %2 <- %4: %2 is a const, not a state, param or input"});

  g = sound_graph();
  g.updates[0].value = 0;  // x is f32[2, 3], the state f32[2, 4]
  CHECK(ir::verify(g) == Problems{"state update %2 <- %0: the value is f32[2, 3], the state is f32[2, 4]"});
}

TEST_CASE("verifier: an intermediate without a producer") {
  ir::Graph g = sound_graph();
  ir::ValueId orphan = g.add_value(f32({2, 4}), ir::Role::intermediate);
  g.nodes[2].inputs[0] = orphan;
  CHECK(ir::verify(g) ==
        Problems{"node 2 (relu): input 0 reads %6, which no node makes", "%6 is an intermediate with no producer"});

  g = sound_graph();
  g.values[5].producer = ir::kNone;
  CHECK(ir::verify(g) == Problems{"%5 is an intermediate with no producer"});

  g = sound_graph();
  g.values[5].index = 1;
  CHECK(ir::verify(g) == Problems{"%5 names node 2 output 1 as its producer, which is not %5"});
}

TEST_CASE("verifier: captured values have no producer, graph inputs are inputs") {
  ir::Graph g = sound_graph();
  g.values[1].producer = 0;
  g.inputs.push_back(1);
  g.outputs.push_back(99);
  CHECK(ir::verify(g) == Problems{"%1 is a param but has producer node 0", "graph input %1 is a param, not an input",
                                  "graph output %99 does not exist"});
}

TEST_CASE("verifier: check() throws with the first problem and a count") {
  ir::Graph g = sound_graph();
  g.updates[0].state = 1;  // w: a param, and of another shape
  g.values[1].role = ir::Role::constant;
  CHECK(ir::verify(g).size() == 2);
  CHECK_THROWS_WITH_AS(ir::check(g),
                       "internal: IR of graph step is invalid: state update %1 <- %4: %1 is a const, not a state, "
                       "param or input (and 1 more)",
                       backend::Error);

  g = sound_graph();
  g.values[2].role = ir::Role::constant;
  CHECK_THROWS_WITH_AS(ir::check(g), "internal: IR of graph step is invalid: state update %2 <- %4: %2 is a const, not a state, param or input",
                       backend::Error);
}
