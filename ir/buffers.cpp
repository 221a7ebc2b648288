// Buffers of a graph (ir/buffers.h): one walk over the nodes in trace order,
// where every view and every in-place output joins its input's buffer.
#include "ir/buffers.h"

#include <unordered_map>

namespace nn::ir {

size_t value_bytes(const Value& v) { return v.type.nbytes(); }

std::vector<ValueId> view_roots(const Graph& g) {
  std::vector<ValueId> root(g.values.size());
  // Captured tensors in one block (a state s and `reshape(s, [6])` kept
  // outside the graph) are one class: a write into s in place must come
  // after every read of the other.
  std::unordered_map<const void*, ValueId> first_in_block;
  for (ValueId v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    root[v] = v;
    if (val.role != Role::intermediate && val.captured.defined() && val.captured.block())
      root[v] = first_in_block.emplace(val.captured.block().get(), v).first->second;
  }
  // Trace order: a view's input has its root by the time the view is met.
  for (const Node& n : g.nodes)
    if (n.op && n.op->view && !n.inputs.empty())
      for (ValueId o : n.outputs) root[o] = root[n.inputs[0]];
  return root;
}

Buffers find_buffers(const Graph& g) {
  Buffers b;
  const size_t nv = g.values.size();
  b.of_value.assign(nv, UINT32_MAX);
  auto fresh = [&](ValueId v, BufferKind kind) {
    b.of_value[v] = uint32_t(b.list.size());
    b.list.push_back({v, value_bytes(g.values[v]), kind});
  };
  for (ValueId v = 0; v < nv; ++v)
    if (g.values[v].role != Role::intermediate) fresh(v, BufferKind::bound);
  for (const Node& n : g.nodes) {
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const ValueId o = n.outputs[i];
      const int k = n.overwritten_input(i);
      if (n.op && n.op->view && !n.inputs.empty()) b.of_value[o] = b.of_value[n.inputs[0]];
      else if (k >= 0 && size_t(k) < n.inputs.size()) b.of_value[o] = b.of_value[n.inputs[size_t(k)]];
      else fresh(o, BufferKind::arena);
    }
  }
  // What the host may hold after the run leaves the arena, with everything
  // sharing its memory.
  auto keep = [&](ValueId v) {
    Buffer& buf = b.list[b.of_value[v]];
    if (buf.kind == BufferKind::arena) buf.kind = BufferKind::own;
  };
  for (ValueId v : g.outputs) keep(v);
  for (const StateUpdate& u : g.updates) keep(u.value);
  return b;
}

}  // namespace nn::ir
