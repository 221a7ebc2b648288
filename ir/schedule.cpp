// Orders of a graph's nodes (ir/schedule.h): the edges every order keeps,
// then Kahn's algorithm with a FIFO queue (BFS) or a priority queue scored
// by bytes freed minus bytes taken (greedy); in every order, collectives
// start as early and complete as late as their edges allow.
#include "ir/schedule.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <queue>

#include "ir/buffers.h"

namespace nn::ir {

const char* schedule_name(Schedule s) {
  switch (s) {
    case Schedule::automatic: return "auto";
    case Schedule::serial: return "serial";
    case Schedule::bfs: return "bfs";
    case Schedule::greedy: return "greedy";
    case Schedule::frees_first: return "frees-first";
  }
  return "?";
}

bool parse_schedule(std::string_view name, Schedule& out) {
  if (name == "auto") out = Schedule::automatic;
  else if (name == "serial") out = Schedule::serial;
  else if (name == "bfs") out = Schedule::bfs;
  else if (name == "greedy") out = Schedule::greedy;
  else if (name == "frees-first") out = Schedule::frees_first;
  else return false;
  return true;
}

namespace {

// Edges between nodes as flat successor lists, and each node's count of
// predecessors.
struct Dependencies {
  std::vector<uint32_t> first, next;  // successors of i: next[first[i] .. first[i + 1])
  std::vector<uint32_t> pending;

  explicit Dependencies(const Graph& g) {
    const size_t n = g.nodes.size();
    std::vector<std::pair<NodeId, NodeId>> edges;
    edges.reserve(g.edge_count() + n);
    // The data: each input's producer comes first.
    for (NodeId i = 0; i < n; ++i)
      for (ValueId v : g.nodes[i].inputs)
        if (NodeId p = g.values[v].producer; p != kNone) edges.emplace_back(p, i);
    // Random ops and host calls in their trace order.
    NodeId last_effect = kNone;
    for (NodeId i = 0; i < n; ++i) {
      if (!g.nodes[i].ordered_effect()) continue;
      if (last_effect != kNone) edges.emplace_back(last_effect, i);
      last_effect = i;
    }
    // A recomputed node stays where the trace put it, after the node before.
    for (NodeId i = 1; i < n; ++i)
      if (g.nodes[i].recomputed) edges.emplace_back(i - 1, i);
    // A node overwriting an input runs after every other reader of that
    // input's view class: it is the last to see the old contents.
    const std::vector<ValueId> root = view_roots(g);
    std::vector<uint32_t> rfirst(g.values.size() + 1, 0), readers;
    for (const Node& node : g.nodes)
      for (ValueId v : node.inputs) ++rfirst[root[v] + 1];
    for (size_t v = 0; v < g.values.size(); ++v) rfirst[v + 1] += rfirst[v];
    readers.resize(rfirst.back());
    std::vector<uint32_t> at(rfirst.begin(), rfirst.end() - 1);
    for (NodeId i = 0; i < n; ++i)
      for (ValueId v : g.nodes[i].inputs) readers[at[root[v]]++] = i;
    for (NodeId i = 0; i < n; ++i) {
      const Node& node = g.nodes[i];
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        const int k = node.overwritten_input(o);
        if (k < 0 || size_t(k) >= node.inputs.size()) continue;
        const ValueId r = root[node.inputs[size_t(k)]];
        for (uint32_t j = rfirst[r]; j < rfirst[r + 1]; ++j)
          if (readers[j] != i) edges.emplace_back(readers[j], i);
      }
    }

    first.assign(n + 1, 0);
    pending.assign(n, 0);
    for (auto [a, b] : edges) {
      ++first[a + 1];
      ++pending[b];
    }
    for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
    next.resize(edges.size());
    std::vector<uint32_t> pos(first.begin(), first.end() - 1);
    for (auto [a, b] : edges) next[pos[a]++] = b;
  }
};

// An order that left nodes out met a cycle: a pass's bug, never to reach the
// executor.
std::vector<NodeId> all_placed(const Graph& g, std::vector<NodeId> order) {
  if (order.size() != g.nodes.size())
    throw backend::Error("internal: graph " + g.name + " has a cycle (" + std::to_string(g.nodes.size() - order.size()) +
                         " nodes could not be ordered)");
  return order;
}

// A node completing a collective (all_reduce_wait): BFS and greedy run it
// only when nothing else is ready, so the communication overlaps the rest.
bool completes(const Graph& g, NodeId i) { return g.nodes[i].op && g.nodes[i].op->effect == backend::Effect::completion; }

std::vector<NodeId> bfs_order(const Graph& g) {
  Dependencies d(g);
  std::vector<NodeId> order;
  order.reserve(g.nodes.size());
  std::deque<NodeId> ready, last;  // last: completions
  auto push = [&](NodeId i) { (completes(g, i) ? last : ready).push_back(i); };
  for (NodeId i = 0; i < g.nodes.size(); ++i)
    if (!d.pending[i]) push(i);
  while (!ready.empty() || !last.empty()) {
    std::deque<NodeId>& from = ready.empty() ? last : ready;
    NodeId i = from.front();
    from.pop_front();
    order.push_back(i);
    for (uint32_t e = d.first[i]; e < d.first[i + 1]; ++e)
      if (--d.pending[d.next[e]] == 0) push(d.next[e]);
  }
  return all_placed(g, std::move(order));
}

// Greedy: of the ready nodes, the one whose run frees the most arena bytes
// less the arena bytes its outputs take; ties go to the earlier node in
// trace order. With `clamp` (frees-first), a node that takes at least as
// much as it frees scores 0: only nodes that free memory move ahead of the
// trace order (plain greedy also runs a small allocation early, such as a
// mask nothing reads until much later). A buffer is freed by its last
// reader, so a node's score rises when the other readers of one of its
// inputs have all run: such nodes are queued again with their new score
// (stale entries are skipped).
// What both greedy orders start from: the dependencies, the distinct nodes
// reading each arena buffer and the first scores. make_plan asks for both
// orders; it is built once for them.
struct GreedyStart {
  Dependencies d;
  Buffers buf;
  std::vector<uint32_t> rfirst, readers;
  std::vector<uint32_t> left;  // readers not yet run
  std::vector<int64_t> score;

  explicit GreedyStart(const Graph& g) : d(g), buf(find_buffers(g)) {
    const size_t n = g.nodes.size();
    const size_t nb = buf.list.size();
    auto in_arena = [&](uint32_t b) { return buf.list[b].kind == BufferKind::arena; };
    rfirst.assign(nb + 1, 0);
    std::vector<uint32_t> seen(nb, kNone);
    for (NodeId i = 0; i < n; ++i)
      for (ValueId v : g.nodes[i].inputs)
        if (uint32_t b = buf.of_value[v]; in_arena(b) && seen[b] != i) seen[b] = i, ++rfirst[b + 1];
    for (size_t b = 0; b < nb; ++b) rfirst[b + 1] += rfirst[b];
    readers.resize(rfirst.back());
    std::vector<uint32_t> at(rfirst.begin(), rfirst.end() - 1);
    seen.assign(nb, kNone);
    for (NodeId i = 0; i < n; ++i)
      for (ValueId v : g.nodes[i].inputs)
        if (uint32_t b = buf.of_value[v]; in_arena(b) && seen[b] != i) seen[b] = i, readers[at[b]++] = i;
    left.resize(nb);
    for (size_t b = 0; b < nb; ++b) left[b] = rfirst[b + 1] - rfirst[b];
    score.assign(n, 0);
    for (NodeId i = 0; i < n; ++i)
      for (ValueId o : g.nodes[i].outputs)
        if (uint32_t b = buf.of_value[o]; in_arena(b) && buf.list[b].root == o) score[i] -= int64_t(buf.list[b].bytes);
    for (size_t b = 0; b < nb; ++b)
      if (left[b] == 1) score[readers[rfirst[b]]] += int64_t(buf.list[b].bytes);
  }
};

std::vector<NodeId> greedy_order(const Graph& g, const GreedyStart& start, bool clamp) {
  const size_t n = g.nodes.size();
  Dependencies d = start.d;
  const Buffers& buf = start.buf;
  const size_t nb = buf.list.size();
  auto in_arena = [&](uint32_t b) { return buf.list[b].kind == BufferKind::arena; };
  const std::vector<uint32_t>& rfirst = start.rfirst;
  const std::vector<uint32_t>& readers = start.readers;
  std::vector<uint32_t> left = start.left;
  std::vector<int64_t> score = start.score;

  struct Entry {
    int64_t score;
    NodeId node;
    int64_t key;  // the score, clamped or not
    bool operator<(const Entry& o) const { return key != o.key ? key < o.key : node > o.node; }
  };
  auto entry = [&](NodeId i) {
    if (completes(g, i)) return Entry{score[i], i, INT64_MIN};
    return Entry{score[i], i, clamp ? std::max<int64_t>(score[i], 0) : score[i]};
  };
  std::priority_queue<Entry> ready;
  std::vector<bool> done(n, false);
  std::vector<uint32_t> counted(nb, kNone);  // the last node that counted its read of each buffer
  for (NodeId i = 0; i < n; ++i)
    if (!d.pending[i]) ready.push(entry(i));
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    const Entry e = ready.top();
    ready.pop();
    if (done[e.node] || e.score != score[e.node]) continue;
    const NodeId i = e.node;
    done[i] = true;
    order.push_back(i);
    for (ValueId v : g.nodes[i].inputs) {
      const uint32_t b = buf.of_value[v];
      if (!in_arena(b) || counted[b] == i) continue;  // each buffer once per node
      counted[b] = i;
      if (--left[b] != 1) continue;
      for (uint32_t j = rfirst[b]; j < rfirst[b + 1]; ++j) {
        const NodeId r = readers[j];
        if (done[r]) continue;
        score[r] += int64_t(buf.list[b].bytes);
        if (!d.pending[r]) ready.push(entry(r));
        break;
      }
    }
    for (uint32_t k = d.first[i]; k < d.first[i + 1]; ++k)
      if (--d.pending[d.next[k]] == 0) ready.push(entry(d.next[k]));
  }
  return all_placed(g, std::move(order));
}

// Collectives started early and completed late (SPEC §14): each
// all_reduce_start moves up to right after the last node it depends on (its
// inputs' producers and the ordered effect before it), each all_reduce_wait
// down to right before the first node reading one of its outputs. What runs
// between the two overlaps the communication.
std::vector<NodeId> overlap_collectives(const Graph& g, std::vector<NodeId> order) {
  auto is = [&](NodeId i, OpId id) { return g.nodes[i].op && g.nodes[i].op->id == id; };
  std::vector<NodeId> starts, waits;
  for (NodeId i : order) {
    if (is(i, OpId::all_reduce_start)) starts.push_back(i);
    if (is(i, OpId::all_reduce_wait)) waits.push_back(i);
  }
  if (starts.empty()) return order;
  std::vector<size_t> pos(g.nodes.size());
  auto number = [&] {
    for (size_t k = 0; k < order.size(); ++k) pos[order[k]] = k;
  };
  auto move = [&](size_t from, size_t to) {  // `to` counted after the removal
    const NodeId n = order[from];
    order.erase(order.begin() + ptrdiff_t(from));
    order.insert(order.begin() + ptrdiff_t(to), n);
  };
  for (NodeId s : starts) {
    number();
    size_t after = 0;  // one past the last dependency
    for (ValueId v : g.nodes[s].inputs)
      if (NodeId p = g.values[v].producer; p != kNone) after = std::max(after, pos[p] + 1);
    for (NodeId e = s; e-- > 0;)
      if (g.nodes[e].ordered_effect()) {
        after = std::max(after, pos[e] + 1);
        break;
      }
    if (after < pos[s]) move(pos[s], after);
  }
  std::vector<NodeId> made_by(g.values.size(), kNone);
  for (NodeId w : waits)
    for (ValueId v : g.nodes[w].outputs) made_by[v] = w;
  for (NodeId w : waits) {
    number();
    size_t before = order.size();  // the first reader's place
    for (NodeId i = 0; i < g.nodes.size(); ++i)
      for (ValueId u : g.nodes[i].inputs)
        if (made_by[u] == w) before = std::min(before, pos[i]);
    if (before == order.size()) continue;  // read by no node: its outputs are the graph's
    if (before > pos[w] + 1) move(pos[w], before - 1);
  }
  return order;
}

}  // namespace

std::vector<NodeId> schedule(const Graph& g, Schedule s) {
  if (s == Schedule::bfs) return overlap_collectives(g, bfs_order(g));
  if (s == Schedule::greedy || s == Schedule::frees_first)
    return overlap_collectives(g, greedy_order(g, GreedyStart(g), s == Schedule::frees_first));
  std::vector<NodeId> order(g.nodes.size());
  for (NodeId i = 0; i < order.size(); ++i) order[i] = i;
  return overlap_collectives(g, std::move(order));
}

std::vector<std::vector<NodeId>> schedules(const Graph& g, std::span<const Schedule> kinds) {
  std::optional<GreedyStart> start;
  std::vector<std::vector<NodeId>> orders;
  for (Schedule s : kinds) {
    if (s == Schedule::greedy || s == Schedule::frees_first) {
      if (!start) start.emplace(g);
      orders.push_back(overlap_collectives(g, greedy_order(g, *start, s == Schedule::frees_first)));
    } else {
      orders.push_back(schedule(g, s));
    }
  }
  return orders;
}

}  // namespace nn::ir
