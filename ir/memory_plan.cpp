// The static memory plan (ir/memory_plan.h): live ranges of the arena
// buffers for one order; one sweep over the steps that places each buffer
// with best fit when it is first written, frees it after its last read,
// measures the lower bound and notes each step's scratch (the largest free
// gap); then, for arenas small enough, the largest-first placement, kept
// where its arena is smaller (its scratch found again by a second sweep).
#include "ir/memory_plan.h"

#include <algorithm>

namespace nn::ir {

namespace {

// Buffers per step in one flat array: the ones starting (or ending) at step s
// are items[first[s] .. first[s + 1]).
struct PerStep {
  std::vector<uint32_t> first, items;
  PerStep(size_t steps, const std::vector<uint32_t>& step_of, const std::vector<bool>& use) : first(steps + 1, 0) {
    for (size_t b = 0; b < step_of.size(); ++b)
      if (use[b]) ++first[step_of[b] + 1];
    for (size_t s = 0; s < steps; ++s) first[s + 1] += first[s];
    items.resize(first[steps]);
    std::vector<uint32_t> at(first.begin(), first.end() - 1);
    for (size_t b = 0; b < step_of.size(); ++b)
      if (use[b]) items[at[step_of[b]]++] = uint32_t(b);
  }
  std::span<const uint32_t> at(size_t s) const { return {items.data() + first[s], items.data() + first[s + 1]}; }
};

// Arena a placed largest first (by bytes, then by bytes times steps), where
// it has few enough buffers for that, each kept if it needs less memory than
// the placement before.
void try_largest_first(MemoryPlan& p, uint32_t a) {
  std::vector<uint32_t> members;
  std::vector<LiveRange> ranges;
  for (uint32_t b = 0; b < p.buffers.list.size(); ++b)
    if (p.in_arena[b] && p.arena_of[b] == a) {
      members.push_back(b);
      ranges.push_back({arena_size(p.buffers.list[b].bytes), p.begin[b], p.end[b]});
    }
  if (members.size() > kLargestFirstLimit) return;
  for (Largest by : {Largest::bytes, Largest::bytes_times_steps}) {
    std::vector<size_t> offsets;
    const size_t bytes = place_largest_first(ranges, offsets, by);
    if (bytes >= p.arenas[a].bytes) continue;
    p.arenas[a].bytes = bytes;
    p.arenas[a].largest_first = true;
    for (size_t i = 0; i < members.size(); ++i) p.offset[members[i]] = offsets[i];
    if (bytes == p.arenas[a].lower_bound) return;
  }
}

// The gradients an all_reduce_start copies into its bucket, made to lie
// where the copy would put them (the start then skips it; the pieces were
// always the bucket's bytes in order). A piece qualifies when its buffer is
// an arena buffer of exactly its size that nothing uses after the start
// (the all-reduce overwrites it there) and that holds no other piece; the
// bucket's live range then starts where the earliest piece's did.
void place_pieces_in_buckets(const Graph& g, std::span<const NodeId> order, MemoryPlan& p) {
  const size_t nb = p.buffers.list.size();
  p.inside.assign(nb, kNone);
  p.inside_at.assign(nb, 0);
  for (uint32_t s = 0; s < order.size(); ++s) {
    const Node& n = g.nodes[order[s]];
    if (!n.is(OpId::all_reduce_start)) continue;
    const uint32_t bucket = p.buffers.of_value[n.outputs[0]];
    if (!p.in_arena[bucket]) continue;
    size_t at = 0;
    for (ValueId v : n.inputs) {
      const uint32_t b = p.buffers.of_value[v];
      const size_t bytes = value_bytes(g.values[v]);
      const bool fits = p.in_arena[b] && p.inside[b] == kNone && p.buffers.list[b].bytes == bytes;
      if (b != bucket && fits && p.end[b] == s && g.values[v].type.device == g.values[n.outputs[0]].type.device) {
        p.inside[b] = bucket;
        p.inside_at[b] = at;
        p.in_arena[b] = false;
        p.begin[bucket] = std::min(p.begin[bucket], p.begin[b]);
      }
      at += bytes;
    }
  }
}

// Live ranges of the arena buffers for `order`, each buffer's arena (one per
// device, in order of first use), and each arena's lower bound.
void find_live_ranges(const Graph& g, std::span<const NodeId> order, MemoryPlan& p) {
  const std::vector<Buffer>& list = p.buffers.list;
  const size_t nb = list.size(), steps = order.size();
  p.offset.assign(nb, 0);
  p.arena_of.assign(nb, kNone);
  // From the step that writes its root to the last step that reads or
  // writes any value sharing it.
  p.begin.assign(nb, 0);
  p.end.assign(nb, 0);
  p.in_arena.assign(nb, false);
  for (uint32_t s = 0; s < steps; ++s) {
    const Node& n = g.nodes[order[s]];
    for (ValueId v : n.inputs) {
      const uint32_t b = p.buffers.of_value[v];
      p.end[b] = std::max(p.end[b], s);
    }
    for (ValueId v : n.outputs) {
      const uint32_t b = p.buffers.of_value[v];
      if (list[b].kind != BufferKind::arena) continue;
      if (list[b].root == v) {
        p.begin[b] = s;
        p.in_arena[b] = true;
      }
      p.end[b] = std::max(p.end[b], s);
    }
  }
  place_pieces_in_buckets(g, order, p);
  for (uint32_t b = 0; b < nb; ++b) {
    if (!p.in_arena[b]) continue;
    backend::Device* dev = g.values[list[b].root].type.device;
    if (!dev) dev = backend::cpu_device();
    uint32_t a = 0;
    while (a < p.arenas.size() && p.arenas[a].device != dev) ++a;
    if (a == p.arenas.size()) p.arenas.push_back({dev, 0, 0});
    p.arena_of[b] = a;
  }
  for (const NodeId id : order)
    if (const Node& n = g.nodes[id]; n.is(OpId::all_reduce_start)) {
      const uint32_t bucket = p.buffers.of_value[n.outputs[0]];
      if (p.in_arena[bucket]) p.arenas[p.arena_of[bucket]].holds_bucket = true;
    }
  // The bytes live at each step: taken at the first, given back after the
  // last; a node's outputs are written while its inputs are read.
  const size_t na = p.arenas.size();
  std::vector<int64_t> delta((steps + 1) * na, 0);
  for (uint32_t b = 0; b < nb; ++b)
    if (p.in_arena[b]) {
      const int64_t size = int64_t(arena_size(list[b].bytes));
      delta[p.begin[b] * na + p.arena_of[b]] += size;
      delta[(p.end[b] + 1) * na + p.arena_of[b]] -= size;
    }
  std::vector<int64_t> live(na, 0);
  for (size_t s = 0; s < steps; ++s)
    for (size_t a = 0; a < na; ++a) {
      live[a] += delta[s * na + a];
      p.arenas[a].lower_bound = std::max(p.arenas[a].lower_bound, size_t(live[a]));
    }
  p.lower_bound_bytes = 0;
  for (const DeviceArena& a : p.arenas) p.lower_bound_bytes += a.lower_bound;
}

}  // namespace

size_t liveness_lower_bound(const Graph& g, const Buffers& buffers, std::span<const NodeId> order) {
  MemoryPlan p;
  p.buffers = buffers;
  find_live_ranges(g, order, p);
  return p.lower_bound_bytes;
}

MemoryPlan plan_memory(const Graph& g, Buffers buffers, std::span<const NodeId> order) {
  MemoryPlan p = place_buffers(g, std::move(buffers), order);
  describe_placement(g, order, p);
  return p;
}

MemoryPlan place_buffers(const Graph& g, Buffers buffers, std::span<const NodeId> order) {
  MemoryPlan p;
  p.buffers = std::move(buffers);
  find_live_ranges(g, order, p);
  const std::vector<Buffer>& list = p.buffers.list;
  const size_t steps = order.size();
  const size_t na = p.arenas.size();
  std::vector<BestFitArena> alloc(na);
  // Best fit in order: outputs placed before the inputs dying at their step
  // are given back. What each step leaves free is noted on the way: the
  // largest free range below the top, and the top, above which the arena is
  // free too (its size is known at the end).
  const PerStep starts(steps, p.begin, p.in_arena), ends(steps, p.end, p.in_arena);
  p.scratch.resize(steps * na);
  std::vector<size_t> top(steps * na);
  for (size_t s = 0; s < steps; ++s) {
    for (uint32_t b : starts.at(s)) p.offset[b] = alloc[p.arena_of[b]].allocate(arena_size(list[b].bytes));
    for (size_t a = 0; a < na; ++a) {
      p.scratch[s * na + a] = alloc[a].largest_below_top();
      top[s * na + a] = alloc[a].top();
    }
    for (uint32_t b : ends.at(s)) alloc[p.arena_of[b]].release(p.offset[b], arena_size(list[b].bytes));
  }
  for (uint32_t a = 0; a < na; ++a) {
    p.arenas[a].bytes = alloc[a].high_water();
    // Of equal ranges the lower one: the one below the top.
    for (size_t s = 0; s < steps; ++s)
      if (auto& [offset, bytes] = p.scratch[s * na + a]; p.arenas[a].bytes - top[s * na + a] > bytes)
        offset = top[s * na + a], bytes = p.arenas[a].bytes - top[s * na + a];
    if (p.arenas[a].bytes > p.arenas[a].lower_bound) try_largest_first(p, a);
    p.arena_bytes += p.arenas[a].bytes;
  }
  for (uint32_t b = 0; b < list.size(); ++b)
    if (const uint32_t holder = p.inside[b]; holder != kNone) {
      p.arena_of[b] = p.arena_of[holder];
      p.offset[b] = p.offset[holder] + p.inside_at[b];
    }
  return p;
}

namespace {

// What each step leaves free of the arenas placed largest first (the best
// fit's sweep noted it for the others).
void find_scratch_largest_first(std::span<const NodeId> order, MemoryPlan& p) {
  const std::vector<Buffer>& list = p.buffers.list;
  const size_t steps = order.size(), na = p.arenas.size();
  const PerStep starts(steps, p.begin, p.in_arena), ends(steps, p.end, p.in_arena);
  std::vector<FreeRanges> free(na);
  for (size_t a = 0; a < na; ++a) free[a].insert(0, p.arenas[a].bytes);
  for (size_t s = 0; s < steps; ++s) {
    for (uint32_t b : starts.at(s)) free[p.arena_of[b]].remove(p.offset[b], arena_size(list[b].bytes));
    for (size_t a = 0; a < na; ++a)
      if (p.arenas[a].largest_first) p.scratch[s * na + a] = free[a].largest();
    for (uint32_t b : ends.at(s)) free[p.arena_of[b]].insert(p.offset[b], arena_size(list[b].bytes));
  }
}

}  // namespace

void describe_placement(const Graph& g, std::span<const NodeId> order, MemoryPlan& p) {
  const std::vector<Buffer>& list = p.buffers.list;
  const size_t steps = order.size();
  const PerStep starts(steps, p.begin, p.in_arena);
  if (std::any_of(p.arenas.begin(), p.arenas.end(), [](const DeviceArena& a) { return a.largest_first; }))
    find_scratch_largest_first(order, p);

  // Region ids for the picture, numbered in order of first use.
  const size_t nb = list.size();
  std::vector<uint32_t> id_of_buffer(nb, kNone);
  std::map<std::pair<uint32_t, size_t>, uint32_t> region;
  uint32_t next_id = 0;
  for (uint32_t s = 0; s < steps; ++s)
    for (uint32_t b : starts.at(s)) {
      auto [it, fresh] = region.emplace(std::make_pair(p.arena_of[b], p.offset[b]), next_id);
      if (fresh) ++next_id;
      id_of_buffer[b] = it->second;
    }
  for (uint32_t b = 0; b < list.size(); ++b) {
    if (list[b].kind == BufferKind::own) id_of_buffer[b] = next_id++;
    if (p.inside[b] != kNone) id_of_buffer[b] = id_of_buffer[p.inside[b]];
  }
  p.block_of_value.assign(g.values.size(), kNone);
  for (ValueId v = 0; v < g.values.size(); ++v) {
    const uint32_t b = p.buffers.of_value[v];
    if (b < nb) p.block_of_value[v] = id_of_buffer[b];
  }
}

}  // namespace nn::ir
