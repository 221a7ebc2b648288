// The groups of a picture (see group_tree.h). A call's structure is a hash
// of its nodes in graph order: each node's op, phase and the group it sits in
// below the call, and for each input either its distance back to a node of
// the same call or "from outside". Consecutive calls of one function with
// equal hashes and sizes form a series.
#include "ir/picture/group_tree.h"

#include <algorithm>
#include <functional>
#include <string_view>
#include <unordered_set>
#include <unordered_map>

namespace nn::ir {
namespace {

uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0x100000001b3ull;
}

uint64_t hash_of(std::string_view s) { return std::hash<std::string_view>()(s); }

}  // namespace

uint32_t GroupTree::ancestor_at(uint32_t k, uint32_t depth) const {
  while (groups_[k].depth > depth) k = groups_[k].parent;
  return k;
}

GroupTree::GroupTree(const Graph& g, const Graph* traced) {
  const uint32_t S = g.scopes.empty() ? 1 : uint32_t(g.scopes.size());
  groups_.resize(S);
  for (uint32_t s = 1; s < S; ++s) {
    const uint32_t p = g.scopes[s].parent;
    groups_[s].parent = p < S && p != s ? p : 0;
    groups_[s].name = g.scopes[s].name.empty() ? std::string("call") : g.scopes[s].name;
    groups_[s].call = g.scopes[s].call;
    groups_[groups_[s].parent].children.push_back(s);
  }
  groups_[0].name = g.name.empty() ? std::string("graph") : g.name;
  // Depths from the root; scopes it cannot reach (a cycle of parents) hang
  // on the root instead.
  std::vector<char> reached(S, 0);
  std::vector<uint32_t> order{0}, stack{0};  // order: parents before children
  reached[0] = 1;
  auto walk = [&] {
    while (!stack.empty()) {
      const uint32_t s = stack.back();
      stack.pop_back();
      for (uint32_t c : groups_[s].children) {
        if (c == kNone || reached[c]) continue;
        reached[c] = 1;
        groups_[c].depth = groups_[s].depth + 1;
        order.push_back(c);
        stack.push_back(c);
      }
    }
  };
  walk();
  for (uint32_t s = 1; s < S; ++s) {
    if (reached[s]) continue;
    for (uint32_t& c : groups_[groups_[s].parent].children) c = c == s ? kNone : c;
    groups_[s].parent = 0;
    groups_[0].children.push_back(s);
    reached[s] = 1;
    groups_[s].depth = 1;
    order.push_back(s);
    stack.push_back(s);
    walk();
  }
  group_of_.resize(g.nodes.size());
  for (NodeId n = 0; n < g.nodes.size(); ++n) {
    group_of_[n] = g.nodes[n].scope < S ? g.nodes[n].scope : 0;
    Group& home = groups_[group_of_[n]];
    if (home.nodes.empty()) home.phase = g.nodes[n].phase;
    home.nodes.push_back(n);
  }
  for (size_t i = order.size(); i-- > 0;) {
    Group& grp = groups_[order[i]];
    grp.size += uint32_t(grp.nodes.size());
    if (grp.parent != kNone) groups_[grp.parent].size += grp.size;
  }
  // Children in call order (scope ids grow as calls are made), without the
  // calls that made no node.
  for (Group& grp : groups_) {
    std::erase_if(grp.children, [&](uint32_t c) { return c == kNone || groups_[c].size == 0; });
    std::sort(grp.children.begin(), grp.children.end());
  }
  // A group's phase is its first node's, found below it when it has none of its own.
  std::vector<NodeId> first(S, kNone);
  for (size_t i = order.size(); i-- > 0;) {
    const uint32_t s = order[i];
    if (!groups_[s].nodes.empty()) first[s] = std::min(first[s], groups_[s].nodes[0]);
    if (first[s] != kNone) groups_[s].phase = g.nodes[first[s]].phase;
    if (groups_[s].parent != kNone) first[groups_[s].parent] = std::min(first[groups_[s].parent], first[s]);
  }
  // Optimization passes fuse and move ops across calls, so the structure of
  // the calls is read from the graph as traced when there is one.
  find_series(traced && traced->scopes.size() == g.scopes.size() ? *traced : g);
}

void GroupTree::find_series(const Graph& g) {
  const uint32_t S = uint32_t(groups_.size());
  auto group_of = [&](NodeId n) { return g.nodes[n].scope < S ? g.nodes[n].scope : 0; };
  std::vector<uint64_t> sig(S, 0);
  std::vector<uint32_t> count(S, 0);
  // The first and last node below each group.
  std::vector<NodeId> lo(S, kNone), hi(S, 0);
  std::unordered_map<uint64_t, uint32_t> position;  // (group, node) -> the node's place among the group's
  auto key = [](uint32_t grp, NodeId n) { return (uint64_t(grp) << 32) | n; };
  for (NodeId n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    const uint32_t home = group_of(n);
    const uint64_t op = hash_of(node.name());
    for (uint32_t a = home; a != 0 && a != kNone; a = groups_[a].parent) {
      lo[a] = std::min(lo[a], n);
      hi[a] = n;
      const uint32_t pos = count[a]++;
      uint64_t h = mix(sig[a], op);
      h = mix(h, uint64_t(node.phase) << 16 | (groups_[home].depth - groups_[a].depth));
      if (home != a) h = mix(h, hash_of(groups_[home].name));
      for (ValueId v : node.inputs) {
        const NodeId p = v < g.values.size() ? g.values[v].producer : kNone;
        auto it = p < n ? position.find(key(a, p)) : position.end();
        h = mix(h, it == position.end() ? ~0ull : pos - it->second);
      }
      sig[a] = h;
      position.emplace(key(a, n), pos);
    }
  }
  // Whether ops of group k carry a value from call a to call b (`relu`
  // between two Linear calls): then they are not one repeated step.
  auto between = [&](uint32_t k, uint32_t a, uint32_t b) {
    std::unordered_set<ValueId> from_a, via_k;
    auto reads = [&](const Node& node, const std::unordered_set<ValueId>& set) {
      return std::any_of(node.inputs.begin(), node.inputs.end(), [&](ValueId x) { return set.contains(x); });
    };
    for (NodeId n = lo[a]; n <= hi[b] && n < g.nodes.size(); ++n) {
      const uint32_t at = group_of(n);
      const Node& node = g.nodes[n];
      if (contains(a, at)) from_a.insert(node.outputs.begin(), node.outputs.end());
      else if (at == k && (reads(node, from_a) || reads(node, via_k))) via_k.insert(node.outputs.begin(), node.outputs.end());
      else if (contains(b, at) && reads(node, via_k)) return true;
    }
    return false;
  };
  auto same = [&](uint32_t k, uint32_t a, uint32_t b) {
    return groups_[a].name == groups_[b].name && sig[a] == sig[b] && count[a] == count[b] && !between(k, a, b);
  };
  for (uint32_t k = 0; k < S; ++k) {
    std::vector<uint32_t> kept;
    const std::vector<uint32_t> children = std::move(groups_[k].children);
    for (size_t i = 0; i < children.size();) {
      size_t j = i + 1;
      while (j < children.size() && same(k, children[j - 1], children[j])) ++j;
      if (j - i < 2) {
        kept.push_back(children[i++]);
        continue;
      }
      Group series;
      const Group& first = groups_[children[i]];
      series.name = first.name + " \u00d7" + std::to_string(j - i);
      series.parent = k;
      series.steps = uint32_t(j - i);
      series.call = first.call;
      series.phase = first.phase;
      const uint32_t id = uint32_t(groups_.size());
      for (size_t m = i; m < j; ++m) {
        Group& step = groups_[children[m]];
        step.name += " #" + std::to_string(m - i + 1);
        step.parent = id;
        series.children.push_back(children[m]);
        series.size += step.size;
      }
      kept.push_back(id);
      groups_.push_back(std::move(series));
      i = j;
    }
    groups_[k].children = std::move(kept);
  }
  // Depths again, a series being a level of its own.
  std::vector<uint32_t> stack{0};
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    for (uint32_t c : groups_[s].children) {
      groups_[c].depth = groups_[s].depth + 1;
      stack.push_back(c);
    }
  }
}

}  // namespace nn::ir
