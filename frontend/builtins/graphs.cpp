// Introspection of graph mode (SPEC §6): ir(g) gives the IR text of the
// graph's latest compiled signature, graph_stats(g) its counts, memory and
// compile time.
#include "backend/error.h"
#include "frontend/builtins/builtins.h"
#include "frontend/graph_cache.h"
#include "frontend/interpreter.h"
#include "ir/printer.h"

namespace nn::frontend::builtins {
namespace {

// The latest compiled graph of a graph function argument.
const CompiledGraph& compiled(Args& a, size_t i) {
  const Value& v = a[i];
  const Function* f = v.is_function() ? v.as_function().get() : nullptr;
  if (!f || f->kind != Function::Kind::Closure || !f->def->is_graph)
    a.fail(i, "expected a graph function (`graph name(...) {...}`), got " + a_type_name(v));
  const CompiledGraph* cg = f->graph_cache ? f->graph_cache->latest() : nullptr;
  if (!cg)
    a.fail(i, "graph " + f->name() + " has not been compiled yet" +
                  (a.vm().options().eager_graphs ? std::string(" (--eager runs graphs as plain code)")
                                                 : "; call it once first"));
  return *cg;
}

}  // namespace

void install_graphs(Interpreter& vm) {
  def(vm, "ir", "g", [](Args& a) { return Value(ir::print_ir(compiled(a, 0).graph)); });

  def(vm, "graph_stats", "g", [](Args& a) {
    const CompiledGraph& cg = compiled(a, 0);
    auto r = make_record();
    r->set(intern("nodes"), Value(int64_t(cg.graph.nodes.size())));
    r->set(intern("edges"), Value(int64_t(cg.graph.edge_count())));
    r->set(intern("fused_groups"), Value(int64_t(0)));
    r->set(intern("peak_bytes"), Value(int64_t(cg.peak_bytes)));
    r->set(intern("planned_bytes"), Value(int64_t(cg.plan.planned_bytes)));
    r->set(intern("compile_ms"), Value(cg.trace_ms + cg.compile_ms));
    r->set(intern("runs"), Value(int64_t(cg.runs)));
    return Value(r);
  });
}

}  // namespace nn::frontend::builtins
