// Schedules (serial, BFS) and the run plan: reader counts, the step after
// which each value dies, in-place writes into dying inputs and states.
#include "ir/schedule.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

namespace nn::ir {

const char* schedule_name(Schedule s) { return s == Schedule::serial ? "serial" : "bfs"; }

bool parse_schedule(std::string_view name, Schedule& out) {
  if (name == "serial") out = Schedule::serial;
  else if (name == "bfs") out = Schedule::bfs;
  else return false;
  return true;
}

std::vector<NodeId> schedule(const Graph& g, Schedule s) {
  const size_t n = g.nodes.size();
  std::vector<NodeId> order;
  order.reserve(n);
  if (s == Schedule::serial) {
    for (NodeId i = 0; i < n; ++i) order.push_back(i);
    return order;
  }
  // Kahn's algorithm with a FIFO queue: level by level. Edges go from the
  // producer of each input, and from each ordered effect to the next.
  std::vector<uint32_t> pending(n, 0);
  std::vector<std::vector<NodeId>> next(n);
  NodeId last_effect = kNone;
  for (NodeId i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    for (ValueId v : node.inputs) {
      NodeId p = g.values[v].producer;
      if (p != kNone) {
        next[p].push_back(i);
        ++pending[i];
      }
    }
    if (node.ordered_effect()) {
      if (last_effect != kNone) {
        next[last_effect].push_back(i);
        ++pending[i];
      }
      last_effect = i;
    }
  }
  std::deque<NodeId> ready;
  for (NodeId i = 0; i < n; ++i)
    if (!pending[i]) ready.push_back(i);
  while (!ready.empty()) {
    NodeId i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (NodeId j : next[i])
      if (--pending[j] == 0) ready.push_back(j);
  }
  return order;
}

namespace {
// The value whose memory v shares: views (reshape) share their input's block.
ValueId alias_root(const Graph& g, std::vector<ValueId>& root, ValueId v) {
  if (root[v] != kNone) return root[v];
  const Value& val = g.values[v];
  ValueId r = v;
  if (val.producer != kNone) {
    const Node& p = g.nodes[val.producer];
    if (p.op && p.op->view) r = alias_root(g, root, p.inputs[0]);
  }
  return root[v] = r;
}

int input_written(const Node& n) {
  if (!n.op || n.op->view || n.outputs.size() != 1) return -1;
  if (n.op->effect == backend::Effect::stateful) return 0;
  return n.op->inplace_input;
}

bool same_bytes(const backend::TensorType& a, const backend::TensorType& b) {
  return a.dtype == b.dtype && a.shape.numel() == b.shape.numel() && a.device == b.device;
}
}  // namespace

Plan make_plan(const Graph& g, Schedule s) {
  Plan p;
  p.kind = s;
  p.order = schedule(g, s);
  const size_t nv = g.values.size(), steps = p.order.size();
  constexpr uint32_t kForever = UINT32_MAX;
  p.readers.assign(nv, 0);
  std::vector<uint32_t> last(nv, kNone);  // step of the last read
  for (uint32_t step = 0; step < steps; ++step)
    for (ValueId v : g.nodes[p.order[step]].inputs) {
      ++p.readers[v];
      last[v] = step;
    }
  // Outputs and the new values of states live to the end of the run.
  std::vector<bool> kept(nv, false);
  for (ValueId v : g.outputs) kept[v] = true;
  for (const StateUpdate& u : g.updates) kept[u.value] = true;
  for (ValueId v = 0; v < nv; ++v)
    if (kept[v]) last[v] = kForever;
  // The last read of each block: the latest read of any value sharing it.
  std::vector<ValueId> root(nv, kNone);
  std::vector<uint32_t> block_last(nv, kNone);
  for (ValueId v = 0; v < nv; ++v) {
    if (last[v] == kNone) continue;
    uint32_t& b = block_last[alias_root(g, root, v)];
    b = b == kNone ? last[v] : std::max(b, last[v]);
  }
  std::vector<uint32_t> step_of(g.nodes.size(), 0);
  for (uint32_t step = 0; step < steps; ++step) step_of[p.order[step]] = step;

  p.dies_after.assign(steps, {});
  for (ValueId v = 0; v < nv; ++v) {
    const Value& val = g.values[v];
    if (val.role != Role::intermediate || kept[v] || val.producer == kNone) continue;
    uint32_t step = last[v] == kNone ? step_of[val.producer] : last[v];
    p.dies_after[step].push_back(v);
  }

  std::vector<bool> updated(nv, false);  // captured values the graph writes back
  for (const StateUpdate& u : g.updates) updated[u.state] = true;
  std::vector<ValueId> home(nv, kNone);  // the captured value whose memory holds a value

  p.reuse_input.assign(steps, -1);
  p.write_into.assign(steps, kNone);
  for (uint32_t step = 0; step < steps; ++step) {
    const Node& n = g.nodes[p.order[step]];
    int k = input_written(n);
    if (k < 0 || size_t(k) >= n.inputs.size()) continue;
    ValueId u = n.inputs[size_t(k)];
    if (std::count(n.inputs.begin(), n.inputs.end(), u) != 1) continue;
    const backend::TensorType& out = g.values[n.outputs[0]].type;
    const Value& in = g.values[u];
    if (!same_bytes(in.type, out) || kept[u] || block_last[alias_root(g, root, u)] != step) continue;
    if (in.role != Role::intermediate) {
      // A param, state or input the graph updates, read for the last time.
      if (!updated[u] || in.type.shape != out.shape) continue;
      p.write_into[step] = home[n.outputs[0]] = u;
    } else if (home[u] != kNone) {
      // A value already living in a state's memory: the chain goes on there.
      if (in.type.shape != out.shape) continue;
      p.write_into[step] = home[n.outputs[0]] = home[u];
    } else {
      p.reuse_input[step] = int8_t(k);
    }
  }

  // Follow the plan counting bytes. A new output takes a block (one the
  // pool has free in its size class, or a new one); a view, or an output
  // written into a dying input, shares its input's block; a block is free
  // again when the last value on it dies.
  p.block_of_value.assign(nv, kNone);
  std::unordered_map<size_t, std::vector<uint32_t>> free_blocks;  // by size class
  std::vector<size_t> block_bytes;
  std::vector<uint32_t> block_refs;
  size_t live = 0;
  for (uint32_t step = 0; step < steps; ++step) {
    const Node& n = g.nodes[p.order[step]];
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const ValueId o = n.outputs[i];
      uint32_t b = kNone;
      if (n.op && n.op->view) b = p.block_of_value[n.inputs[0]];
      else if (i == 0 && p.write_into[step] != kNone) continue;
      else if (i == 0 && p.reuse_input[step] >= 0) b = p.block_of_value[n.inputs[size_t(p.reuse_input[step])]];
      if (b != kNone) {
        ++block_refs[b];
      } else if (!(n.op && n.op->view)) {
        const size_t bytes = backend::CachingPool::size_class(size_t(g.values[o].type.shape.numel()) *
                                                               backend::dtype_size(g.values[o].type.dtype));
        auto& fl = free_blocks[bytes];
        if (fl.empty()) {
          b = uint32_t(block_bytes.size());
          block_bytes.push_back(bytes);
          block_refs.push_back(0);
        } else {
          b = fl.back();
          fl.pop_back();
        }
        block_refs[b] = 1;
        live += bytes;
      }
      p.block_of_value[o] = b;
    }
    p.planned_bytes = std::max(p.planned_bytes, live);
    for (ValueId v : p.dies_after[step]) {
      const uint32_t b = p.block_of_value[v];
      if (b == kNone || --block_refs[b] > 0) continue;
      live -= block_bytes[b];
      free_blocks[block_bytes[b]].push_back(b);
    }
  }
  return p;
}

}  // namespace nn::ir
