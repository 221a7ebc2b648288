// Building IR graphs by hand in the ir tests: a type, and a node appended
// with the op's own type rule.
#pragma once
#include <initializer_list>
#include <vector>

#include "backend/op_registry.h"
#include "ir/graph.h"

namespace nntest {

inline nn::backend::TensorType f32(std::initializer_list<int64_t> dims) {
  return {nn::backend::DType::f32, nn::backend::Shape(dims), nn::backend::cpu_device()};
}

// Appends `op(in...)`; returns its first output.
inline nn::ir::ValueId add(nn::ir::Graph& g, const char* op, std::vector<nn::ir::ValueId> in,
                           nn::backend::Attrs attrs = {}) {
  const nn::backend::OpDef& d = nn::backend::op(op);
  std::vector<nn::backend::TensorType> types;
  for (nn::ir::ValueId v : in) types.push_back(g.values[v].type);
  nn::ir::NodeId n = g.add_node(&d, in, attrs, d.type_rule(types, attrs));
  return g.nodes[n].outputs[0];
}

}  // namespace nntest
