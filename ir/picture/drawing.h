// A graph made ready to draw, and what one picture of it shows. A Drawing
// expands fused nodes into the ops they merged (fused_expand.h), finds the
// groups (group_tree.h) and decides how each value appears: params, state
// and small constants are written into the labels of the ops that read them
// (`mul ×0.9`, `param model.fc.w`), never drawn as nodes of their own. A View
// is the inside of one group (the whole graph, or a call a picture folded)
// with the calls more than `depth` levels below it folded into one box each.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/picture/group_tree.h"

namespace nn::ir {

inline constexpr int kAutoCollapse = -2;  // the deepest collapse drawing at most kMaxBoxes boxes
inline constexpr int kNoCollapse = -1;    // fold nothing
inline constexpr size_t kMaxBoxes = 80;

struct DrawOptions {
  bool raw = false;            // the graph as traced: only said in the title
  int collapse = kAutoCollapse;  // fold calls nested deeper than N; or kAutoCollapse, kNoCollapse
  // The memory picture (empty: off): per value its block of the memory plan
  // (kNone: none), and its reader count.
  std::vector<uint32_t> block_of_value;
  std::vector<uint32_t> readers;
  // Per value, the script's name of a param, state or constant tensor
  // ("model.fc.w", "opt.m.0"); shorter than the values or empty: unnamed.
  std::vector<std::string> names;
  // The graph as traced, when the graph drawn is its optimized form: calls
  // form a series when their traced bodies have the same structure.
  const Graph* traced = nullptr;
};

struct View {
  uint32_t root = 0;   // the group drawn (0: the whole graph)
  uint32_t depth = 0;  // calls more than this many levels below root are folded
  std::vector<NodeId> ops;      // drawn as themselves, in graph order
  std::vector<uint32_t> open;   // groups drawn as clusters around their nodes, parents first
  std::vector<uint32_t> boxes;  // folded groups, one box each
  std::vector<ValueId> values;  // drawn as nodes: inputs, big constants, values made outside root
  size_t drawn() const { return ops.size() + boxes.size() + values.size(); }
};

class Drawing {
 public:
  Drawing(const Graph& g, DrawOptions opt);
  Drawing(const Drawing&) = delete;
  Drawing& operator=(const Drawing&) = delete;

  const Graph& graph() const { return *g_; }
  const GroupTree& groups() const { return groups_; }
  const DrawOptions& options() const { return opt_; }
  // The ops of each fused node, drawn as a cluster "fused #k".
  const std::vector<std::vector<NodeId>>& fused() const { return fused_; }

  // The view of `root` at the options' collapse.
  View view(uint32_t root) const;
  // `fold_series`: a series below root is one box, however deep.
  View view(uint32_t root, uint32_t depth, bool fold_series = false) const;

  // How value v is written into the label of an op reading it ("param
  // model.fc.w", "0.9"); empty when v is drawn (or comes from an edge).
  std::string inline_text(ValueId v) const;
  bool is_small_constant(ValueId v) const;
  // Whether v is written into labels (a param, state or small constant)
  // rather than drawn: inline_text is not empty, without making the text.
  bool in_labels(ValueId v) const;
  bool memory_on() const { return !opt_.block_of_value.empty(); }
  uint32_t block_of(ValueId v) const { return v < opt_.block_of_value.size() ? opt_.block_of_value[v] : kNone; }
  // The memory picture's line for v ("block 3, 2 readers", "no block"); "" when it is off.
  std::string memory_text(ValueId v) const;
  // The script's name of value v (else the graph's own name of it, an input's), or "".
  const std::string& name_of(ValueId v) const;
  // Whether node n is drawn in views of `root` (it sits in root's group or below).
  bool under(uint32_t root, NodeId n) const { return groups_.contains(root, groups_.group_of(n)); }

 private:
  std::vector<std::vector<NodeId>> fused_;  // set by expand_fused, so declared first
  std::optional<Graph> expanded_;
  const Graph* g_;
  GroupTree groups_;
  DrawOptions opt_;
};

}  // namespace nn::ir
