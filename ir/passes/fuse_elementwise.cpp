// Pass `fuse-elementwise`: maximal groups of elementwise ops over one shape
// become one `fused` node whose kernel makes a single pass over memory
// (backend/ops/fused.cpp): `relu(x @ w + b)`'s add and relu, a relu's
// backward `where(y > 0, g, 0)`, and each optimizer's update of one param
// (sgd with momentum: four ops and two state updates; adam: a dozen; Owl's
// Fused_Adagrad, generalised).
//
// Who joins a group: a pure op with tile kernels (OpDef::tile) on the CPU
// (or on a GPU whose backend compiles fused kernels, unless
// NN_CUDA_FUSION=0) whose result has the group's shape and is of its compute dtype (f32 or
// f64) or bool, never a weak host number; whose operands are of the compute
// dtype or bool, or host numbers of the trace (weak one-element constants,
// inlined as immediates), so that the kernel converts nothing a lone op
// would have computed differently; and, for a bool result (a comparison),
// whose operands promote to the compute dtype or bool. Operands may
// broadcast to the group's shape.
//
// A group grows along producer-consumer edges, joining every compatible
// group its new member reads from, unless the two are forward and backward
// nodes and the move would not lower memory: a backward op joining the
// forward computes its result early and keeps it through the backward, which
// pays only when the operands it read die in the forward instead, and are
// larger. (A relu's mask `y > 0` joins the forward when y is not needed
// later, 1 byte kept for 4; else it stays with its `where`, which then reads
// y, and no mask is ever written.) Nor does it join a node outside the groups leads
// from one part to another (the fused node would then both feed and read
// it). It never spans a random op or a host call, whose order is kept. The
// fused node's outputs are the members' results read outside the group or
// kept (outputs, state updates); its parts keep each member's source line.
// The graph is then put in an order where every fused node comes after its
// inputs' producers: nodes keep their trace order as far as possible.
#include <algorithm>
#include <optional>
#include <queue>
#include <span>

#include "backend/ops/fused_program.h"
#include "ir/fused_node.h"

namespace nn::ir {
namespace {

using backend::DType;
// How far a cycle check may look before it gives up and refuses the merge:
// keeps the pass linear on long graphs.
constexpr size_t kMaxSearch = 4096;
// The most ops in one fused node: a kernel keeps a tile of each live step
// result, and a long unrolled chain would otherwise be one program whose
// live tiles no longer fit in cache.
constexpr size_t kMaxMembers = 256;

// Most groups never grow past one op: node ids kept inline up to four.
struct Group {
  ValueList members;
  uint8_t dtypes = 0;  // compute dtypes every member allows
  NodeId first = 0;    // the earliest member
  NodeId last = 0;     // the latest member
  uint32_t epoch = 0;  // ordered effects (random ops, host calls) before it
  bool forward = false;  // of forward nodes (or else backward and optimizer ones)
  bool alive = true;
  // Readers of members that were outside the group when recorded (some
  // have joined since: acyclic() drops those as it meets them).
  ValueList exits;
};

class FuseElementwise : public Pass {
 public:
  const char* name() const override { return "fuse-elementwise"; }

  size_t run(Graph& g) override {
    g_ = &g;
    const size_t n = g.nodes.size();
    group_.assign(n, kNone);
    stamp_.assign(n, 0);
    groups_.clear();
    group_seen_.clear();
    std::vector<uint8_t> dtypes(n);
    std::vector<uint32_t> epoch(n);
    // Each value's producer, dense: the walks below look it up for every
    // operand, and the values themselves are too large to stay in cache.
    producer_.resize(g.values.size());
    for (ValueId v = 0; v < g.values.size(); ++v) producer_[v] = g.values[v].producer;
    late_readers_.assign(g.values.size(), 0);
    for (const Node& node : g.nodes)
      if (node.phase != Phase::forward)
        for (ValueId v : node.inputs) ++late_readers_[v];
    for (ValueId v : g.outputs) late_readers_[v] = kNone;  // kept: never dies
    for (const StateUpdate& u : g.updates) late_readers_[u.value] = kNone;
    // Each node's readers, flat: readers_[reader_from_[x] .. reader_from_[x + 1]).
    reader_from_.assign(n + 1, 0);
    for (const Node& node : g.nodes)
      for (ValueId v : node.inputs)
        if (NodeId p = producer_[v]; p != kNone) ++reader_from_[p + 1];
    for (size_t x = 0; x < n; ++x) reader_from_[x + 1] += reader_from_[x];
    readers_.resize(reader_from_[n]);
    {
      std::vector<uint32_t> at(reader_from_.begin(), reader_from_.end() - 1);
      for (NodeId j = 0; j < n; ++j)
        for (ValueId v : g.nodes[j].inputs)
          if (NodeId p = producer_[v]; p != kNone) readers_[at[p]++] = j;
    }
    uint32_t effects = 0;
    for (NodeId i = 0; i < n; ++i) {
      if (g.nodes[i].ordered_effect()) ++effects;
      epoch[i] = effects;
      dtypes[i] = fusible_dtypes(g, g.nodes[i]);
    }
    for (NodeId i = 0; i < n; ++i) {
      if (!dtypes[i]) continue;
      const backend::TensorType& t = out_type(i);
      std::vector<uint32_t>& chosen = chosen_;
      chosen.clear();
      uint8_t m = dtypes[i];
      const bool forward = g.nodes[i].phase == Phase::forward;
      size_t size = 1;
      for (ValueId v : g.nodes[i].inputs) {
        const NodeId p = producer_[v];
        if (p == kNone || group_[p] == kNone) continue;
        const uint32_t c = group_[p];
        const Group& cg = groups_[c];
        if (std::find(chosen.begin(), chosen.end(), c) != chosen.end() || cg.epoch != epoch[i] ||
            (cg.forward != forward && !(cg.forward && frees_forward_memory(i))) || !(cg.dtypes & m) ||
            !same_space(out_type(cg.first), t) || size + cg.members.size() > kMaxMembers)
          continue;
        chosen.push_back(c);
        if (acyclic(chosen, i)) {
          m &= cg.dtypes;
          size += cg.members.size();
        } else {
          chosen.pop_back();
        }
      }
      uint32_t gid;
      if (chosen.empty()) {
        gid = uint32_t(groups_.size());
        groups_.push_back(Group{{}, m, i, i, epoch[i], forward, true, {}});
        group_seen_.push_back(0);
      } else {
        // The others join the largest: each member moves O(log n) times.
        std::swap(chosen[0], *std::max_element(chosen.begin(), chosen.end(), [&](uint32_t a, uint32_t b) {
          return groups_[a].members.size() < groups_[b].members.size();
        }));
        gid = chosen[0];
        for (size_t k = 1; k < chosen.size(); ++k) {
          Group& other = groups_[chosen[k]];
          for (NodeId x : other.members) group_[x] = gid;
          groups_[gid].members.insert(groups_[gid].members.end(), other.members.begin(), other.members.end());
          groups_[gid].first = std::min(groups_[gid].first, other.first);
          groups_[gid].last = std::max(groups_[gid].last, other.last);
          groups_[gid].exits.insert(groups_[gid].exits.end(), other.exits.begin(), other.exits.end());
          other = Group{};
          other.alive = false;
        }
        groups_[gid].dtypes = m;
      }
      Group& grp = groups_[gid];
      grp.members.push_back(i);
      grp.last = i;
      group_[i] = gid;
      grp.exits.insert(grp.exits.end(), readers_.data() + reader_from_[i], readers_.data() + reader_from_[i + 1]);
    }
    // Each group's node; on a GPU, a group whose kernel would take too many
    // inputs or outputs stays as its ops.
    const Uses uses = count_uses(g);
    fused_.clear();
    fused_.resize(groups_.size());
    size_t fused = 0;
    for (uint32_t gid = 0; gid < groups_.size(); ++gid) {
      Group& grp = groups_[gid];
      if (!grp.alive || grp.members.size() < 2) continue;
      std::sort(grp.members.begin(), grp.members.end());
      Node node = make_fused_node(g, grp.members, grp.dtypes & kFuseF32 ? DType::f32 : DType::f64, uses);
      const bool too_wide = node.inputs.size() > size_t(backend::kGpuFusedInputs) ||
                            node.outputs.size() > size_t(backend::kGpuFusedOutputs);
      if (too_wide && !on_cpu(out_type(grp.first).device)) continue;
      fused_[gid] = std::move(node);
      ++fused;
    }
    if (!fused) return 0;
    rebuild();
    return fused;
  }

 private:
  const backend::TensorType& out_type(NodeId i) const { return g_->values[g_->nodes[i].outputs[0]].type; }

  // Whether moving backward node i into the forward frees more than it
  // keeps: each operand is computed in the forward (or by a group there) and
  // read by no other node after it, so it dies there, and i's result is
  // smaller than they are.
  bool frees_forward_memory(NodeId i) const {
    const Graph& g = *g_;
    size_t freed = 0;
    for (ValueId v : g.nodes[i].inputs) {
      const Value& val = g.values[v];
      if (val.type.weak || val.producer == kNone) continue;  // host numbers, the caller's tensors
      const uint32_t pg = group_[val.producer];
      const bool in_forward = pg != kNone ? groups_[pg].forward : g.nodes[val.producer].phase == Phase::forward;
      if (!in_forward || late_readers_[v] != 1) return false;
      freed += val.type.nbytes();
    }
    return out_type(i).nbytes() < freed;
  }

  static bool same_space(const backend::TensorType& a, const backend::TensorType& b) {
    return a.shape == b.shape && same_device(a.device, b.device);
  }

  // Whether the groups `chosen` and node i can be one node: no path leaves
  // them through nodes outside and comes back, where every other group
  // counts as the one node it will be (a path may enter it at one member and
  // leave from another). The search runs forward from the members' readers:
  // elementwise results are read close by, while a search backward from i
  // would walk through GEMMs into the whole history of an unrolled loop.
  // Paths run forward in node order and i, the newest node, has no readers
  // yet, so only nodes before i need looking at. A group is left by its
  // exits, once, so that a long group (a gradient summed over the time
  // steps) costs its few exits rather than all its members' readers.
  //
  // The search gives up, refusing the merge, once it has counted kMaxSearch:
  // the chosen groups' exits, each node it reaches, and each group it
  // reaches as one more than its members (as the search that walked every
  // member counted; the count does not depend on the order of the walk, so
  // the fusion is the same).
  bool acyclic(const std::vector<uint32_t>& chosen, NodeId i) {
    auto inside = [&](NodeId x) {
      return x == i || (group_[x] != kNone && std::find(chosen.begin(), chosen.end(), group_[x]) != chosen.end());
    };
    ++cur_;
    std::vector<NodeId>& stack = stack_;
    stack.clear();
    size_t seen = 0;
    // Pushes the nodes in `next` not yet seen; false when one is inside (a path came back).
    auto push = [&](auto next) {
      for (NodeId r : next) {
        if (inside(r)) return false;
        if (r < i && stamp_[r] != cur_) stack.push_back(r);
      }
      return true;
    };
    for (uint32_t c : chosen) {
      ValueList& exits = groups_[c].exits;
      exits.erase_if([&](NodeId r) { return group_[r] == c; });
      if ((seen += exits.size()) > kMaxSearch) return false;
      for (NodeId r : exits)
        if (r < i && !inside(r) && stamp_[r] != cur_) stack.push_back(r);
    }
    while (!stack.empty()) {
      const NodeId x = stack.back();
      stack.pop_back();
      if (stamp_[x] == cur_) continue;
      stamp_[x] = cur_;
      const uint32_t k = group_[x];
      if (k == kNone || groups_[k].members.size() == 1) {
        if (++seen > kMaxSearch) return false;
        if (!push(std::span(readers_.begin() + reader_from_[x], readers_.begin() + reader_from_[x + 1])))
          return false;
        continue;
      }
      if (group_seen_[k] == cur_) continue;
      group_seen_[k] = cur_;
      if ((seen += 1 + groups_[k].members.size()) > kMaxSearch) return false;
      ValueList& exits = groups_[k].exits;
      exits.erase_if([&](NodeId r) { return group_[r] == k; });
      if (!push(std::span(exits))) return false;
    }
    return true;
  }

  // Replaces each group by its fused node, puts the graph in a valid order
  // (trace order where it can: a unit goes as soon as it is ready, the one
  // whose last member came first before others) and renumbers it.
  void rebuild() {
    Graph& g = *g_;
    const size_t n = g.nodes.size();
    // Units: a fused group, or a node left as it is (in place in g.nodes
    // until the new order moves it out).
    struct Unit {
      NodeId node;   // the node left as it is, or kNone
      uint32_t gid;  // else the group whose fused node it is
      NodeId key;    // the unit's last node in trace order
    };
    std::vector<uint32_t> unit_of(n);
    std::vector<Unit> units;
    std::vector<uint32_t> unit_of_group(groups_.size(), kNone);
    for (NodeId i = 0; i < n; ++i) {
      const uint32_t gid = group_[i];
      if (gid != kNone && fused_[gid]) {
        if (unit_of_group[gid] == kNone) {
          unit_of_group[gid] = uint32_t(units.size());
          units.push_back({kNone, gid, groups_[gid].members.back()});
        }
        unit_of[i] = unit_of_group[gid];
      } else {
        unit_of[i] = uint32_t(units.size());
        units.push_back({i, kNone, i});
      }
    }
    auto node_of = [&](const Unit& u) -> Node& { return u.node != kNone ? g.nodes[u.node] : *fused_[u.gid]; };
    // Edges from the producers of each unit's inputs, and along the ordered
    // effects, flat: next[next_from[u] .. next_from[u + 1]).
    const size_t nu = units.size();
    std::vector<uint32_t> next_from(nu + 1, 0), next, pending(nu, 0);
    auto for_each_edge = [&](auto edge) {
      uint32_t last_effect = kNone;
      for (uint32_t u = 0; u < nu; ++u) {
        const Node& node = node_of(units[u]);
        for (ValueId v : node.inputs)
          if (NodeId p = producer_[v]; p != kNone) edge(unit_of[p], u);
        if (node.ordered_effect()) {
          if (last_effect != kNone) edge(last_effect, u);
          last_effect = u;
        }
      }
    };
    for_each_edge([&](uint32_t a, uint32_t b) {
      ++next_from[a + 1];
      ++pending[b];
    });
    for (size_t u = 0; u < nu; ++u) next_from[u + 1] += next_from[u];
    next.resize(next_from[nu]);
    {
      std::vector<uint32_t> at(next_from.begin(), next_from.end() - 1);
      for_each_edge([&](uint32_t a, uint32_t b) { next[at[a]++] = b; });
    }
    using Ready = std::pair<NodeId, uint32_t>;  // (key, unit)
    std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
    for (uint32_t u = 0; u < nu; ++u)
      if (!pending[u]) ready.push({units[u].key, u});
    std::vector<Node> nodes;
    nodes.reserve(nu);
    while (!ready.empty()) {
      const uint32_t u = ready.top().second;
      ready.pop();
      for (uint32_t k = next_from[u]; k < next_from[u + 1]; ++k)
        if (const uint32_t w = next[k]; --pending[w] == 0) ready.push({units[w].key, w});
      nodes.push_back(std::move(node_of(units[u])));
    }
    if (nodes.size() != nu) throw backend::Error("internal: fuse-elementwise made a cycle");
    g.nodes = std::move(nodes);
    g.link_producers();
    Rewriter(g).apply();  // drops the members' inner values and renumbers
  }

  Graph* g_ = nullptr;
  std::vector<uint32_t> group_;  // per node: its group, or kNone
  std::vector<Group> groups_;
  std::vector<std::optional<Node>> fused_;  // per group: its fused node, if it is made
  std::vector<uint32_t> stamp_;  // per node: the search that last saw it
  std::vector<uint32_t> group_seen_;  // per group: the search that last left it
  std::vector<uint32_t> late_readers_;  // per value: readers outside the forward (kNone: kept)
  std::vector<NodeId> producer_;  // per value: Value::producer as run() began
  uint32_t cur_ = 0;
  std::vector<uint32_t> chosen_;  // scratch of run() and acyclic(), kept to save allocations
  std::vector<NodeId> stack_;
  std::vector<uint32_t> reader_from_;  // per node: where its readers start in readers_
  std::vector<NodeId> readers_;
};

}  // namespace

std::unique_ptr<Pass> make_fuse_elementwise() { return std::make_unique<FuseElementwise>(); }

}  // namespace nn::ir
