// Printing one view of a graph as Graphviz dot text (see dot_printer.h).
// The writer first indexes what the view draws by group (the ops of each
// open call, its fused clusters, its folded boxes), then writes the value
// nodes, the nested clusters, the edges and the legend, always in id order,
// so the text is deterministic.
#include "ir/picture/dot_printer.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/picture/palette.h"

namespace nn::ir {
namespace {

// Past this many boxes a view is laid out quickly (see DotWriter::run).
constexpr size_t kQuickLayoutBoxes = 48;

bool is_collective(const Node& n) {
  return n.op && (n.op->effect == backend::Effect::collective || n.op->effect == backend::Effect::completion);
}
int phase_index(Phase p) { return int(p) < 3 ? int(p) : 0; }

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

// Binary ops written with an operator when one operand is a small constant:
// `mul ×0.9`, `sub 1−`.
const char* infix(std::string_view op) {
  static const std::pair<std::string_view, const char*> table[] = {
      {"add", "+"}, {"sub", "\u2212"}, {"mul", "\u00d7"}, {"div", "\u00f7"}, {"pow", "^"},
      {"gt", ">"},  {"lt", "<"},       {"ge", "\u2265"},  {"le", "\u2264"},  {"eq", "="}, {"ne", "\u2260"}};
  for (const auto& [name, sym] : table)
    if (name == op) return sym;
  return nullptr;
}

class DotWriter {
 public:
  DotWriter(const Drawing& d, const View& v, bool page) : d_(d), g_(d.graph()), t_(d.groups()), v_(v), page_(page) {}

  std::string run() {
    index();
    writes_.assign(g_.values.size(), kNone);
    for (const StateUpdate& u : g_.updates)
      if (u.value < g_.values.size() && u.state < g_.values.size()) writes_[u.value] = u.state;
    std::string title = (g_.name.empty() ? std::string("graph") : g_.name) +
                        (d_.options().raw ? " (before optimization)" : "");
    std::vector<uint32_t> path;
    for (uint32_t k = v_.root; k != 0 && k != kNone; k = t_[k].parent) path.push_back(k);
    for (size_t i = path.size(); i-- > 0;) title += " \u203a " + t_[path[i]].name;
    out_ += "digraph " + quoted(title) + " {\n";
    out_ += "  graph [label=" + quoted(title) + ", labelloc=t, fontname=\"Helvetica\", fontsize=14, rankdir=" +
            (t_[v_.root].steps ? "LR" : "TB") + ", newrank=true, nodesep=0.2, ranksep=0.3];\n";
    // Graphviz's network simplex and spline routing grow far faster than
    // the drawing: a page's series of 128 LSTM steps (260 boxes) took
    // minutes. Cut short (one simplex pass, straight edges) it takes 0.4 s.
    if (v_.drawn() > kQuickLayoutBoxes) out_ += "  graph [nslimit=1, nslimit1=1, splines=line];\n";
    out_ += "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\", "
            "fillcolor=\"#ffffff\"];\n";
    out_ += "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
    for (ValueId x : v_.values) write_value(x);
    write_body(v_.root, "  ");
    write_edges();
    write_legend();
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  // Drawn ids, as numbers: IR nodes first, then values, then groups.
  uint64_t op_id(NodeId n) const { return n; }
  uint64_t value_id(ValueId x) const { return g_.nodes.size() + x; }
  uint64_t group_id(uint32_t k) const { return g_.nodes.size() + g_.values.size() + k; }
  std::string name_of(uint64_t id) const {
    const size_t n = g_.nodes.size(), v = g_.values.size();
    if (id < n) return "n" + std::to_string(id);
    if (id < n + v) return "v" + std::to_string(id - n);
    return "g" + std::to_string(id - n - v);
  }
  // Where node n is drawn: itself, or the box folding it.
  uint64_t drawn(NodeId n) const {
    auto it = box_of_.find(t_.group_of(n));
    return it == box_of_.end() ? op_id(n) : group_id(it->second);
  }
  // Where the edge carrying x starts; kNone when x is written into labels.
  uint64_t source(ValueId x) const {
    if (d_.in_labels(x)) return kNone;
    const NodeId p = g_.values[x].producer;
    if (g_.values[x].role == Role::intermediate && p < g_.nodes.size() && d_.under(v_.root, p)) return drawn(p);
    return value_id(x);
  }

  void index() {
    for (uint32_t b : v_.boxes) {
      std::vector<uint32_t> stack{b};
      while (!stack.empty()) {
        const uint32_t k = stack.back();
        stack.pop_back();
        box_of_[k] = b;
        stack.insert(stack.end(), t_[k].children.begin(), t_[k].children.end());
      }
      boxes_in_[t_[b].parent].push_back(b);
    }
    for (uint32_t k : v_.open) open_in_[t_[k].parent].push_back(k);
    // A fused group's cluster holds its ops of one call: the ops of a fusion
    // across calls (a Linear's matmul and the relu after it) stay in their
    // calls' clusters, each part a cluster of its own, one op too.
    std::unordered_set<NodeId> drawn_ops(v_.ops.begin(), v_.ops.end()), clustered;
    for (uint32_t f = 0; f < d_.fused().size(); ++f) {
      std::unordered_map<uint32_t, std::vector<NodeId>> parts;  // group -> its ops of f
      std::vector<uint32_t> homes;
      for (NodeId n : d_.fused()[f]) {
        if (!drawn_ops.contains(n) || clustered.contains(n)) continue;
        auto& part = parts[t_.group_of(n)];
        if (part.empty()) homes.push_back(t_.group_of(n));
        part.push_back(n);
      }
      for (uint32_t home : homes) {
        if (parts[home].size() < 2 && homes.size() < 2) continue;  // the one op drawn of it: as itself
        clustered.insert(parts[home].begin(), parts[home].end());
        fused_in_[home].push_back(uint32_t(clusters_.size()));
        clusters_.push_back({f, std::move(parts[home])});
      }
    }
    for (NodeId n : v_.ops)
      if (!clustered.contains(n)) ops_in_[t_.group_of(n)].push_back(n);
  }

  // The page colours by memory itself, from its table: its drawings show phases.
  bool memory_on() const { return d_.memory_on() && !page_; }
  void memory_line(ValueId x, std::vector<std::string>& lines) const {  // "block 3, 2 readers"
    if (memory_on()) lines.push_back(d_.memory_text(x));
  }

  // id and class for the page, or a tooltip for a picture.
  std::string identity(uint64_t id, const char* kind, const std::string& tip) const {
    if (page_) return ", id=\"" + name_of(id) + "\", class=\"" + kind + "\"";
    return tip.empty() ? std::string() : ", tooltip=" + quoted(tip);
  }

  void write_value(ValueId x) {
    const Value& val = g_.values[x];
    std::vector<std::string> lines;
    const NodeId p = val.producer;
    const std::string& name = d_.name_of(x);
    if (val.role == Role::intermediate)  // made outside the group this view draws
      lines.push_back("from " + (p < g_.nodes.size() ? g_.nodes[p].name() : std::string("?")));
    else
      lines.push_back(std::string(role_name(val.role)) + (name.empty() ? "" : " ") + name);
    lines.push_back(val.type.str());
    if (val.output) lines.push_back("output");
    memory_line(x, lines);
    const char* shape = "ellipse";
    if (val.role == Role::input) shape = "invhouse";
    if (val.role == Role::constant) shape = "hexagon";
    out_ += "  " + name_of(value_id(x)) + " [label=" + label_of(lines) + ", shape=" + shape + ", style=" +
            (val.role == Role::intermediate ? "\"dashed,filled\"" : "filled");
    out_ += std::string(", fillcolor=\"") + (memory_on() ? palette::block_fill(d_.block_of(x)) : palette::kValue) + "\"";
    if (val.output) out_ += ", penwidth=2";
    out_ += identity(value_id(x), "value", "%" + std::to_string(x)) + "];\n";
  }

  // The op's name, with the small constants it reads written in.
  std::string op_line(const Node& node) const {
    std::vector<std::string> args;
    size_t constants = 0;
    for (ValueId x : node.inputs) {
      const bool c = x < g_.values.size() && d_.is_small_constant(x);
      args.push_back(c ? d_.inline_text(x) : "\u00b7");
      constants += c;
    }
    std::string line = node.name().empty() ? std::string("?") : node.name();
    if (constants == 0) return line;
    const char* sym = args.size() == 2 && constants == 1 ? infix(line) : nullptr;
    if (sym && args[0] == "\u00b7") return line + " " + sym + args[1];
    if (sym) return line + " " + args[0] + sym;
    line += " (";
    for (size_t i = 0; i < args.size(); ++i) line += (i ? ", " : "") + args[i];
    return line + ")";
  }

  void write_op(NodeId n, const std::string& ind) {
    const Node& node = g_.nodes[n];
    std::vector<std::string> lines{op_line(node)};
    std::string types, ids;
    bool output = false;
    for (ValueId x : node.outputs) {
      if (x >= g_.values.size()) continue;
      if (!types.empty()) types += ", ", ids += ", ";
      types += g_.values[x].type.str();
      ids += "%" + std::to_string(x);
      output = output || g_.values[x].output;
    }
    if (!types.empty()) lines.push_back(types);
    for (ValueId x : node.inputs)  // params and state by name, once each
      if (x < g_.values.size() && d_.in_labels(x) && !d_.is_small_constant(x)) {
        std::string text = d_.inline_text(x);
        if (std::find(lines.begin(), lines.end(), text) == lines.end()) lines.push_back(text);
      }
    for (ValueId x : node.outputs)
      if (x < writes_.size() && writes_[x] != kNone) {
        const std::string& st = d_.name_of(writes_[x]);
        lines.push_back("writes " + (st.empty() ? "%" + std::to_string(writes_[x]) : st));
      }
    for (ValueId x : node.outputs)
      if (x < g_.values.size()) memory_line(x, lines);
    const int ph = phase_index(node.phase);
    out_ += ind + name_of(op_id(n)) + " [label=" + label_of(lines);
    // A host call is a note; an op producing a graph output a double octagon;
    // other ops take the default rounded box.
    if (!node.op) out_ += ", shape=note, style=filled";
    else if (is_collective(node)) out_ += ", shape=cds, style=filled";
    else if (output) out_ += ", shape=doubleoctagon, style=filled";
    if (is_collective(node) && !memory_on()) {
      out_ += std::string(", fillcolor=\"") + palette::kCollective + "\"";
    } else if (memory_on()) {
      out_ += std::string(", fillcolor=\"") + palette::block_fill(node.outputs.empty() ? kNone : d_.block_of(node.outputs[0])) + "\"";
      out_ += std::string(", color=\"") + palette::phase_line(node.phase) + "\", penwidth=2";
    } else {
      out_ += std::string(", fillcolor=\"") + palette::phase_fill(node.phase) + "\"";
    }
    const std::string where = g_.where(node.loc);
    out_ += identity(op_id(n), "op", ids + (where.empty() || ids.empty() ? "" : "  ") + where) + "];\n";
    present_[ph] = true;
    collective_ = collective_ || is_collective(node);
  }

  void write_box(uint32_t k, const std::string& ind) {
    const Group& grp = t_[k];
    std::vector<std::string> lines{grp.name, std::to_string(grp.size) + (grp.size == 1 ? " node" : " nodes")};
    const int ph = phase_index(grp.phase);
    out_ += ind + name_of(group_id(k)) + " [label=" + label_of(lines) + ", shape=box3d, style=filled, fillcolor=\"" +
            palette::phase_fill(grp.phase) + "\"" + (grp.steps ? ", penwidth=2" : "");
    out_ += identity(group_id(k), grp.steps ? "series" : "group", g_.where(grp.call)) + "];\n";
    present_[ph] = true;
    folded_ = true;
  }

  // What group k holds in this view: its own ops, its fused clusters, the
  // boxes of its folded calls and the clusters of the calls drawn open.
  void write_body(uint32_t k, const std::string& ind) {
    for (NodeId n : ops_in_[k]) write_op(n, ind);
    for (uint32_t c : fused_in_[k]) {
      out_ += ind + "subgraph cluster_fused_" + std::to_string(c) + " {\n";
      out_ += ind + "  label=\"fused #" + std::to_string(clusters_[c].fused) +
              "\"; fontsize=9; style=\"dashed,rounded\"; color=\"#cc0000\";\n";
      for (NodeId n : clusters_[c].ops) write_op(n, ind + "  ");
      out_ += ind + "}\n";
    }
    for (uint32_t b : boxes_in_[k]) write_box(b, ind);
    for (uint32_t c : open_in_[k]) {
      out_ += ind + "subgraph cluster_g" + std::to_string(c) + " {\n";
      // Nested calls alternate two greys so that their borders stay visible.
      out_ += ind + "  label=" + quoted(t_[c].name) + "; fontsize=10; style=\"rounded,filled\"; color=\"#999999\"; " +
              "fillcolor=\"" + (t_[c].depth % 2 ? "#fafafa" : "#eeeeee") + "\";";
      const std::string where = g_.where(t_[c].call);
      if (!where.empty() && !page_) out_ += " tooltip=" + quoted(where) + ";";
      out_ += "\n";
      write_body(c, ind + "  ");
      out_ += ind + "}\n";
    }
  }

  // Whether an edge out of `tail` carrying x shows x's shape: where the
  // shape changes (out of a box, or out of an op whose first input has
  // another shape), never out of a value node, whose label has its type.
  bool shape_changes(uint64_t tail, ValueId x) const {
    if (tail >= g_.nodes.size()) return tail >= group_id(0);
    const Node& p = g_.nodes[tail];
    return p.inputs.empty() || p.inputs[0] >= g_.values.size() ||
           g_.values[p.inputs[0]].type.shape != g_.values[x].type.shape;
  }

  void write_edges() {
    struct Edge {
      uint64_t tail, head;
      ValueId value;
      uint32_t count;
    };
    std::vector<Edge> edges;
    std::unordered_map<uint64_t, size_t> seen;  // (tail, head) -> its edge
    const uint64_t span = group_id(uint32_t(t_.size()));
    auto add = [&](ValueId x, uint64_t head) {
      if (x >= g_.values.size()) return;
      const uint64_t tail = source(x);
      if (tail == kNone || tail == head) return;
      auto [it, fresh] = seen.emplace(tail * span + head, edges.size());
      if (fresh) edges.push_back({tail, head, x, 1});
      else ++edges[it->second].count;
    };
    for (NodeId n : v_.ops)
      for (ValueId x : g_.nodes[n].inputs) add(x, op_id(n));
    for (uint32_t b : v_.boxes) {
      std::vector<uint32_t> stack{b};
      while (!stack.empty()) {
        const Group& grp = t_[stack.back()];
        stack.pop_back();
        for (NodeId n : grp.nodes)
          for (ValueId x : g_.nodes[n].inputs) add(x, group_id(b));
        stack.insert(stack.end(), grp.children.begin(), grp.children.end());
      }
    }
    for (const Edge& e : edges) {
      const Value& val = g_.values[e.value];
      std::vector<std::string> attrs;
      if (shape_changes(e.tail, e.value)) attrs.push_back("label=" + quoted(val.type.shape.str()));
      if (!page_) {
        std::string tip = "%" + std::to_string(e.value) + " " + val.type.str();
        if (e.count > 1) tip += " and " + std::to_string(e.count - 1) + " more";
        attrs.push_back("tooltip=" + quoted(tip));
      }
      if (e.count > 1) attrs.push_back("penwidth=2");
      out_ += "  " + name_of(e.tail) + " -> " + name_of(e.head);
      for (size_t i = 0; i < attrs.size(); ++i) out_ += (i ? ", " : " [") + attrs[i];
      out_ += attrs.empty() ? ";\n" : "];\n";
    }
  }

  // What the colours and shapes of this view mean: one node holding a table,
  // so the entries keep their order (dot would order loose nodes of one rank
  // as it likes).
  void write_legend() {
    std::string cells;
    auto cell = [&](const std::string& attrs, std::string_view text) {
      cells += "<tr><td border=\"1\" style=\"rounded\" " + attrs + ">" + std::string(text) + "</td></tr>";
    };
    for (int p = 0; p < 3; ++p) {
      if (!present_[p]) continue;
      // With the memory picture on, the phase is the border, as on the nodes.
      cell(memory_on() ? std::string("color=\"") + palette::phase_line(Phase(p)) + "\""
                       : std::string("bgcolor=\"") + palette::phase_fill(Phase(p)) + "\"",
           phase_name(Phase(p)));
    }
    if (collective_) cell(std::string("bgcolor=\"") + palette::kCollective + "\"", "collective");
    if (memory_on()) cell("bgcolor=\"" + std::string(palette::block_fill(0)) + "\"", "fill: memory block");
    if (folded_) cell("", "3-d box: calls folded (\u00d7N: N calls)");
    if (!v_.values.empty()) cell("", "house: input; hexagon: constant");
    cell("", "double octagon: graph output");
    cell("", "edges: shapes where they change");
    out_ += "  legend [shape=plain, fontsize=8, label=<<table border=\"0\" cellspacing=\"2\" cellpadding=\"2\">" +
            cells + "</table>>" + (page_ ? ", id=\"legend\"" : "") + "];\n";
  }

  const Drawing& d_;
  const Graph& g_;
  const GroupTree& t_;
  const View& v_;
  const bool page_;
  std::string out_;
  std::unordered_map<uint32_t, uint32_t> box_of_;  // group -> the box folding it
  std::unordered_map<uint32_t, std::vector<uint32_t>> boxes_in_, open_in_, fused_in_;
  std::unordered_map<uint32_t, std::vector<NodeId>> ops_in_;
  struct FusedCluster {
    uint32_t fused;  // which fused node
    std::vector<NodeId> ops;
  };
  std::vector<FusedCluster> clusters_;
  std::vector<ValueId> writes_;  // per value: the state it becomes after a run, or kNone
  bool present_[3] = {false, false, false};
  bool collective_ = false, folded_ = false;
};

}  // namespace

std::string print_dot(const Drawing& d, const View& v, bool page) { return DotWriter(d, v, page).run(); }

std::string print_dot(const Graph& g, const DrawOptions& opt) {
  const Drawing d(g, opt);
  return print_dot(d, d.view(0));
}

}  // namespace nn::ir
