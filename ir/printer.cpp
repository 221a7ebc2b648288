// The IR text printer: header with the graph inputs, one line per captured
// tensor, one line per node (with phase comments and source locations), the
// state write-backs and the returned values.
#include "ir/printer.h"

#include "backend/ops/fused_program.h"

#include <cstdio>

#include <charconv>
#include <type_traits>
#include <variant>

namespace nn::ir {
namespace {

// Source locations line up in one column so a reader can scan them; column
// 56 counted from 1, so the text before the `#` is padded to 55 characters.
constexpr size_t kWhereColumn = 55;


// The printer also shows broken graphs, so an id past the end is no crash.
std::string type_text(const Graph& g, ValueId v) { return v < g.values.size() ? g.values[v].type.str() : "?"; }

void append_ids(std::string& out, const std::vector<ValueId>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ", ";
    out += (std::string("%") += std::to_string(ids[i]));
  }
}

// "%3 name: f32[2]" or "%3: f32[2]" when the value has no name.
std::string named_value(const Graph& g, ValueId v) {
  std::string s = (std::string("%") += std::to_string(v));
  if (v < g.values.size() && !g.name_of(v).empty()) s += " " + g.name_of(v);
  return s + ": " + type_text(g, v);
}

void append_where(std::string& line, const std::string& where) {
  if (where.empty()) return;
  line.append(line.size() + 2 <= kWhereColumn ? kWhereColumn - line.size() : 2, ' ');
  line += "# " + where;
}

// A fused node's steps, one a line under it: "    t1 = add t0, %3 -> %5".
// A matmul_epilogue's program reads the product as its input 0 and the
// node's inputs after the two matrices as the rest.
std::string program_lines(const Graph& g, const Node& n) {
  const backend::FusedProgram& p = backend::program_of(n.attrs);
  const bool epilogue = n.op && n.op->id == OpId::matmul_epilogue;
  std::string out;
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const backend::FusedProgram::Step& st = p.steps[s];
    std::string line = "      t" + std::to_string(s) + " = " + (st.op ? st.op->name : "?") + " ";
    for (size_t k = 0; k < st.args.size(); ++k) {
      const backend::FusedProgram::Arg& a = st.args[k];
      if (k) line += ", ";
      switch (a.kind) {
        case backend::FusedProgram::Arg::Kind::input: {
          const size_t at = epilogue ? a.index + 1 : a.index;
          if (epilogue && a.index == 0) line += "product";
          else if (at < n.inputs.size()) (line += '%') += std::to_string(n.inputs[at]);
          else line += '?';
          break;
        }
        case backend::FusedProgram::Arg::Kind::step: (line += 't') += std::to_string(a.index); break;
        case backend::FusedProgram::Arg::Kind::immediate: {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.9g", a.index < p.immediates.size() ? p.immediates[a.index] : 0.0);
          line += buf;
          break;
        }
      }
    }
    if (!st.attrs.empty()) line += " {" + st.attrs.str() + "}";
    if (st.dtype != p.compute) line += " : " + std::string(backend::dtype_name(st.dtype));
    for (size_t o = 0; o < p.outputs.size() && o < n.outputs.size(); ++o)
      if (p.outputs[o] == s) line += " -> %" + std::to_string(n.outputs[o]);
    if (s < n.parts().size()) append_where(line, g.where(n.parts()[s].loc));
    out += line + "\n";
  }
  return out;
}

std::string node_line(const Graph& g, const Node& n) {
  std::string line = "  ";
  // A host call makes no values: it has no `=` and no output types.
  if (!n.outputs.empty()) {
    append_ids(line, n.outputs);
    line += " = ";
  }
  line += n.name();
  if (!n.inputs.empty()) {
    line += " ";
    append_ids(line, n.inputs);
  }
  // A fused node's program is printed under it, a step a line.
  const bool fused = n.attrs.has("program");
  backend::Attrs shown;
  for (const auto& [key, value] : n.attrs.items())
    if (key != "program") shown.set(key, value);
  if (!shown.empty()) line += " {" + shown.str() + "}";
  if (!n.outputs.empty()) {
    line += " : ";
    for (size_t i = 0; i < n.outputs.size(); ++i) line += (i ? ", " : "") + type_text(g, n.outputs[i]);
  }
  if (fused) line += " {";
  // A fused node's parts have their own lines; a matmul_epilogue's GEMM is its own.
  if (!fused || n.parts().empty() || n.parts()[0].loc.begin != n.loc.begin || n.parts()[0].loc.file != n.loc.file)
    append_where(line, n.recomputed ? "recomputed " + g.where(n.loc) : g.where(n.loc));
  return fused ? line + "\n" + program_lines(g, n) + "    }" : line;
}

}  // namespace

std::string print_ir(const Graph& g) {
  std::string out = "graph " + g.name + "(";
  for (size_t i = 0; i < g.inputs.size(); ++i) out += (i ? ", " : "") + named_value(g, g.inputs[i]);
  out += ") {\n";

  // Captured tensors have no node; listing them first gives every id a
  // declaration before its first use.
  for (ValueId v = 0; v < g.values.size(); ++v) {
    Role r = g.values[v].role;
    if (r == Role::param || r == Role::state || r == Role::constant) {
      out += std::string("  ") + role_name(r) + " " + named_value(g, v);
      // A one-element constant (a host number in the script) shows its value.
      const backend::Tensor& c = g.values[v].captured;
      if (r == Role::constant && c.defined() && c.numel() == 1 && !c.is_traced()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, " = %.9g", c.item_double());
        out += buf;
      }
      out += "\n";
    }
  }

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (i == 0 || n.phase != g.nodes[i - 1].phase) out += std::string("  # ") + phase_name(n.phase) + "\n";
    out += node_line(g, n) + "\n";
  }

  for (const StateUpdate& u : g.updates)
    out += (std::string("  %") += std::to_string(u.state)) + (std::string(" <- %") += std::to_string(u.value)) + "\n";
  if (!g.outputs.empty()) {
    out += "  return ";
    append_ids(out, g.outputs);
    out += "\n";
  }
  return out + "}\n";
}

}  // namespace nn::ir
