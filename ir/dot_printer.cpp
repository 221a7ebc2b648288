// Printing a graph as Graphviz dot text (see dot_printer.h for what is drawn).
// The writer first places every IR node: in the cluster of its scope, in a
// fused-group cluster, or folded into the box of a collapsed scope; then it
// writes the clusters as nested subgraphs, the value nodes, the edges and the
// legend. Everything is walked in id order, so the text is deterministic.
#include "ir/dot_printer.h"

#include <algorithm>

#include <string_view>
#include <unordered_map>

#include "ir/fused_expand.h"

namespace nn::ir {
namespace {

// Fill colours by phase, and stronger tones of the same hues for borders when
// the fill shows memory blocks instead.
constexpr const char* kPhaseFill[3] = {"#cfe2f3", "#f9cb9c", "#b6d7a8"};
constexpr const char* kPhaseLine[3] = {"#3d85c6", "#b45f06", "#38761d"};
// Collectives (SPEC §14): arrow boxes (cds) in a colour of their own, whatever their phase.
constexpr const char* kCollectiveFill = "#d9c3f0";

bool is_collective(const Node& n) {
  return n.op && (n.op->effect == backend::Effect::collective || n.op->effect == backend::Effect::completion);
}
// Memory picture: ColorBrewer's Set3, distinct pastels that keep text legible.
constexpr const char* kBlockFill[12] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                        "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
constexpr const char* kValueFill = "#f3f3f3";

// Appends `s` as the inside of a dot quoted string read as an escString
// (labels, tooltips): quotes and backslashes are escaped so that no name can
// end the string or turn into a \N, \G or \l escape; newlines become \n and
// other control characters spaces.
void put_esc(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': break;
      default: out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
}

std::string quoted(std::string_view s) {
  std::string o = "\"";
  put_esc(o, s);
  o += '"';
  return o;
}

// A multi-line label: each line escaped, joined by dot's centred line break.
std::string label_of(const std::vector<std::string>& lines) {
  std::string o = "\"";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) o += "\\n";
    put_esc(o, lines[i]);
  }
  o += '"';
  return o;
}

class DotWriter {
 public:
  DotWriter(const Graph& g, const DotOptions& opt) : g_(g), opt_(opt) {}

  std::string run() {
    build_scope_tree();
    place_nodes();
    // State updates are labels on the node that computes the new value.
    writes_.assign(g_.values.size(), kNone);
    for (const StateUpdate& u : g_.updates)
      if (u.value < g_.values.size() && u.state < g_.values.size()) writes_[u.value] = u.state;
    const std::string title = (g_.name.empty() ? std::string("graph") : g_.name) +
                              (opt_.raw ? " (before optimization)" : "");
    out_ += "digraph " + quoted(title) + " {\n";
    out_ += "  graph [label=" + quoted(title) +
            ", labelloc=t, fontname=\"Helvetica\", fontsize=14, rankdir=TB, newrank=true];\n";
    out_ += "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\", "
            "fillcolor=\"#ffffff\"];\n";
    out_ += "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
    for (ValueId v = 0; v < g_.values.size(); ++v)
      if (is_value_node(v)) write_value(v);
    write_scope_body(0, "  ");
    write_edges();
    write_legend();
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  // Drawn ids: IR nodes first, then values, then folded scope boxes.
  uint32_t node_id(NodeId n) const { return fold_[scope_of(n)] == kNone ? n : box_id(fold_[scope_of(n)]); }
  uint32_t value_id(ValueId v) const { return uint32_t(g_.nodes.size() + v); }
  uint32_t box_id(uint32_t s) const { return uint32_t(g_.nodes.size() + g_.values.size() + s); }
  std::string name_of(uint32_t id) const {
    const size_t n = g_.nodes.size(), v = g_.values.size();
    if (id < n) return (std::string("n") += std::to_string(id));
    if (id < n + v) return (std::string("v") += std::to_string(id - n));
    return (std::string("s") += std::to_string(id - n - v));
  }

  uint32_t scope_of(NodeId n) const { return g_.nodes[n].scope < parent_.size() ? g_.nodes[n].scope : 0; }
  // Inputs, params, state and constants get their own node; so does an
  // intermediate whose producer is missing, so that its edges still show.
  bool is_value_node(ValueId v) const {
    return g_.values[v].role != Role::intermediate || g_.values[v].producer >= g_.nodes.size();
  }
  uint32_t source_of(ValueId v) const { return is_value_node(v) ? value_id(v) : node_id(g_.values[v].producer); }
  static int phase_index(Phase p) { return int(p) < 3 ? int(p) : 0; }

  // Parents and depths of the scopes; a bad parent index or a cycle hangs the
  // scope on the root instead of looping.
  void build_scope_tree() {
    const size_t S = g_.scopes.empty() ? 1 : g_.scopes.size();
    parent_.assign(S, 0);
    for (uint32_t s = 1; s < S; ++s) {
      uint32_t p = g_.scopes[s].parent;
      parent_[s] = p < S && p != s ? p : 0;
    }
    depth_.assign(S, 0);
    std::vector<char> state(S, 0);  // 0 new, 1 on the current chain, 2 done
    state[0] = 2;
    std::vector<uint32_t> chain;
    for (uint32_t s = 1; s < S; ++s) {
      chain.clear();
      uint32_t t = s;
      while (state[t] == 0) {
        state[t] = 1;
        chain.push_back(t);
        t = parent_[t];
      }
      if (state[t] == 1) {  // a cycle through t: cut it at t
        parent_[t] = 0;
        depth_[t] = 1;
        state[t] = 2;
      }
      for (size_t i = chain.size(); i-- > 0;) {
        uint32_t x = chain[i];
        if (state[x] == 2) continue;
        depth_[x] = depth_[parent_[x]] + 1;
        state[x] = 2;
      }
    }
    // Scopes by depth (a bucket sort), so parents come before children.
    std::vector<uint32_t> count(S + 1, 0);
    for (uint32_t s = 0; s < S; ++s) ++count[depth_[s] + 1];
    for (size_t d = 1; d <= S; ++d) count[d] += count[d - 1];
    by_depth_.assign(S, 0);
    for (uint32_t s = 0; s < S; ++s) by_depth_[count[depth_[s]]++] = s;
    // fold_[s]: the outermost scope deeper than `collapse` on s's path, whose
    // box stands for s; kNone when s is drawn as a cluster.
    fold_.assign(S, kNone);
    if (opt_.collapse >= 0)
      for (uint32_t s : by_depth_)
        if (depth_[s] > uint32_t(opt_.collapse))
          fold_[s] = depth_[parent_[s]] > uint32_t(opt_.collapse) ? fold_[parent_[s]] : s;
  }

  uint32_t common_scope(uint32_t a, uint32_t b) const {
    while (depth_[a] > depth_[b]) a = parent_[a];
    while (depth_[b] > depth_[a]) b = parent_[b];
    while (a != b) a = parent_[a], b = parent_[b];
    return a;
  }

  // Decides the cluster each IR node is written in.
  void place_nodes() {
    const size_t S = parent_.size(), N = g_.nodes.size();
    own_.assign(S, {});
    groups_in_.assign(S, {});
    boxes_in_.assign(S, {});
    children_.assign(S, {});
    box_count_.assign(S, 0);
    box_first_.assign(S, kNone);
    // A node in several groups is drawn in the first; folded nodes in none,
    // since their box hides them.
    std::vector<uint32_t> group_of(N, kNone);
    members_.assign(opt_.fused_groups.size(), {});
    for (uint32_t k = 0; k < opt_.fused_groups.size(); ++k)
      for (NodeId n : opt_.fused_groups[k])
        if (n < N && group_of[n] == kNone && fold_[scope_of(n)] == kNone) {
          group_of[n] = k;
          members_[k].push_back(n);
        }
    for (uint32_t k = 0; k < members_.size(); ++k) {
      if (members_[k].empty()) continue;
      // The group's cluster sits in the innermost scope holding all its
      // members, so clusters stay properly nested.
      uint32_t home = scope_of(members_[k][0]);
      for (NodeId n : members_[k]) home = common_scope(home, scope_of(n));
      groups_in_[home].push_back(k);
    }
    for (NodeId n = 0; n < N; ++n) {
      const uint32_t s = scope_of(n), f = fold_[s];
      if (f != kNone) {
        if (box_count_[f]++ == 0) box_first_[f] = n;
      } else if (group_of[n] == kNone) {
        own_[s].push_back(n);
      }
    }
    for (uint32_t s = 1; s < S; ++s) {
      if (fold_[s] == kNone) children_[parent_[s]].push_back(s);
      else if (fold_[s] == s && box_count_[s] > 0) boxes_in_[parent_[s]].push_back(s);
    }
    // A cluster is written only when something is drawn inside it.
    has_content_.assign(S, 0);
    for (size_t i = S; i-- > 0;) {
      const uint32_t s = by_depth_[i];
      if (!own_[s].empty() || !groups_in_[s].empty() || !boxes_in_[s].empty()) has_content_[s] = 1;
      if (has_content_[s] && s != 0) has_content_[parent_[s]] = 1;
    }
  }

  bool memory_on() const { return !opt_.block_of_value.empty(); }
  const char* block_fill(ValueId v) const {
    if (v >= opt_.block_of_value.size() || opt_.block_of_value[v] == kNone) return "#ffffff";
    return kBlockFill[opt_.block_of_value[v] % 12];
  }
  // "block 3, 2 readers": the memory picture's line for one value.
  void memory_line(ValueId v, std::vector<std::string>& lines) const {
    if (!memory_on()) return;
    std::string l = v < opt_.block_of_value.size() && opt_.block_of_value[v] != kNone
                        ? (std::string("block ") += std::to_string(opt_.block_of_value[v]))
                        : std::string("no block");
    if (v < opt_.readers.size())
      l += (std::string(", ") += std::to_string(opt_.readers[v])) + (opt_.readers[v] == 1 ? " reader" : " readers");
    lines.push_back(std::move(l));
  }

  void write_value(ValueId v) {
    const Value& val = g_.values[v];
    std::vector<std::string> lines;
    lines.push_back(std::string(role_name(val.role)) + (val.name.empty() ? "" : " ") + val.name);
    lines.push_back(val.type.str());
    lines.push_back((std::string("%") += std::to_string(v)));
    if (val.output) lines.push_back("output");
    memory_line(v, lines);
    const char* shape = "ellipse";
    switch (val.role) {
      case Role::input: shape = "invhouse"; break;
      case Role::param: shape = "box"; break;
      case Role::state: shape = "cylinder"; break;
      case Role::constant: shape = "hexagon"; break;
      case Role::intermediate: shape = "ellipse"; break;
    }
    out_ += "  " + name_of(value_id(v)) + " [label=" + label_of(lines) + ", shape=" + shape;
    out_ += val.role == Role::param ? ", peripheries=2" : "";
    out_ += val.role == Role::param ? ", style=\"rounded,filled\"" : ", style=filled";
    out_ += std::string(", fillcolor=\"") + (memory_on() ? block_fill(v) : kValueFill) + "\"";
    if (val.output) out_ += ", penwidth=2";
    out_ += "];\n";
  }

  void write_node(NodeId n, const std::string& ind) {
    const Node& node = g_.nodes[n];
    std::vector<std::string> lines;
    lines.push_back(node.name().empty() ? std::string("?") : node.name());
    std::string types, ids;
    bool output = false;
    for (ValueId v : node.outputs) {
      if (v >= g_.values.size()) continue;
      if (!ids.empty()) types += ", ", ids += ", ";
      types += g_.values[v].type.str();
      ids += (std::string("%") += std::to_string(v));
      output = output || g_.values[v].output;
    }
    if (!types.empty()) lines.push_back(types), lines.push_back(ids);
    for (ValueId v : node.outputs)
      if (v < writes_.size() && writes_[v] != kNone) {
        const Value& st = g_.values[writes_[v]];
        lines.push_back("writes " + (st.name.empty() ? (std::string("%") += std::to_string(writes_[v])) : st.name));
      }
    for (ValueId v : node.outputs)
      if (v < g_.values.size()) memory_line(v, lines);
    const int ph = phase_index(node.phase);
    out_ += ind + name_of(n) + " [label=" + label_of(lines);
    // A host call is a note; an op producing a graph output a double octagon;
    // other ops take the default rounded box.
    if (!node.op) out_ += ", shape=note, style=filled";
    else if (is_collective(node)) out_ += ", shape=cds, style=filled";
    else if (output) out_ += ", shape=doubleoctagon, style=filled";
    if (is_collective(node) && !memory_on()) {
      out_ += std::string(", fillcolor=\"") + kCollectiveFill + "\"";
    } else if (memory_on()) {
      out_ += std::string(", fillcolor=\"") + (node.outputs.empty() ? "#ffffff" : block_fill(node.outputs[0])) + "\"";
      out_ += std::string(", color=\"") + kPhaseLine[ph] + "\", penwidth=2";
    } else {
      out_ += std::string(", fillcolor=\"") + kPhaseFill[ph] + "\"";
    }
    const std::string where = g_.where(node.loc);
    if (!where.empty()) out_ += ", tooltip=" + quoted(where);
    out_ += "];\n";
  }

  void write_box(uint32_t s, const std::string& ind) {
    const uint32_t k = box_count_[s];
    std::vector<std::string> lines{g_.scopes[s].name.empty() ? std::string("call") : g_.scopes[s].name,
                                   std::to_string(k) + (k == 1 ? " node" : " nodes")};
    const int ph = phase_index(g_.nodes[box_first_[s]].phase);
    out_ += ind + name_of(box_id(s)) + " [label=" + label_of(lines) + ", shape=box3d, style=filled, fillcolor=\"" +
            kPhaseFill[ph] + "\"";
    const std::string where = g_.where(g_.scopes[s].call);
    if (!where.empty()) out_ += ", tooltip=" + quoted(where);
    out_ += "];\n";
  }

  // Writes what scope s holds: its own nodes, its fused groups, the boxes of
  // folded calls and the clusters of the calls drawn open.
  void write_scope_body(uint32_t s, const std::string& ind) {
    for (NodeId n : own_[s]) write_node(n, ind);
    for (uint32_t k : groups_in_[s]) {
      out_ += ind + (std::string("subgraph cluster_fused_") += std::to_string(k)) + " {\n";
      out_ += ind + "  label=\"fused #" + std::to_string(k) +
              "\"; fontsize=9; style=\"dashed,rounded\"; color=\"#cc0000\";\n";
      for (NodeId n : members_[k]) write_node(n, ind + "  ");
      out_ += ind + "}\n";
    }
    for (uint32_t b : boxes_in_[s]) write_box(b, ind);
    for (uint32_t c : children_[s]) {
      if (!has_content_[c]) continue;
      out_ += ind + (std::string("subgraph cluster_s") += std::to_string(c)) + " {\n";
      // Nested calls alternate two greys so that their borders stay visible.
      out_ += ind + "  label=" + quoted(g_.scopes[c].name) +
              "; fontsize=10; style=\"rounded,filled\"; color=\"#999999\"; fillcolor=\"" +
              (depth_[c] % 2 ? "#fafafa" : "#eeeeee") + "\";";
      const std::string where = g_.where(g_.scopes[c].call);
      if (!where.empty()) out_ += " tooltip=" + quoted(where) + ";";
      out_ += "\n";
      write_scope_body(c, ind + "  ");
      out_ += ind + "}\n";
    }
  }

  // One edge per IR input; with folding, edges inside a box vanish and
  // parallel edges between the same two drawn nodes merge into the first.
  void write_edges() {
    struct Edge {
      uint32_t tail, head;
      ValueId value;
      uint32_t count;
    };
    std::vector<Edge> edges;
    std::unordered_map<uint64_t, size_t> seen;
    const bool fold = opt_.collapse >= 0;
    const uint64_t span = g_.nodes.size() + g_.values.size() + parent_.size();
    for (NodeId n = 0; n < g_.nodes.size(); ++n) {
      const uint32_t head = node_id(n);
      for (ValueId v : g_.nodes[n].inputs) {
        if (v >= g_.values.size()) continue;
        const uint32_t tail = source_of(v);
        if (fold) {
          if (tail == head) continue;
          auto [it, fresh] = seen.emplace(uint64_t(tail) * span + head, edges.size());
          if (!fresh) {
            ++edges[it->second].count;
            continue;
          }
        }
        edges.push_back({tail, head, v, 1});
      }
    }
    for (const Edge& e : edges) {
      const Value& val = g_.values[e.value];
      std::string tip = (std::string("%") += std::to_string(e.value)) + " " + val.type.str();
      if (e.count > 1) tip += (std::string(" and ") += std::to_string(e.count - 1)) + " more";
      out_ += "  " + name_of(e.tail) + " -> " + name_of(e.head) + " [label=" + quoted(val.type.shape.str()) +
              ", tooltip=" + quoted(tip) + (e.count > 1 ? ", penwidth=2" : "") + "];\n";
    }
  }

  // The phase colours, when there is more than one phase to tell apart: one
  // node holding a table, so the entries keep their order (dot would order
  // loose nodes of one rank as it likes).
  void write_legend() {
    bool present[3] = {false, false, false};
    for (const Node& n : g_.nodes) present[phase_index(n.phase)] = true;
    if (int(present[0]) + int(present[1]) + int(present[2]) < 2) return;
    out_ += "  subgraph cluster_legend {\n";
    out_ += "    label=\"legend\"; fontsize=9; style=rounded; color=\"#999999\";\n";
    out_ += "    legend [shape=plain, fontsize=8, label=<<table border=\"0\" cellspacing=\"4\" cellpadding=\"4\"><tr>";
    for (int p = 0; p < 3; ++p) {
      if (!present[p]) continue;
      // With the memory picture on, the phase is the border, as on the nodes.
      out_ += memory_on() ? std::string("<td border=\"2\" style=\"rounded\" color=\"") + kPhaseLine[p] + "\">"
                          : std::string("<td border=\"1\" style=\"rounded\" bgcolor=\"") + kPhaseFill[p] + "\">";
      out_ += std::string(phase_name(Phase(p))) + "</td>";
    }
    if (std::any_of(g_.nodes.begin(), g_.nodes.end(), is_collective))
      out_ += std::string("<td border=\"1\" style=\"rounded\" bgcolor=\"") + kCollectiveFill + "\">collective</td>";
    out_ += "</tr></table>>];\n  }\n";
  }

  const Graph& g_;
  const DotOptions& opt_;
  std::string out_;
  std::vector<uint32_t> parent_, depth_, by_depth_, fold_;
  std::vector<uint32_t> box_count_, box_first_;  // per folded root scope: nodes inside, the first of them
  std::vector<std::vector<NodeId>> own_, members_;
  std::vector<std::vector<uint32_t>> groups_in_, boxes_in_, children_;
  std::vector<char> has_content_;
  std::vector<ValueId> writes_;  // per value: the state it becomes after a run, or kNone
};

}  // namespace

std::string print_dot(const Graph& g, const DotOptions& opt) {
  // Fused nodes are drawn as clusters of the ops they merged.
  const bool fused = std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.attrs.has("program"); });
  if (!fused || !opt.fused_groups.empty()) return DotWriter(g, opt).run();
  DotOptions o = opt;
  const Graph x = expand_fused(g, o.fused_groups);
  return DotWriter(x, o).run();
}

}  // namespace nn::ir
