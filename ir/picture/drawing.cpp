// What a picture shows of a graph (see drawing.h): which values are written
// into labels, and which ops, boxes, clusters and value nodes one view draws.
#include "ir/picture/drawing.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "ir/picture/fused_expand.h"

namespace nn::ir {
namespace {

// Constants up to this many elements are written into their readers' labels.
constexpr int64_t kSmallConstant = 4;

bool has_fused(const Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.attrs.has("program"); });
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

}  // namespace

Drawing::Drawing(const Graph& g, DrawOptions opt)
    : expanded_(has_fused(g) ? std::optional<Graph>(expand_fused(g, fused_)) : std::nullopt),
      g_(expanded_ ? &*expanded_ : &g),
      groups_(*g_, opt.traced),
      opt_(std::move(opt)) {}

const std::string& Drawing::name_of(ValueId v) const {
  if (v < opt_.names.size() && !opt_.names[v].empty()) return opt_.names[v];
  static const std::string none;
  return v < g_->values.size() ? g_->name_of(v) : none;
}

std::string Drawing::memory_text(ValueId v) const {
  if (!memory_on()) return {};
  std::string l = block_of(v) == kNone ? "no block" : "block " + std::to_string(block_of(v));
  if (v < opt_.readers.size())
    l += ", " + std::to_string(opt_.readers[v]) + (opt_.readers[v] == 1 ? " reader" : " readers");
  return l;
}

bool Drawing::is_small_constant(ValueId v) const {
  const Value& val = g_->values[v];
  return val.role == Role::constant && val.type.shape.numel() <= kSmallConstant;
}

bool Drawing::in_labels(ValueId v) const {
  const Role r = g_->values[v].role;
  return r == Role::param || r == Role::state || is_small_constant(v);
}

std::string Drawing::inline_text(ValueId v) const {
  if (v >= g_->values.size() || !in_labels(v)) return {};
  const Value& val = g_->values[v];
  const std::string& name = name_of(v);
  const std::string id = name.empty() ? "%" + std::to_string(v) + " " + val.type.str() : name;
  if (val.role == Role::param || val.role == Role::state) return std::string(role_name(val.role)) + " " + id;
  const backend::Tensor& t = val.captured;
  if (!t.defined() || t.is_traced()) return id;
  const size_t step = backend::dtype_size(t.dtype());
  auto at = [&](int64_t i) { return number(t.view(backend::Shape(), size_t(i) * step).item_double()); };
  if (t.numel() == 1) return at(0);
  std::string s = "[";
  for (int64_t i = 0; i < t.numel(); ++i) s += (i ? ", " : "") + at(i);
  return s + "]";
}

View Drawing::view(uint32_t root, uint32_t depth, bool fold_series) const {
  View v;
  v.root = root;
  v.depth = depth;
  const uint32_t base = groups_[root].depth;
  std::vector<NodeId> inside;  // the nodes of the folded boxes
  std::vector<uint32_t> stack{root};
  while (!stack.empty()) {
    const uint32_t k = stack.back();
    stack.pop_back();
    const Group& grp = groups_[k];
    if (grp.depth - base > depth || (fold_series && grp.steps && k != root)) {
      v.boxes.push_back(k);
      continue;
    }
    if (k != root) v.open.push_back(k);
    v.ops.insert(v.ops.end(), grp.nodes.begin(), grp.nodes.end());
    for (size_t i = grp.children.size(); i-- > 0;) stack.push_back(grp.children[i]);
  }
  std::sort(v.ops.begin(), v.ops.end());
  // Values drawn as nodes: what the drawn ops and the boxes' insides read
  // that is neither written into a label nor made by a node of this view.
  std::unordered_set<ValueId> seen;
  auto reads = [&](NodeId n) {
    for (ValueId x : g_->nodes[n].inputs) {
      if (x >= g_->values.size() || in_labels(x)) continue;
      const NodeId p = g_->values[x].producer;
      if (g_->values[x].role == Role::intermediate && p < g_->nodes.size() && under(root, p)) continue;
      if (seen.insert(x).second) v.values.push_back(x);
    }
  };
  for (NodeId n : v.ops) reads(n);
  for (uint32_t b : v.boxes) {
    stack.assign(1, b);
    while (!stack.empty()) {
      const Group& grp = groups_[stack.back()];
      stack.pop_back();
      for (NodeId n : grp.nodes) reads(n);
      stack.insert(stack.end(), grp.children.begin(), grp.children.end());
    }
  }
  // The whole graph's view draws its outputs that no node makes (an input,
  // a param or a constant given back as it is): no op would show them.
  if (root == 0)
    for (ValueId x : g_->outputs)
      if (x < g_->values.size() && g_->values[x].producer >= g_->nodes.size() && seen.insert(x).second)
        v.values.push_back(x);
  std::sort(v.values.begin(), v.values.end());
  return v;
}

View Drawing::view(uint32_t root) const {
  uint32_t deepest = 0;  // levels below root
  std::vector<uint32_t> stack{root};
  while (!stack.empty()) {
    const Group& grp = groups_[stack.back()];
    stack.pop_back();
    deepest = std::max(deepest, grp.depth - groups_[root].depth);
    stack.insert(stack.end(), grp.children.begin(), grp.children.end());
  }
  if (opt_.collapse >= 0) return view(root, std::min(uint32_t(opt_.collapse), deepest));
  if (opt_.collapse == kNoCollapse) return view(root, deepest);
  // Auto: open one more level while the picture stays small enough; a
  // series stays one box (its steps are drawn in its own view).
  View best = view(root, 0, true);
  for (uint32_t d = 1; d <= deepest; ++d) {
    View next = view(root, d, true);
    if (next.drawn() > kMaxBoxes) break;
    best = std::move(next);
  }
  return best;
}

}  // namespace nn::ir
