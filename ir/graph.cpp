// Building a graph: values and nodes appended in trace order.
#include "ir/graph.h"

#include <algorithm>

namespace nn::ir {

const char* role_name(Role r) {
  switch (r) {
    case Role::intermediate: return "value";
    case Role::input: return "input";
    case Role::param: return "param";
    case Role::state: return "state";
    case Role::constant: return "const";
  }
  return "?";
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::optimizer: return "optimizer";
  }
  return "?";
}

Node::Node(const Node& o)
    : op(o.op), attrs(o.attrs), inputs(o.inputs), outputs(o.outputs), loc(o.loc), scope(o.scope), phase(o.phase),
      recomputed(o.recomputed), rare_(o.rare_ ? std::make_unique<Rare>(*o.rare_) : nullptr) {}

const std::string& Node::name() const {
  static const std::string none;
  return op ? op->name : host() ? host()->name : none;
}

namespace {
// A trace appends tens of thousands of records one at a time: growing
// fourfold rather than twofold moves each a third as often. What is never
// written stays untouched address space.
template <class T>
void make_room(std::vector<T>& v) {
  if (v.size() == v.capacity()) v.reserve(std::max<size_t>(256, 4 * v.capacity()));
}
}  // namespace

// Built in place: a Value or Node moved into the vector costs as much as
// the fields it has (a trace adds one of each per op).
ValueId Graph::add_value(const backend::TensorType& type, Role role, std::string name) {
  make_room(values);
  Value& v = values.emplace_back();
  v.type = type;
  v.role = role;
  if (!name.empty()) {
    v.name = uint32_t(names.size());
    names.push_back(std::move(name));
  }
  return ValueId(values.size() - 1);
}

NodeId Graph::add_node(const backend::OpDef* op, ValueList in, const backend::Attrs& attrs,
                       const backend::OutTypes& types) {
  const NodeId id = NodeId(nodes.size());
  ValueList outs;
  outs.reserve(types.size());
  for (uint32_t i = 0; i < types.size(); ++i) {
    ValueId v = add_value(types[i], Role::intermediate);
    values[v].producer = id;
    values[v].index = i;
    outs.push_back(v);
  }
  make_room(nodes);
  Node& n = nodes.emplace_back();
  n.op = op;
  n.inputs = std::move(in);
  n.attrs = attrs;
  n.outputs = std::move(outs);
  return id;
}

void Graph::link_producers() {
  for (NodeId i = 0; i < nodes.size(); ++i)
    for (uint32_t k = 0; k < nodes[i].outputs.size(); ++k) {
      values[nodes[i].outputs[k]].producer = i;
      values[nodes[i].outputs[k]].index = k;
    }
}

size_t Graph::edge_count() const {
  size_t e = 0;
  for (const Node& n : nodes) e += n.inputs.size();
  return e;
}

}  // namespace nn::ir
