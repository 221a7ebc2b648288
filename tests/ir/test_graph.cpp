// Graph building: values and nodes get ids in order, outputs know their producer.
#include <doctest/doctest.h>

#include "backend/dispatch.h"
#include "ir/graph.h"

using namespace nn;

TEST_CASE("graph: add_node makes one intermediate value per output") {
  ir::Graph g;
  backend::TensorType t{backend::DType::f32, backend::Shape({2, 3}), backend::cpu_device()};
  ir::ValueId a = g.add_value(t, ir::Role::input, "a");
  ir::ValueId b = g.add_value(t, ir::Role::input, "b");
  const backend::OpDef& add = backend::op("add");
  ir::NodeId n = g.add_node(&add, {a, b}, {}, backend::OutTypes{t});
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[n].outputs.size() == 1);
  ir::ValueId out = g.nodes[n].outputs[0];
  CHECK(out == 2);
  CHECK(g.values[out].producer == n);
  CHECK(g.values[out].role == ir::Role::intermediate);
  CHECK(g.edge_count() == 2);
}
