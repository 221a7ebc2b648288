// Graph mode in the interpreter (SPEC §6): a call of a `graph` function, or
// the execution of a `graph {...}` block, looks its signature up in the
// graph's cache; a new signature is traced (the body runs once with traced
// tensors while the ir::Tracer records every op), compiled into a plan, and
// every call runs the plan. --eager runs graphs as plain code; --check-graph
// runs both and compares (frontend/graph_check.cpp).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unordered_map>

#include <fmt/format.h>

#include "backend/error.h"
#include "frontend/graph_cache.h"
#include "frontend/interpreter.h"
#include "ir/executor.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace nn::frontend {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// How a non-tensor argument compares: by value for plain values, by
// identity for the rest (a model record, a function).
std::string host_key(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::None: return "none";
    case Value::Kind::Bool: return v.as_bool() ? "true" : "false";
    case Value::Kind::Int: return std::to_string(v.as_int());
    case Value::Kind::Float: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.as_float());
      return buf;
    }
    case Value::Kind::Str: return "\"" + v.as_str() + "\"";
    case Value::Kind::DType: return std::string(backend::dtype_name(v.as_dtype()));
    case Value::Kind::Record: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "record@%p", static_cast<const void*>(v.as_record().get()));
      return buf;
    }
    case Value::Kind::Function: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "fn@%p", static_cast<const void*>(v.as_function().get()));
      return buf;
    }
    default: return type_name(v);
  }
}

// The signature of the arguments, and their tensors in order (lists and
// tuples are looked into).
void flatten(const Value& v, const std::string& name, Signature& sig, std::vector<backend::Tensor>& tensors) {
  if (v.is_tensor()) {
    sig.push_back({name, true, v.as_tensor().type(), {}});
    tensors.push_back(v.as_tensor());
  } else if (v.is_list() || v.is_tuple()) {
    const auto& items = v.is_list() ? v.as_list()->items : v.as_tuple()->items;
    sig.push_back({name, false, {}, (v.is_list() ? "list " : "tuple ") + std::to_string(items.size())});
    for (size_t i = 0; i < items.size(); ++i) flatten(items[i], name + "[" + std::to_string(i) + "]", sig, tensors);
  } else {
    sig.push_back({name, false, {}, host_key(v)});
  }
}

// The arguments with each tensor replaced by a new graph input.
Value traced_args(const Value& v, const std::string& name, ir::Tracer& tr) {
  if (v.is_tensor()) return Value(tr.add_input(v.as_tensor().type(), name));
  if (v.is_list() || v.is_tuple()) {
    const auto& items = v.is_list() ? v.as_list()->items : v.as_tuple()->items;
    std::vector<Value> out;
    for (size_t i = 0; i < items.size(); ++i) out.push_back(traced_args(items[i], name + "[" + std::to_string(i) + "]", tr));
    return v.is_list() ? Value(make_list(std::move(out))) : Value(make_tuple(std::move(out)));
  }
  return v;
}

// The tensors of a traced result, each once, in order of appearance.
void collect_tensors(const Value& v, std::vector<backend::Tensor>& out,
                     std::unordered_map<const backend::TensorImpl*, size_t>& index) {
  if (v.is_tensor()) {
    if (index.emplace(v.as_tensor().impl(), out.size()).second) out.push_back(v.as_tensor());
  } else if (v.is_list() || v.is_tuple()) {
    for (const Value& x : v.is_list() ? v.as_list()->items : v.as_tuple()->items) collect_tensors(x, out, index);
  } else if (v.is_record()) {
    for (const auto& [k, x] : v.as_record()->fields) collect_tensors(x, out, index);
  }
}

// The traced result with its tensors replaced by this run's outputs, in the
// order collect_tensors found them.
Value rebuild(const Value& v, std::span<const backend::Tensor> outs, size_t& next,
              std::unordered_map<const backend::TensorImpl*, size_t>& seen) {
  if (v.is_tensor()) {
    auto [it, fresh] = seen.emplace(v.as_tensor().impl(), next);
    if (fresh) ++next;
    return Value(outs[it->second]);
  }
  if (v.is_list() || v.is_tuple()) {
    std::vector<Value> items;
    for (const Value& x : v.is_list() ? v.as_list()->items : v.as_tuple()->items) items.push_back(rebuild(x, outs, next, seen));
    return v.is_list() ? Value(make_list(std::move(items))) : Value(make_tuple(std::move(items)));
  }
  if (v.is_record()) {
    RecordPtr r = make_record();
    for (const auto& [k, x] : v.as_record()->fields) r->fields.emplace_back(k, rebuild(x, outs, next, seen));
    return Value(r);
  }
  return v;
}

// "argument `xb` dimension 0 changed from 64 to 37"
std::string what_changed(const Signature& old, const Signature& now) {
  for (size_t i = 0; i < now.size() && i < old.size(); ++i) {
    const SignatureItem &a = old[i], &b = now[i];
    if (a == b) continue;
    std::string who = "`" + b.name + "`";
    if (a.is_tensor && b.is_tensor) {
      if (a.type.dtype != b.type.dtype)
        return who + " changed dtype from " + std::string(backend::dtype_name(a.type.dtype)) + " to " +
               std::string(backend::dtype_name(b.type.dtype));
      if (a.type.shape.ndim() != b.type.shape.ndim())
        return who + " changed shape from " + a.type.shape.str() + " to " + b.type.shape.str();
      for (int d = 0; d < a.type.shape.ndim(); ++d)
        if (a.type.shape[d] != b.type.shape[d])
          return who + " dimension " + std::to_string(d) + " changed from " + std::to_string(a.type.shape[d]) + " to " +
                 std::to_string(b.type.shape[d]);
      return who + " moved from " + a.type.device->name() + " to " + b.type.device->name();
    }
    return who + " changed from " + (a.is_tensor ? a.type.str() : a.value) + " to " + (b.is_tensor ? b.type.str() : b.value);
  }
  return "the number of arguments changed";
}

// A traced tensor reachable from `v` (looking into lists, tuples and
// records): where it is, as a path from `name`; empty when none.
std::string find_traced(const Value& v, const std::string& name, std::unordered_map<const void*, bool>& seen,
                        backend::Tensor& found) {
  if (v.is_tensor()) {
    if (!v.as_tensor().is_traced()) return {};
    found = v.as_tensor();
    return name;
  }
  const void* id = v.is_list() ? static_cast<const void*>(v.as_list().get())
                   : v.is_tuple() ? static_cast<const void*>(v.as_tuple().get())
                   : v.is_record() ? static_cast<const void*>(v.as_record().get())
                                   : nullptr;
  if (!id || !seen.emplace(id, true).second) return {};
  if (v.is_record()) {
    for (const auto& [k, x] : v.as_record()->fields)
      if (std::string p = find_traced(x, name + "." + symbol_name(k), seen, found); !p.empty()) return p;
    return {};
  }
  const auto& items = v.is_list() ? v.as_list()->items : v.as_tuple()->items;
  for (size_t i = 0; i < items.size(); ++i)
    if (std::string p = find_traced(items[i], name + "[" + std::to_string(i) + "]", seen, found); !p.empty()) return p;
  return {};
}

// The device a graph computes on (whose pool its peak is read from): that
// of its first value on a GPU, else the CPU.
backend::Device* graph_device(const ir::Graph& g) {
  for (const ir::Value& v : g.values)
    if (v.type.device && v.type.device->type() != backend::DeviceType::cpu) return v.type.device;
  return backend::cpu_device();
}

}  // namespace

// A tensor of the trace left in a variable outside the graph (or in a list
// or record one holds) that is not an output: an error naming where it was
// made. `skip` are the variables a graph block assigns as outputs.
void Interpreter::check_escapes(ir::Tracer& tr, Env* env, const std::vector<Symbol>& skip, Span span) {
  std::unordered_map<const void*, bool> seen;
  std::unordered_map<Symbol, bool> shadowed;
  for (Symbol s : skip) shadowed.emplace(s, true);
  for (Env* e = env; e && e != prelude_.get(); e = e->parent.get())
    for (size_t i = 0; i < e->names.size(); ++i) {
      if (!shadowed.emplace(e->names[i], true).second) continue;
      backend::Tensor t;
      std::string where = find_traced(e->values[i], symbol_name(e->names[i]), seen, t);
      if (where.empty()) continue;
      std::string made = tr.origin(t);
      fail(span, "a tensor made inside graph `" + tr.name() + "`" + (made.empty() ? "" : " at " + made) +
                     " escapes into `" + where + "` without being an output of the graph; return it instead");
    }
}

bool Interpreter::graph_mode_on() const { return !opts_.eager_graphs && !ir::Tracer::active(); }

// The cache entry for `sig`, most recently used last; null when none fits.
static CompiledGraph* find_entry(GraphCache& cache, const Signature& sig) {
  for (size_t i = 0; i < cache.entries.size(); ++i) {
    if (cache.entries[i]->signature != sig) continue;
    std::unique_ptr<CompiledGraph> e = std::move(cache.entries[i]);
    cache.entries.erase(cache.entries.begin() + std::ptrdiff_t(i));
    cache.entries.push_back(std::move(e));
    return cache.entries.back().get();
  }
  return nullptr;
}

CompiledGraph& Interpreter::add_entry(GraphCache& cache, Signature sig, Span span) {
  bool full = cache.entries.size() >= GraphCache::kCapacity;
  if (!cache.entries.empty() && (full || explain_retrace_)) {
    std::string note = "note: graph " + cache.name + " retraced at " + sources_.location(span) + ": " +
                       what_changed(cache.entries.back()->signature, sig);
    if (full) note += " (its " + std::to_string(GraphCache::kCapacity) + " cached signatures are full: the least recently used goes)";
    std::cerr << note << "\n";
  }
  if (full) cache.entries.erase(cache.entries.begin());
  cache.entries.push_back(std::make_unique<CompiledGraph>());
  cache.entries.back()->signature = std::move(sig);
  ++cache.traces;
  return *cache.entries.back();
}

std::shared_ptr<GraphCache> Interpreter::new_graph_cache(std::string name) {
  auto c = std::make_shared<GraphCache>();
  c->name = std::move(name);
  graphs_.push_back(c);
  return c;
}

void Interpreter::compile(CompiledGraph& cg) {
  auto t0 = std::chrono::steady_clock::now();
  if (verify_graphs_) ir::check(cg.graph);
  cg.raw = cg.graph;
  std::function<void(const std::string&, const ir::Graph&)> dump;
  if (!opts_.dump_passes_dir.empty()) dump = dump_passes(cg.graph.name, cg.raw);
  cg.passes = ir::optimize(cg.graph, opts_.disabled_passes, dump);
  if (verify_graphs_) ir::check(cg.graph);
  auto t1 = std::chrono::steady_clock::now();
  cg.plan = ir::make_plan(cg.graph, opts_.schedule, opts_.memory);
  cg.plan_ms = ms_since(t1);
  cg.compile_ms = ms_since(t0);
  if (opts_.on_compiled) opts_.on_compiled(cg.graph);
}

std::vector<backend::Tensor> Interpreter::run_compiled(CompiledGraph& cg, std::span<const backend::Tensor> inputs) {
  backend::CachingPool& pool = graph_device(cg.graph)->pool();
  size_t before = pool.stats().current;
  size_t enclosing = pool.begin_window();
  std::vector<backend::Tensor> outs;
  try {
    outs = ir::run(cg.graph, cg.plan, inputs);
  } catch (const ir::RunError& e) {
    pool.end_window(enclosing);
    Span at{e.loc().file, e.loc().begin, e.loc().end};
    fail(at, e.what());
  }
  cg.peak_bytes = pool.stats().window_peak - before;
  pool.end_window(enclosing);
  ++cg.runs;
  return outs;
}

// nn ir --dump-passes DIR: the IR before the passes and after each, in
// numbered files (00-traced.ir, 01-constant-fold.ir, ...).
std::function<void(const std::string&, const ir::Graph&)> Interpreter::dump_passes(const std::string& graph,
                                                                                    const ir::Graph& raw) {
  std::filesystem::path dir = opts_.dump_passes_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto write = [dir, graph](int k, const std::string& what, const ir::Graph& g) {
    std::filesystem::path file = dir / fmt::format("{}.{:02d}-{}.ir", graph, k, what);
    std::ofstream out(file);
    out << ir::print_ir(g);
    if (!out) throw backend::Error("cannot write `" + file.string() + "`");
  };
  write(0, "traced", raw);
  auto k = std::make_shared<int>(0);
  return [write, k](const std::string& pass, const ir::Graph& g) { write(++*k, pass, g); };
}

void Interpreter::start_trace(ir::Tracer& tr) {
  tr.graph().locate = [this](const ir::Loc& l) { return sources_.location(Span{l.file, l.begin, l.end}); };
  tr.start();
}

Value Interpreter::call_graph(const Function& f, std::vector<Value>& args, Span call_span) {
  const FunctionDef& def = *f.def;
  if (!f.graph_cache) f.graph_cache = new_graph_cache(def.name.empty() ? "<lambda>" : def.name);
  GraphCache& cache = *f.graph_cache;
  Signature sig;
  std::vector<backend::Tensor> inputs;
  for (size_t i = 0; i < args.size(); ++i) flatten(args[i], def.params[i].name, sig, inputs);

  CompiledGraph* cg = find_entry(cache, sig);
  if (!cg) {
    cg = &add_entry(cache, std::move(sig), call_span);
    auto t0 = std::chrono::steady_clock::now();
    ir::Tracer tr(cache.name);
    auto env = std::make_shared<Env>(f.env);
    start_trace(tr);
    try {
      for (size_t i = 0; i < args.size(); ++i)
        env->define(intern(def.params[i].name), traced_args(args[i], def.params[i].name, tr));
      exec_stmts(def.body->stmts, env, &cg->result);
    } catch (...) {
      cache.entries.pop_back();  // no half-made graph in the cache
      throw;
    }
    std::vector<backend::Tensor> outs;
    std::unordered_map<const backend::TensorImpl*, size_t> index;
    collect_tensors(cg->result, outs, index);
    try {
      check_escapes(tr, f.env.get(), {}, call_span);
    } catch (...) {
      cache.entries.pop_back();
      throw;
    }
    cg->graph = tr.finish(outs);
    cg->trace_ms = ms_since(t0);
    compile(*cg);
  }
  std::vector<backend::Tensor> outs;
  if (opts_.check_graphs) {
    outs = check_against_eager(*cg, inputs, [&] {
      auto env = std::make_shared<Env>(f.env);
      for (size_t i = 0; i < args.size(); ++i) env->define(intern(def.params[i].name), args[i]);
      Value r;
      exec_stmts(def.body->stmts, env, &r);
      std::vector<backend::Tensor> ts;
      std::unordered_map<const backend::TensorImpl*, size_t> index;
      collect_tensors(r, ts, index);
      return ts;
    }, call_span);
  } else {
    outs = run_compiled(*cg, inputs);
  }
  size_t next = 0;
  std::unordered_map<const backend::TensorImpl*, size_t> seen;
  return rebuild(cg->result, outs, next, seen);
}

// The tensor variables a block sees, innermost first, each name once.
static std::vector<std::pair<Symbol, Value*>> visible_tensors(Env* env, const Env* stop) {
  std::vector<std::pair<Symbol, Value*>> out;
  std::unordered_map<Symbol, bool> seen;
  for (Env* e = env; e && e != stop; e = e->parent.get())
    for (size_t i = 0; i < e->names.size(); ++i)
      if (seen.emplace(e->names[i], true).second && e->values[i].is_tensor()) out.emplace_back(e->names[i], &e->values[i]);
  return out;
}

// A graph block: its inputs are the tensor variables it reads from the
// scopes around it, its outputs the variables it assigns there.
Interpreter::Flow Interpreter::exec_graph_block(const GraphBlockStmt& s, const EnvPtr& env) {
  if (!graph_mode_on()) return exec_block(*s.body, env, nullptr);
  auto& slot = block_graphs_[&s];
  if (!slot) slot = new_graph_cache("graph block at " + sources_.location(s.span));
  GraphCache& cache = *slot;

  // The inputs a compiled entry reads, looked up by name now.
  auto bind = [&](const CompiledGraph& cg, std::vector<backend::Tensor>& inputs) {
    inputs.clear();
    for (const SignatureItem& item : cg.signature) {
      Value* v = env->find(intern(item.name));
      if (!v || !v->is_tensor()) return false;
      const backend::TensorType t = v->as_tensor().type();
      if (t.dtype != item.type.dtype || t.shape != item.type.shape || t.device != item.type.device) return false;
      inputs.push_back(v->as_tensor());
    }
    return true;
  };
  std::vector<backend::Tensor> inputs;
  CompiledGraph* cg = nullptr;
  for (size_t i = cache.entries.size(); i-- > 0;)
    if (bind(*cache.entries[i], inputs)) {
      cg = find_entry(cache, cache.entries[i]->signature);
      break;
    }
  if (!cg) {
    auto t0 = std::chrono::steady_clock::now();
    std::unordered_map<const backend::TensorImpl*, std::string> names;
    std::unordered_map<std::string, backend::Tensor> before;
    for (auto& [sym, v] : visible_tensors(env.get(), prelude_.get())) {
      names.emplace(v->as_tensor().impl(), symbol_name(sym));
      before.emplace(symbol_name(sym), v->as_tensor());
    }
    ir::Tracer tr(cache.name);
    tr.input_name = [&](const backend::Tensor& t) {
      auto it = names.find(t.impl());
      return it == names.end() ? std::string() : it->second;
    };
    // What the variables held before: a failed trace puts them back.
    std::vector<std::pair<Value*, Value>> saved;
    for (auto& [sym, v] : visible_tensors(env.get(), prelude_.get())) saved.emplace_back(v, *v);
    start_trace(tr);
    std::vector<backend::Tensor> outs;
    std::vector<Symbol> assigns;
    try {
      exec_block(*s.body, env, nullptr);
      for (auto& [sym, v] : visible_tensors(env.get(), prelude_.get()))
        if (tr.is_traced(v->as_tensor())) {
          outs.push_back(v->as_tensor());
          assigns.push_back(sym);
        }
      check_escapes(tr, env.get(), assigns, s.span);
    } catch (...) {
      for (auto& [v, old] : saved) *v = std::move(old);
      throw;
    }
    // The variables get this run's outputs below; until then they hold what
    // they held before (--check-graph runs the block eagerly from there).
    for (auto& [v, old] : saved) *v = std::move(old);
    ir::Graph g = tr.finish(outs);
    Signature sig;
    inputs.clear();
    for (ir::ValueId v : g.inputs) {
      sig.push_back({g.values[v].name, true, g.values[v].type, {}});
      inputs.push_back(before.at(g.values[v].name));
    }
    cg = &add_entry(cache, std::move(sig), s.span);
    cg->graph = std::move(g);
    cg->assigns = std::move(assigns);
    cg->trace_ms = ms_since(t0);
    compile(*cg);
  }
  std::vector<backend::Tensor> outs;
  if (opts_.check_graphs) {
    outs = check_against_eager(*cg, inputs, [&] {
      exec_block(*s.body, env, nullptr);
      std::vector<backend::Tensor> ts;
      for (Symbol sym : cg->assigns) ts.push_back(env->find(sym)->as_tensor());
      return ts;
    }, s.span);
  } else {
    outs = run_compiled(*cg, inputs);
  }
  for (size_t i = 0; i < outs.size(); ++i) *env->find(cg->assigns[i]) = Value(outs[i]);
  return Flow::Normal;
}

}  // namespace nn::frontend
