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
  // Buffers by step, flat: starting at s: items[first[s] .. first[s + 1]),
  // ending at s: the same with steps + 1 added.
  std::vector<uint32_t> first(2 * steps + 1, 0), items;
  for (uint32_t b = 0; b < nb; ++b)
    if (m.in_arena[b]) ++first[m.begin[b] + 1], ++first[steps + m.end[b] + 1];
  for (size_t s = 0; s < 2 * steps; ++s) first[s + 1] += first[s];
  items.resize(first.back());
  std::vector<uint32_t> at(first.begin(), first.end() - 1);
  for (uint32_t b = 0; b < nb; ++b)
    if (m.in_arena[b]) items[at[m.begin[b]]++] = b, items[at[steps + m.end[b]]++] = b;

  std::unordered_map<size_t, std::vector<uint32_t>> free_blocks;  // by size class
  std::vector<size_t> block_bytes;
  block_of_buffer.assign(nb, kNone);
  size_t live = 0, peak = 0;
  for (size_t s = 0; s < steps; ++s) {
    for (uint32_t i = first[s]; i < first[s + 1]; ++i) {
      const uint32_t b = items[i];
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
    for (uint32_t i = first[steps + s]; i < first[steps + s + 1]; ++i) {
      const uint32_t blk = block_of_buffer[items[i]];
      live -= block_bytes[blk];
      free_blocks[block_bytes[blk]].push_back(blk);
    }
  }
  for (uint32_t b = 0, next = uint32_t(block_bytes.size()); b < nb; ++b)
    if (m.buffers.list[b].kind == BufferKind::own) block_of_buffer[b] = next++;
  return peak;
}

// The order and its buffers' placement (plan_memory's first half: the rest
// waits until the order is chosen).
Plan plan_order(const Graph& g, const Buffers& buffers, Schedule s, std::vector<NodeId> order, MemoryMode mode) {
  Plan p;
  p.kind = s;
  p.memory = mode;
  p.order = std::move(order);
  p.memory_plan = place_buffers(g, buffers, p.order);
  p.lower_bound_bytes = p.memory_plan.lower_bound_bytes;
  return p;
}

// The rest of the plan: readers, deaths, the pool's figure, the picture.
void finish(const Graph& g, Plan& p) {
  describe_placement(g, p.order, p.memory_plan);
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
  // Each intermediate dies after its last read, or where it is made when
  // nothing reads it; what the host keeps never does.
  std::vector<uint32_t> death(nv, kNone);
  p.dead_from.assign(steps + 1, 0);
  for (ValueId v = 0; v < nv; ++v) {
    const Value& val = g.values[v];
    if (val.role != Role::intermediate || kept[v] || val.producer == kNone) continue;
    death[v] = last[v] == kNone ? step_of[val.producer] : last[v];
    ++p.dead_from[death[v] + 1];
  }
  for (size_t s = 0; s < steps; ++s) p.dead_from[s + 1] += p.dead_from[s];
  p.dead.resize(p.dead_from.back());
  std::vector<uint32_t> at(p.dead_from.begin(), p.dead_from.end() - 1);
  for (ValueId v = 0; v < nv; ++v)
    if (death[v] != kNone) p.dead[at[death[v]]++] = v;

  const Buffers& buffers = p.memory_plan.buffers;
  p.copy_output.assign(g.outputs.size(), false);
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    if (i < g.output_holders.size() && g.output_holders[i] != kNone) continue;  // the trace returned the caller's
    const uint32_t b = buffers.of_value[g.outputs[i]];
    bool shared = buffers.list[b].kind == BufferKind::bound;
    for (size_t j = 0; j < i && !shared; ++j) shared = buffers.of_value[g.outputs[j]] == b;
    p.copy_output[i] = shared;
  }

  std::vector<uint32_t> pool_block;
  p.pool_bytes = simulate_pool(p.memory_plan, steps, pool_block);
  if (p.memory == MemoryMode::arena) {
    p.planned_bytes = p.memory_plan.arena_bytes;
    p.block_of_value = p.memory_plan.block_of_value;
  } else {
    p.planned_bytes = p.pool_bytes;
    p.block_of_value.assign(nv, kNone);
    for (ValueId v = 0; v < nv; ++v) p.block_of_value[v] = pool_block[p.memory_plan.buffers.of_value[v]];
  }
}

// Whether an order whose lower bound is `bound` may still beat an arena of
// `best` bytes by enough to pay for placing it: by more than 1/64 (the
// placement is most of a large graph's plan; best fit mostly lands within
// a fraction of a percent of its bound).
bool worth_placing(size_t bound, size_t best) { return bound + best / 64 < best; }

}  // namespace

Plan make_plan(const Graph& g, Schedule s, MemoryMode m) {
  const Buffers buffers = find_buffers(g);
  if (s != Schedule::automatic) {
    Plan p = plan_order(g, buffers, s, schedule(g, s), m);
    finish(g, p);
    return p;
  }
  // The candidate orders by their lower bound (serial first on a tie). With
  // the pool the lowest bound wins; with the arena, an order is placed only
  // while its bound is clearly below the smallest arena placed so far (no
  // arena is below its bound), which is mostly the first one.
  struct Candidate {
    Schedule kind;
    std::vector<NodeId> order;
    size_t lower_bound;
  };
  std::vector<Candidate> cands;
  const Schedule kinds[] = {Schedule::serial, Schedule::greedy, Schedule::frees_first};
  std::vector<std::vector<NodeId>> orders = schedules(g, kinds);
  for (size_t k = 0; k < std::size(kinds); ++k) {
    const size_t bound = liveness_lower_bound(g, buffers, orders[k]);
    cands.push_back({kinds[k], std::move(orders[k]), bound});
  }
  std::stable_sort(cands.begin(), cands.end(),
                   [](const Candidate& a, const Candidate& b) { return a.lower_bound < b.lower_bound; });
  Plan best = plan_order(g, buffers, cands[0].kind, std::move(cands[0].order), m);
  if (m == MemoryMode::arena)
    for (size_t i = 1; i < cands.size() && worth_placing(cands[i].lower_bound, best.memory_plan.arena_bytes); ++i) {
      Plan p = plan_order(g, buffers, cands[i].kind, std::move(cands[i].order), m);
      if (p.memory_plan.arena_bytes < best.memory_plan.arena_bytes) best = std::move(p);
    }
  finish(g, best);
  return best;
}

}  // namespace nn::ir
