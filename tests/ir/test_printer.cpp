// The IR text printer: a golden text for a small hand-built graph (inputs,
// captured tensors, attributes, a host call, two phases, locations, a state
// update), and the placement of the location column.
#include <doctest/doctest.h>

#include <sstream>

#include "backend/device.h"
#include "ir/printer.h"

using namespace nn;

namespace {

backend::TensorType f32(backend::Shape s) { return {backend::DType::f32, s, backend::cpu_device()}; }

// A forward step and an optimizer step over one input, one param, one state
// and one unnamed constant; nodes with a location print it.
ir::Graph tiny_graph() {
  ir::Graph g;
  g.name = "step";
  g.locate = [](const ir::Loc& l) { return "t.nn:" + std::to_string(l.begin) + ":1"; };
  ir::ValueId x = g.add_value(f32({2, 3}), ir::Role::input, "x");
  ir::ValueId w = g.add_value(f32({3, 4}), ir::Role::param, "w");
  ir::ValueId s = g.add_value(f32({2, 4}), ir::Role::state, "buf");
  g.add_value(f32({}), ir::Role::constant);
  g.inputs = {x};

  ir::NodeId mm = g.add_node(&backend::op("matmul"), {x, w}, {}, {f32({2, 4})});
  g.nodes[mm].loc = {1, 9, 12};
  ir::ValueId y = g.nodes[mm].outputs[0];

  backend::Attrs axes{{"axes", std::vector<int64_t>{0, 1}}, {"keepdims", true}};
  ir::NodeId sum = g.add_node(&backend::op("sum"), {y}, axes, {f32({1, 1})});
  g.nodes[sum].loc = {1, 10, 20};
  ir::ValueId total = g.nodes[sum].outputs[0];

  ir::NodeId pr = g.add_node(nullptr, {total}, {}, {});
  g.nodes[pr].set_host(ir::host_call("print"));
  g.nodes[pr].loc = {1, 12, 14};

  ir::NodeId up = g.add_node(&backend::op("add"), {s, y}, {}, {f32({2, 4})});
  g.nodes[up].phase = ir::Phase::optimizer;
  g.updates.push_back({s, g.nodes[up].outputs[0]});
  g.outputs = {total};
  return g;
}

}  // namespace

TEST_CASE("printer: golden text of a small graph") {
  const std::string want = R"(graph step(%0 x: f32[2, 3]) {
  param %1 w: f32[3, 4]
  state %2 buf: f32[2, 4]
  const %3: f32[]
  # forward
  %4 = matmul %0, %1 : f32[2, 4]                       # t.nn:9:1
  %5 = sum %4 {axes=[0, 1], keepdims=true} : f32[1, 1]  # t.nn:10:1
  print %5                                             # t.nn:12:1
  # optimizer
  %6 = add %2, %4 : f32[2, 4]
  %2 <- %6
  return %5
}
)";
  CHECK(ir::print_ir(tiny_graph()) == want);
}

TEST_CASE("printer: locations start at column 56, at least two spaces after the code") {
  std::istringstream lines(ir::print_ir(tiny_graph()));
  std::string line;
  int located = 0;
  while (std::getline(lines, line)) {
    size_t hash = line.find("# t.nn");
    if (hash == std::string::npos) continue;
    ++located;
    std::string code = line.substr(0, line.find_last_not_of(' ', hash - 1) + 1);
    if (code.size() + 2 <= 55) CHECK(hash == 55);  // column 56 counted from 1
    else CHECK(hash == code.size() + 2);
  }
  CHECK(located == 3);
}

TEST_CASE("printer: a graph without inputs, outputs or nodes") {
  ir::Graph g;
  g.name = "empty";
  CHECK(ir::print_ir(g) == "graph empty() {\n}\n");
}

TEST_CASE("printer: every change of phase gets a comment, a repeat does not") {
  ir::Graph g;
  g.name = "phases";
  ir::ValueId a = g.add_value(f32({2}), ir::Role::input, "a");
  g.inputs = {a};
  const ir::Phase order[] = {ir::Phase::forward, ir::Phase::forward, ir::Phase::backward, ir::Phase::forward};
  ir::ValueId last = a;
  for (ir::Phase p : order) {
    ir::NodeId n = g.add_node(&backend::op("relu"), {last}, {}, {f32({2})});
    g.nodes[n].phase = p;
    last = g.nodes[n].outputs[0];
  }
  const std::string want = R"(graph phases(%0 a: f32[2]) {
  # forward
  %1 = relu %0 : f32[2]
  %2 = relu %1 : f32[2]
  # backward
  %3 = relu %2 : f32[2]
  # forward
  %4 = relu %3 : f32[2]
}
)";
  CHECK(ir::print_ir(g) == want);
}

TEST_CASE("printer: a malformed graph prints without crashing") {
  ir::Graph g;
  g.name = "bad";
  ir::ValueId a = g.add_value(f32({2}), ir::Role::input, "a");
  g.add_node(&backend::op("relu"), {a}, {}, {f32({2})});
  g.nodes[0].inputs = {7};
  g.outputs = {9};
  CHECK(ir::print_ir(g) == "graph bad() {\n  # forward\n  %1 = relu %7 : f32[2]\n  return %9\n}\n");
}
