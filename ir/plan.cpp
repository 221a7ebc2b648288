// The run plan (ir/plan.h): reader counts and deaths for an order, its
// memory plan, the pool's figure for comparison, and the choice of order.
#include "ir/plan.h"

#include <algorithm>
#include <unordered_map>

#include "backend/caching_pool.h"

namespace nn::ir {

const char* memory_mode_name(MemoryMode m) { return m == MemoryMode::arena ? "arena" : "pool"; }

bool parse_memory_mode(std::string_view name, MemoryMode& out) {
  if (name == "arena") out = MemoryMode::arena;
  else if (name == "pool") out = MemoryMode::pool;
  else return false;
  return true;
}

namespace {

// The pool recycling the arena buffers in this order: a buffer takes a
// block of its size class (a free one, or a new one) when first written and
// gives it back after its last use. Returns the peak of the bytes taken;
// fills the block of each buffer.
size_t simulate_pool(const MemoryPlan& m, size_t steps, std::vector<uint32_t>& block_of_buffer) {
  const size_t nb = m.buffers.list.size();
  std::vector<std::vector<uint32_t>> starts(steps), ends(steps);
  for (uint32_t b = 0; b < nb; ++b)
    if (m.in_arena[b]) starts[m.begin[b]].push_back(b), ends[m.end[b]].push_back(b);
  std::unordered_map<size_t, std::vector<uint32_t>> free_blocks;  // by size class
  std::vector<size_t> block_bytes;
  block_of_buffer.assign(nb, kNone);
  size_t live = 0, peak = 0;
  for (size_t s = 0; s < steps; ++s) {
    for (uint32_t b : starts[s]) {
      const size_t bytes = backend::CachingPool::size_class(m.buffers.list[b].bytes);
      auto& fl = free_blocks[bytes];
      if (fl.empty()) {
        block_of_buffer[b] = uint32_t(block_bytes.size());
        block_bytes.push_back(bytes);
      } else {
        block_of_buffer[b] = fl.back();
        fl.pop_back();
      }
      live += bytes;
    }
    peak = std::max(peak, live);
    for (uint32_t b : ends[s]) {
      live -= block_bytes[block_of_buffer[b]];
      free_blocks[block_bytes[block_of_buffer[b]]].push_back(block_of_buffer[b]);
    }
  }
  for (uint32_t b = 0, next = uint32_t(block_bytes.size()); b < nb; ++b)
    if (m.buffers.list[b].kind == BufferKind::own) block_of_buffer[b] = next++;
  return peak;
}

Plan plan_for(const Graph& g, const Buffers& buffers, Schedule s, MemoryMode mode) {
  Plan p;
  p.kind = s;
  p.memory = mode;
  p.order = schedule(g, s);
  const size_t nv = g.values.size(), steps = p.order.size();
  p.readers.assign(nv, 0);
  std::vector<uint32_t> last(nv, kNone);  // step of the last read
  for (uint32_t step = 0; step < steps; ++step)
    for (ValueId v : g.nodes[p.order[step]].inputs) {
      ++p.readers[v];
      last[v] = step;
    }
  std::vector<bool> kept(nv, false);
  for (ValueId v : g.outputs) kept[v] = true;
  for (const StateUpdate& u : g.updates) kept[u.value] = true;
  std::vector<uint32_t> step_of(g.nodes.size(), 0);
  for (uint32_t step = 0; step < steps; ++step) step_of[p.order[step]] = step;
  p.dies_after.assign(steps, {});
  for (ValueId v = 0; v < nv; ++v) {
    const Value& val = g.values[v];
    if (val.role != Role::intermediate || kept[v] || val.producer == kNone) continue;
    p.dies_after[last[v] == kNone ? step_of[val.producer] : last[v]].push_back(v);
  }

  p.memory_plan = plan_memory(g, buffers, p.order);
  std::vector<uint32_t> pool_block;
  p.pool_bytes = simulate_pool(p.memory_plan, steps, pool_block);
  p.lower_bound_bytes = p.memory_plan.lower_bound_bytes;
  if (mode == MemoryMode::arena) {
    p.planned_bytes = p.memory_plan.arena_bytes;
    p.block_of_value = p.memory_plan.block_of_value;
  } else {
    p.planned_bytes = p.pool_bytes;
    p.block_of_value.assign(nv, kNone);
    for (ValueId v = 0; v < nv; ++v) p.block_of_value[v] = pool_block[buffers.of_value[v]];
  }
  return p;
}

}  // namespace

Plan make_plan(const Graph& g, Schedule s, MemoryMode m) {
  const Buffers buffers = find_buffers(g);
  if (s != Schedule::automatic) return plan_for(g, buffers, s, m);
  Plan best = plan_for(g, buffers, Schedule::serial, m);
  for (Schedule other : {Schedule::greedy, Schedule::bfs}) {
    Plan p = plan_for(g, buffers, other, m);
    if (p.planned_bytes < best.planned_bytes) best = std::move(p);
  }
  return best;
}

}  // namespace nn::ir
