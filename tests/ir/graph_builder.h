// Building IR graphs by hand in the ir tests: a type, inputs, constants
// and outputs, a node appended with the op's own type rule; running one
// pass and listing the ops left.
#pragma once
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "backend/op_registry.h"
#include "ir/graph.h"
#include "ir/pass.h"
#include "ir/verifier.h"
#include "fake_gpu.h"

namespace nntest {

inline nn::backend::TensorType f32(std::initializer_list<int64_t> dims) {
  return {nn::backend::DType::f32, nn::backend::Shape(dims), nn::backend::cpu_device()};
}

// conv2d's attributes for a 3x3 kernel that keeps the size: stride 1, padding 1.
inline nn::backend::Attrs same_conv() {
  return {{"stride", std::vector<int64_t>{1, 1}},
          {"padding", std::vector<int64_t>{1, 1}},
          {"dilation", std::vector<int64_t>{1, 1}},
          {"groups", int64_t(1)}};
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

inline nn::ir::ValueId input(nn::ir::Graph& g, nn::backend::TensorType t, const char* name) {
  nn::ir::ValueId v = g.add_value(t, nn::ir::Role::input, name);
  g.inputs.push_back(v);
  return v;
}

// A constant that cannot change (a host number's tensor, one a pass made);
// captured() below is a tensor the host may write between runs.
inline nn::ir::ValueId constant(nn::ir::Graph& g, const nn::backend::Tensor& t) {
  nn::ir::ValueId v = g.add_value(t.type(), nn::ir::Role::constant);
  g.values[v].captured = t;
  g.values[v].immutable = true;
  return v;
}

inline nn::ir::ValueId captured(nn::ir::Graph& g, const nn::backend::Tensor& t) {
  nn::ir::ValueId v = g.add_value(t.type(), nn::ir::Role::constant);
  g.values[v].captured = t;
  return v;
}

inline void output(nn::ir::Graph& g, nn::ir::ValueId v) {
  g.outputs.push_back(v);
  g.values[v].output = true;
}

// Runs the one pass named, checks the graph it leaves; returns what it changed.
inline size_t run_pass(nn::ir::Graph& g, const std::string& name) {
  for (auto& p : nn::ir::default_passes())
    if (p->name() == name) {
      size_t n = p->run(g);
      CHECK(nn::ir::verify(g).empty());
      return n;
    }
  FAIL("no pass " << name);
  return 0;
}

// The elements of an f32 tensor.
inline std::vector<float> values(const nn::backend::Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

// The ops of the nodes, in order: "matmul fused sum".
inline std::string ops(const nn::ir::Graph& g) {
  std::string s;
  for (const nn::ir::Node& n : g.nodes) s += (s.empty() ? "" : " ") + n.name();
  return s;
}

// Node::overwrites as a vector, to compare.
inline std::vector<int32_t> overwrites_of(const nn::ir::Node& n) { return {n.overwrites().begin(), n.overwrites().end()}; }

}  // namespace nntest
