// Introspection of graph mode (SPEC §6): ir(g, raw=false) gives the IR text
// of the graph's latest compiled signature (optimized, or as traced), graph_stats(g) its counts, memory and
// compile time, dot(g, path) writes its Graphviz picture. `g` is a graph
// function, or the name of a compiled graph function or block as :graphs
// lists it ("train_step", "graph block at f.nn:3:1"). `dot` is also the
// linear-algebra dot product (SPEC §7): dot(a, b) of two tensors still is.
#include <cctype>
#include <cstdint>

#include "backend/error.h"
#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/builtins/file_io.h"
#include "frontend/diagnostic.h"
#include "frontend/graph_cache.h"
#include "frontend/interpreter.h"
#include "frontend/graph_picture.h"
#include "ir/picture/picture.h"
#include "ir/printer.h"

namespace nn::frontend::builtins {
namespace {

// `failed`: it was called, but its trace failed (the error said why).
std::string not_compiled(Args& a, const std::string& name, bool failed) {
  if (failed) return "graph " + name + " has no compiled signature: its trace failed; call it again once that is fixed";
  std::string m = "graph " + name + " has not been compiled yet";
  m += a.vm().options().eager_graphs ? " (--eager runs graphs as plain code)" : "; call it once first";
  return m;
}

// The latest compiled graph named `name` in the interpreter's list: of the
// graphs with that name (a graph function defined again in the REPL makes a
// second one), the most recently made that has compiled.
const CompiledGraph& compiled_by_name(Args& a, size_t i, const std::string& name) {
  const auto& graphs = a.vm().graphs();
  bool known = false, failed = false;
  for (size_t k = graphs.size(); k-- > 0;) {
    if (graphs[k]->name != name) continue;
    known = true;
    failed = failed || graphs[k]->traces > 0;
    if (const CompiledGraph* cg = graphs[k]->latest()) return *cg;
  }
  if (!known) {  // a graph function that was never called has no cache yet
    const Value* g = a.vm().find_global(name);
    const Function* f = g && g->is_function() ? g->as_function().get() : nullptr;
    known = f && f->kind == Function::Kind::Closure && f->def->is_graph;
  }
  if (known) a.fail(i, not_compiled(a, name, failed));
  std::vector<std::string> names;
  for (const auto& c : graphs) names.push_back(c->name);
  std::string m = "no graph named `" + name + "` has been compiled";
  std::string hint = closest_name(name, names);
  if (!hint.empty()) m += " (did you mean `" + hint + "`?)";
  a.fail(i, m);
}

// The latest compiled graph of a graph function argument, or of the graph
// the string argument names. Not inside a graph: the one being traced is
// not compiled yet, and a replay would keep what the trace read.
const CompiledGraph& compiled(Args& a, size_t i, const char* who) {
  refuse_in_graph(a, who);
  const Value& v = a[i];
  if (v.is_str()) return compiled_by_name(a, i, v.as_str());
  const Function* f = v.is_function() ? v.as_function().get() : nullptr;
  if (!f || f->kind != Function::Kind::Closure || !f->def->is_graph)
    a.fail(i, "expected a graph function (`graph name(...) {...}`) or a graph's name, got " + a_type_name(v));
  const CompiledGraph* cg = f->graph_cache ? f->graph_cache->latest() : nullptr;
  if (!cg) a.fail(i, not_compiled(a, f->name(), f->graph_cache && f->graph_cache->traces > 0));
  return *cg;
}

// dot(g, "f.svg") draws a graph; dot(a, b) of tensors is the dot product.
bool is_picture_call(const Args& a) {
  const Value& g = a[0];
  return g.is_function() || g.is_str() || a[1].is_str();
}

}  // namespace

void install_graphs(Interpreter& vm) {
  // ir(g, raw=false): the optimized graph that runs, or the graph as traced.
  def(vm, "ir", "g, raw=false", [](Args& a) {
    const CompiledGraph& cg = compiled(a, 0, "ir");
    return Value(ir::print_ir(a.boolean(1) ? cg.raw : cg.graph));
  });

  def(vm, "graph_stats", "g", [](Args& a) {
    const CompiledGraph& cg = compiled(a, 0, "graph_stats");
    auto r = make_record();
    r->set(intern("nodes"), Value(int64_t(cg.graph.nodes.size())));
    r->set(intern("edges"), Value(int64_t(cg.graph.edge_count())));
    int64_t fused = 0;  // fused and matmul_epilogue nodes
    for (const ir::Node& n : cg.graph.nodes) fused += n.attrs.has("program");
    r->set(intern("fused_groups"), Value(fused));
    r->set(intern("peak_bytes"), Value(int64_t(cg.peak_bytes)));
    r->set(intern("planned_bytes"), Value(int64_t(cg.plan.planned_bytes)));
    r->set(intern("lower_bound_bytes"), Value(int64_t(cg.plan.lower_bound_bytes)));
    r->set(intern("compile_ms"), Value(cg.trace_ms + cg.compile_ms));
    r->set(intern("runs"), Value(int64_t(cg.runs)));
    // The graph as traced, before the passes, and where compile time went.
    r->set(intern("nodes_traced"), Value(int64_t(cg.raw.nodes.size())));
    r->set(intern("edges_traced"), Value(int64_t(cg.raw.edge_count())));
    r->set(intern("trace_ms"), Value(cg.trace_ms));
    double passes_ms = 0;
    auto per_pass = make_list();  // {name, changed, nodes, ms} in the order they ran
    for (const ir::PassResult& p : cg.passes) {
      passes_ms += p.ms;
      auto e = make_record();
      e->set(intern("name"), Value(p.pass));
      e->set(intern("changed"), Value(int64_t(p.changed)));
      e->set(intern("nodes"), Value(int64_t(p.nodes_after)));
      e->set(intern("ms"), Value(p.ms));
      per_pass->items.push_back(Value(e));
    }
    r->set(intern("passes_ms"), Value(passes_ms));
    r->set(intern("passes"), Value(per_pass));
    r->set(intern("plan_ms"), Value(cg.plan_ms));
    return Value(r);
  });

  // dot(g, path, raw=false, memory=false, collapse="auto"): the picture of
  // g's latest compiled graph, by the path's extension (.dot .svg .png .pdf,
  // or .html for the interactive page). memory=true fills the nodes by the
  // block of the memory plan that holds their value and shows each value's
  // reader count; collapse=N folds the nn function calls nested deeper than
  // N into one box each (-1: none; "auto": the deepest N drawing at most 80
  // boxes). raw=true draws the graph as traced, before the passes; its
  // memory picture is the plan it would get (it never runs). This replaces
  // math.cpp's dot(a, b), which it still is for anything that is not a graph.
  def(vm, "dot", "g, path, raw=false, memory=false, collapse=\"auto\"", [](Args& a) {
    if (!is_picture_call(a)) {
      for (size_t i = 2; i < 5; ++i)
        if (a.given(i)) a.fail(i, "dot of two tensors takes no picture options (dot(g, path) draws a graph)");
      return Value(backend::dot(a.tensor(0), a.tensor(1)));
    }
    const CompiledGraph& cg = compiled(a, 0, "dot");
    const std::string& path = a.str(1);
    std::string denied = fileio::access_denied(a.vm().options().allow_files, path, true);
    if (!denied.empty()) a.fail(1, denied);
    if (!ir::is_picture_path(path))  // draw_picture says the same; here the path is underlined
      a.fail(1, "dot: cannot write `" + path + "`: the picture's extension must be " + ir::kPictureExtensions);
    PictureRequest request;
    request.raw = a.boolean(2);
    request.memory = a.boolean(3);
    if (!(a[4].is_str() && a.str(4) == "auto")) {
      const bool depth = a[4].is_int() && a.integer(4) >= -1 && a.integer(4) <= INT32_MAX;
      if (!depth)
        a.fail(4, "collapse is a nesting depth (0, 1, ...), -1 for none or \"auto\", not " +
                      (a[4].is_int() ? std::to_string(a.integer(4)) : a_type_name(a[4])));
      request.collapse = int(a.integer(4));
    }
    draw_graph(a.vm(), cg, request, path);  // backend::Error: a diagnostic at the call
    return Value();
  });
}

}  // namespace nn::frontend::builtins
