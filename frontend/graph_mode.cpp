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
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "backend/autocast.h"
#include "backend/autograd.h"
#include "backend/error.h"
#include "backend/ops.h"
#include "frontend/format.h"
#include "frontend/graph_cache.h"
#include "frontend/interpreter.h"
#include "frontend/tensor_walk.h"
#include "ir/compile.h"
#include "ir/executor.h"
#include "ir/printer.h"

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
    // Shortest round-trip form, which --explain shows (0.1, not
    // 0.10000000000000001), with a point: 2.0 is not the int 2 (a product's
    // dtype differs).
    case Value::Kind::Float: return format_float(v.as_float());
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
    case Value::Kind::Range: {  // by value: 0..2 and 0..5 loop differently
      const RangeValue r = v.as_range();
      return "range(" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + ", " + std::to_string(r.step) + ")";
    }
    case Value::Kind::Device: return "device " + v.as_device()->name();
    case Value::Kind::Iterator: {  // by identity and position: the trace unrolled what it took
      char buf[64];
      std::snprintf(buf, sizeof buf, "iterator@%p after %llu", static_cast<const void*>(v.as_iterator().get()),
                    static_cast<unsigned long long>(v.as_iterator()->taken));
      return buf;
    }
    default: return type_name(v);
  }
}

// A param (a leaf autodiff tracks) given as an argument is the graph's by
// reference, as a captured one is: a gradient with respect to it, and an
// optimizer's update of it, then see it as eager code does (as an input it
// was a constant copy: zero gradients, no update). The signature names it.
bool passed_param(const backend::Tensor& t) { return t.impl()->requires_grad && !t.impl()->grad_fn; }

// The signature of an argument, and its tensors in order (lists and tuples
// are looked into); a param is no input, and its signature is itself.
void flatten(const Value& v, const std::string& name, Signature& sig, std::vector<backend::Tensor>& tensors,
             std::vector<Value>& by_address) {
  TensorVisitor visit;
  visit.tensor = [&](const backend::Tensor& t, const ValuePath& path) {
    if (passed_param(t)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "@%p", static_cast<const void*>(t.impl()));
      sig.push_back({path.str(), false, {}, "param " + t.type().str() + buf});
      return Walk::go_on;
    }
    sig.push_back({path.str(), true, t.type(), {}});
    tensors.push_back(t);
    return Walk::go_on;
  };
  visit.other = [&](const Value& x, const ValuePath& path) {
    if (x.is_list() || x.is_tuple()) {
      const size_t n = x.is_list() ? x.as_list()->items.size() : x.as_tuple()->items.size();
      sig.push_back({path.str(), false, {}, (x.is_list() ? "list " : "tuple ") + std::to_string(n)});
    } else {
      sig.push_back({path.str(), false, {}, host_key(x)});
      if (x.is_record() || x.is_function() || x.is_iterator()) by_address.push_back(x);
    }
  };
  for_each_tensor(v, name, Reach::sequences, visit);
}

// The tensors of a traced result, each once, in order of appearance.
std::vector<backend::Tensor> result_tensors(const Value& result) {
  std::vector<backend::Tensor> out;
  std::unordered_set<const backend::TensorImpl*> seen;
  for_each_tensor(result, Reach::sequences_and_records, [&](const backend::Tensor& t) {
    if (seen.insert(t.impl()).second) out.push_back(t);
  });
  return out;
}

// The traced result with its tensors replaced by this run's outputs, in the
// order result_tensors found them.
Value with_outputs(const Value& result, std::span<const backend::Tensor> outs) {
  std::unordered_map<const backend::TensorImpl*, size_t> index;
  return map_tensors(result, {}, Reach::sequences_and_records, [&](const backend::Tensor& t, const ValuePath&) {
    return outs[index.emplace(t.impl(), index.size()).first->second];
  });
}

// "argument `xb` dimension 0 changed from 64 to 37"
std::string what_changed(const Signature& old, const Signature& now) {
  // A graph block's variable holding a tensor where it held none (an output
  // the block now writes in place) adds an input.
  for (const SignatureItem& b : now)
    if (b.is_tensor && std::none_of(old.begin(), old.end(), [&b](const SignatureItem& a) { return a.name == b.name; }))
      return "`" + b.name + "` holds a tensor, which it did not when traced";
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
    if (a.value.starts_with("param ") && b.value.starts_with("param "))
      return who + " is another param";  // the graph holds the one it was traced with
    for (const char* kind : {"record", "fn", "iterator"})
      if (a.value.starts_with(std::string(kind) + "@") && b.value.starts_with(std::string(kind) + "@")) {
        const bool same_one = a.value.substr(0, a.value.find(' ')) == b.value.substr(0, b.value.find(' '));
        if (same_one) return who + " has moved on since the trace took its values";  // an iterator
        return who + " is another " + (std::string(kind) == "fn" ? "function" : kind);
      }
    return who + " changed from " + (a.is_tensor ? a.type.str() : a.value) + " to " + (b.is_tensor ? b.type.str() : b.value);
  }
  return "the number of arguments changed";
}

// Why a graph with a cached entry of this very signature traces again: the
// gradient mode or autocast it runs under.
std::string what_mode_changed(const CompiledGraph& e) {
  if (e.grad_mode != backend::grad_enabled())
    return e.grad_mode ? "it runs under no_grad now, and was traced with gradients on"
                       : "it runs with gradients on now, and was traced under no_grad";
  auto name = [](backend::DType t) {
    return t == backend::DType::f32 ? std::string("off") : std::string(backend::dtype_name(t));
  };
  return "autocast is " + name(backend::autocast_dtype()) + " now, and was " + name(e.autocast) + " when traced";
}

// Why a call traces again, when no guard said why.
std::string why_retraced(const GraphCache& cache, const Signature& sig) {
  for (const auto& e : cache.entries)
    if (e->signature == sig) return what_mode_changed(*e);
  return what_changed(cache.entries.back()->signature, sig);
}

// A traced tensor reachable from `v` (looking into lists, tuples and
// records): where it is, as a path from `name`; empty when none. `opened`:
// the containers looked into already.
// Whether x is a closure defined while a graph was traced (in the graph's
// own scope): a replay would hand out that one closure, and the variables it
// holds, where eager code makes a new one on every call.
bool closure_made_in_trace(const Value& x) {
  if (!x.is_function() || x.as_function()->kind != Function::Kind::Closure) return false;
  for (const Env* e = x.as_function()->env.get(); e; e = e->parent.get())
    if (e->made_in_trace) return true;
  return false;
}

// The way out of a graph block: its outputs are the variables outside it
// that it assigns a tensor.
constexpr const char* kBlockWayOut = "assign it to a variable of its own outside the block (the block's outputs)";

constexpr const char* kSharedClosure =
    ": every later call would give that same function, sharing its variables, where eager code makes a new one on "
    "each call; define the function outside the graph";

// Where v holds a tensor the trace made (`found`), else a closure defined
// in the trace (`found` undefined); "" for neither.
std::string find_traced(const Value& v, const std::string& name, std::unordered_set<const void*>& opened,
                        backend::Tensor& found) {
  std::string where, closure;
  TensorVisitor visit;
  visit.tensor = [&](const backend::Tensor& t, const ValuePath& path) {
    if (!t.is_traced()) return Walk::go_on;
    found = t;
    where = path.str();
    return Walk::stop;
  };
  visit.other = [&](const Value& x, const ValuePath& path) {
    if (closure.empty() && closure_made_in_trace(x)) closure = path.str();
  };
  for_each_tensor(v, name, Reach::sequences_and_records, visit, &opened);
  return where.empty() ? closure : where;
}

bool holds_closure_made_in_trace(const Value& v) {
  bool found = false;
  TensorVisitor visit;
  visit.tensor = [](const backend::Tensor&, const ValuePath&) { return Walk::go_on; };
  visit.other = [&](const Value& x, const ValuePath&) { found |= closure_made_in_trace(x); };
  for_each_tensor(v, "", Reach::sequences_and_records, visit);
  return found;
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
  std::unordered_set<const void*> opened;
  std::unordered_map<Symbol, bool> shadowed;
  for (Symbol s : skip) shadowed.emplace(s, true);
  for (Env* e = env; e && e != prelude_.get(); e = e->parent.get())
    for (size_t i = 0; i < e->names.size(); ++i) {
      if (!shadowed.emplace(e->names[i], true).second) continue;
      backend::Tensor t;
      std::string where = find_traced(e->values[i], symbol_name(e->names[i]), opened, t);
      if (where.empty()) continue;
      if (!t.defined())
        fail(span, "a function defined inside graph `" + tr.name() + "` escapes into `" + where + "`" + kSharedClosure);
      std::string made = tr.origin(t);
      const std::string arg = tr.argument_name(t);
      std::string what = arg.empty() ? "a tensor made inside graph `" + tr.name() + "`" + (made.empty() ? "" : " at " + made)
                                     : "argument `" + arg + "` of graph `" + tr.name() + "`";
      what += " escapes into `" + where + "` without being an output of the graph";
      const bool block = tr.name().starts_with("graph block");
      auto store = traced_stores_.find(t.impl());
      if (store == traced_stores_.end()) fail(span, what + "; " + (block ? kBlockWayOut : "return it") + " instead");
      fail(store->second.at, what + "; " + escape_hint(store->second, where, block));
    }
}

// The way out of an escape at an assignment into `where`: `m.w = m.w - d`
// over a tensor is meant as an update of the tensor the graph captured,
// which `m.w -= d` makes (a state update, written back on every run).
std::string Interpreter::escape_hint(const TracedStore& store, const std::string& where, bool block) const {
  // A function returns what it gives; a block cannot.
  auto out = [block](const std::string& fn) { return block ? std::string(kBlockWayOut) : fn; };
  if (!store.assign || !store.over_tensor) return out("return it from the graph") + " instead";
  // A plain assignment of another shape or dtype (SPEC §13 updates the
  // tensor only with a value it can hold).
  const backend::TensorType now = store.tensor.type();
  if (store.assign->target->kind != ExprKind::Index &&
      (now.shape != store.replaced.shape || now.device != store.replaced.device))
    return "a graph updates a captured tensor only with a value of its shape (`" + where + "` is " + store.replaced.str() +
           ", the new value " + now.str() + "); " + out("return the new value from the graph") + " instead";
  // Floats written in place into integers would be cut (`i += x` refuses them).
  if (backend::is_floating(now.dtype) && !backend::is_floating(store.replaced.dtype))
    return "a graph updates a captured " + std::string(backend::dtype_name(store.replaced.dtype)) +
           " tensor only with values it holds (`" + where + "` is " + store.replaced.str() + ", the new value " +
           now.str() + "); " + out("return the new value from the graph") + " instead";
  const AssignStmt& a = *store.assign;
  auto text = [&](const Span& s) {
    return sources_.file(s.file).text().substr(s.begin, s.end - s.begin);
  };
  std::string in_place = "`" + where + " -= ...`";
  if (a.value->kind == ExprKind::Binary) {
    const auto& b = static_cast<const BinaryExpr&>(*a.value);
    const bool arithmetic = b.op == BinOp::Add || b.op == BinOp::Sub || b.op == BinOp::Mul || b.op == BinOp::Div;
    if (arithmetic && text(b.lhs->span) == text(a.target->span))
      in_place = "`" + text(a.target->span) + " " + binop_symbol(b.op) + "= " + text(b.rhs->span) + "`";
  }
  return "to update it on every run, write into it in place: " + in_place +
         " (a state update of the graph); else " + out("return the new value from the graph");
}

// Inside a graph run as plain code (--check-graph's eager run, or memory the
// graph writes shared with an argument), the graphs it calls run so too, as
// under --eager: a result of theirs carries autodiff's history.
bool Interpreter::graph_mode_on() const { return !opts_.eager_graphs && !in_eager_graph_ && !ir::Tracer::active(); }

bool CompiledGraph::fits_mode() const {
  return autocast == backend::autocast_dtype() && grad_mode == backend::grad_enabled();
}

CompiledGraph& Interpreter::add_entry(GraphCache& cache, Signature sig, Span span, const std::string& why) {
  bool full = cache.entries.size() >= GraphCache::kCapacity;
  // A graph whose captured values keep changing traces on every call:
  // said once even without --explain, as a full cache is.
  bool churn = !why.empty() && ++cache.guard_retraces == GraphCache::kCapacity;
  if ((!cache.entries.empty() || !why.empty()) && (full || churn || explain_retrace_)) {
    std::string where = span.valid() ? sources_.location(span) : "a call from the host";
    std::string note = "note: " + std::string(cache.name.starts_with("graph block") ? "" : "graph ") + cache.name +
                       " retraced at " + where + ": " +
                       (why.empty() ? why_retraced(cache, sig) : why);
    if (churn)
      note += " (the " + std::to_string(GraphCache::kCapacity) +
              "th time a value it captured changed: pass what changes from call to call as an argument)";
    if (full) note += " (its " + std::to_string(GraphCache::kCapacity) + " cached signatures are full: the least recently used goes)";
    log() << note << "\n";
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

void Interpreter::compile(CompiledGraph& cg, ir::Graph traced) {
  ir::CompileOptions o;
  o.verify = verify_graphs_;
  o.disabled_passes = opts_.disabled_passes;
  o.schedule = opts_.schedule;
  o.memory = opts_.memory;
  if (!opts_.dump_passes_dir.empty()) o.dump = dump_passes(traced.name);
  static_cast<ir::CompiledGraph&>(cg) = ir::compile(std::move(traced), o);
  if (opts_.on_compiled) opts_.on_compiled(cg);
}

std::vector<backend::Tensor> Interpreter::run_compiled(CompiledGraph& cg, std::span<const backend::Tensor> inputs,
                                                       Span span) {
  // A state the run writes was written at the call (autodiff's diagnostic
  // of a tensor changed after an op used it names that line, not the last
  // built-in called before).
  note_op_loc(span);
  // Ranks about to do other things (another graph, an eager call, the end
  // of the script) would mix their messages or wait for ever: one check a run.
  try {
    if (!cg.collective_run.empty()) backend::check_graph_run(cg.collective_run);
  } catch (const backend::Error& e) {
    fail(span, e.what());
  }
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
  for (backend::Tensor& t : outs)
    if (!t.impl()->requires_grad) t.impl()->graph_result = true;
  cg.peak_bytes = pool.stats().window_peak - before;
  pool.end_window(enclosing);
  ++cg.runs;
  return outs;
}

// nn ir --dump-passes DIR: the IR before the passes and after each, in
// numbered files (00-traced.ir, 01-constant-fold.ir, ...).
std::function<void(const std::string&, const ir::Graph&)> Interpreter::dump_passes(const std::string& graph) {
  std::filesystem::path dir = opts_.dump_passes_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto k = std::make_shared<int>(0);
  return [dir, graph, k](const std::string& what, const ir::Graph& g) {
    std::filesystem::path file = dir / fmt::format("{}.{:02d}-{}.ir", graph, (*k)++, what);
    std::ofstream out(file);
    out << ir::print_ir(g);
    if (!out) throw backend::Error("cannot write `" + file.string() + "`");
  };
}

void Interpreter::start_trace(ir::Tracer& tr) {
  tr.graph().locate = [this](const ir::Loc& l) { return sources_.location(Span{l.file, l.begin, l.end}); };
  tr.start();
}

// Traces `body` into a new entry of `cache` and compiles it. An entry whose
// signature is known before the trace (a call's arguments) is added first,
// so that a retrace note comes before anything the trace prints, and taken
// out again when the trace fails; else the signature is the graph's inputs
// and the entry is added after the trace.
HostReadRecording::HostReadRecording(Interpreter& v, HostReads& reads, Env* outside)
    : vm(v), saved_reads(v.host_reads_), saved_outside(v.host_reads_outside_) {
  vm.host_reads_ = &reads;
  vm.host_reads_outside_ = outside;
}

HostReadRecording::~HostReadRecording() {
  vm.host_reads_ = saved_reads;
  vm.host_reads_outside_ = saved_outside;
}

GraphCodeRun::GraphCodeRun(Interpreter& v) : vm(v), saved_runs(t_graph_code_runs), lent_before(v.lent_histories_.size()) {
  t_graph_code_runs = true;
}

GraphCodeRun::~GraphCodeRun() {
  t_graph_code_runs = saved_runs;
  auto& lent = vm.lent_histories_;
  for (size_t i = lent.size(); i-- > lent_before;) {  // last lent first: a tensor lent twice ends as it began
    backend::TensorImpl& t = *lent[i].tensor.impl();
    t.requires_grad = lent[i].requires_grad;
    t.graph_result = lent[i].graph_result;
    t.grad_result = lent[i].grad_result;
    t.output_index = lent[i].output_index;
    t.grad_fn = std::move(lent[i].grad_fn);
  }
  lent.resize(lent_before);
}

EagerGraphRun::EagerGraphRun(Interpreter& v, Env* outside)
    : vm(v), saved_in(v.in_eager_graph_), saved_outside(v.host_reads_outside_), code(v) {
  vm.in_eager_graph_ = true;
  vm.host_reads_outside_ = outside;
}

EagerGraphRun::~EagerGraphRun() {
  vm.in_eager_graph_ = saved_in;
  vm.host_reads_outside_ = saved_outside;
}

// Whether `name`, seen from `env` while tracing, lives in the scope the
// graph was defined in or one around it (not in the graph's own code, nor
// among the built-ins).
bool Interpreter::outside_the_graph(const Env& env, Symbol name) const {
  const Env* holder = &env;
  while (holder && !const_cast<Env*>(holder)->find_local(name)) holder = holder->parent.get();
  if (!holder || holder == prelude_.get()) return false;
  for (const Env* e = host_reads_outside_; e && e != prelude_.get(); e = e->parent.get())
    if (e == holder) return true;
  return false;
}

// A name read while tracing is guarded when it lives outside the graph: in
// the scopes around its definition, looked up as the graph sees them on each
// call, or in another scope made before the trace (a module's variable read
// through one of its functions), checked there.
void Interpreter::note_host_read(const EnvPtr& env, Symbol name, const Value& v) {
  // A tensor from outside is guarded by identity: the capture guards see
  // only those the graph computes with, not one it read only as a host
  // value or for its shape (`item(k)`, `len(t)`).
  if (v.is_tensor() && !block_input(v.as_tensor()).empty()) return;
  if (outside_the_graph(*env, name)) return host_reads_->note_name(name, v);
  const EnvPtr* holder = &env;
  while (*holder && !(*holder)->find_local(name)) holder = &(*holder)->parent;
  if (*holder && *holder != prelude_ && !(*holder)->made_in_trace) host_reads_->note_held(*holder, name, v);
}

void Interpreter::note_value_read(const backend::Tensor& t) {
  if (!host_reads_ || t.is_traced()) return;
  // Written by this trace, the tensor holds a value the graph computes: the
  // host memory still holds the old one.
  if (const ir::Tracer* tr = ir::Tracer::active(); tr && tr->wrote_into(t))
    throw backend::Error("a tensor's value is read here (" + t.type().str() +
                         "), but the graph wrote into it, so its value is not known while the graph is traced; "
                         "read it outside the graph, or use it as a tensor");
  // A graph block's variable is bound anew on every run: its value is
  // guarded by name, whatever tensor the name holds then.
  if (const std::string name = block_input(t); !name.empty()) return host_reads_->note_name_value(intern(name), t);
  host_reads_->note_value(t);
}

void Interpreter::refuse_closure_made_in_trace(const Value& v, const std::string& what, Span span) const {
  if (holds_closure_made_in_trace(v)) fail(span, what + " a function defined inside the graph" + kSharedClosure);
}

// Whether a host write of v inside a trace is replayed on every run: not
// one holding a tensor the trace made (a state update of the graph, or a
// diagnostic).
static bool replayed(const Value& v) {
  bool traced = false;
  for_each_tensor(v, Reach::sequences_and_records, [&](const backend::Tensor& t) { traced |= t.is_traced(); });
  return ir::Tracer::active() && !traced && !v.is_iterator();
}

// v with its lists, tuples and records made anew (its tensors the same), as
// the code that made v makes them on every call when run eagerly.
static Value made_anew(const Value& v) {
  return map_tensors(v, {}, Reach::sequences_and_records, [](const backend::Tensor& t, const ValuePath&) { return t; });
}

void Interpreter::replay_field_write(const RecordPtr& r, Symbol field, const Value& v) {
  if (!replayed(v)) return;
  ir::Tracer::active()->add_host_call("set " + symbol_name(field), {},
                                      [r, field, v](std::span<const backend::Tensor>) { r->set(field, made_anew(v)); });
}

void Interpreter::replay_name_write(const EnvPtr& env, Symbol name, const Value& v, Span span) {
  const EnvPtr* holder = &env;
  while (*holder && !(*holder)->find_local(name)) holder = &(*holder)->parent;
  if (!*holder || (*holder)->made_in_trace) return;
  refuse_closure_made_in_trace(v, "`" + symbol_name(name) + "`, outside the graph, is given", span);
  if (!replayed(v)) return;
  // Not kept alive: once the scope is gone, nothing reads the name.
  std::weak_ptr<Env> scope = *holder;
  ir::Tracer::active()->add_host_call("set " + symbol_name(name), {}, [scope, name, v](std::span<const backend::Tensor>) {
    if (const EnvPtr e = scope.lock())
      if (Value* slot = e->find_local(name)) *slot = made_anew(v);
  });
}

void Interpreter::note_whole_read(const Value& v) {
  if (!host_reads_) return;
  auto value_read = [&](const backend::Tensor& t, const ValuePath&) {
    note_value_read(t);
    return Walk::go_on;
  };
  auto fields_read = [&](const Value& x, const ValuePath&) {
    if (x.is_record()) host_reads_->note_fields(x.as_record());
  };
  std::unordered_set<const void*> opened;  // containers holding themselves are walked once
  for_each_tensor(v, "", Reach::sequences_and_records, {value_read, fields_read}, &opened);
}

std::string Interpreter::block_input(const backend::Tensor& t) const {
  const ir::Tracer* tr = ir::Tracer::active();
  return tr && tr->input_name ? tr->input_name(t) : std::string();
}

// A fed field (an optimizer's `lr`) is read anew on every run of the graph;
// an assignment to it inside the graph runs only while the graph is traced,
// so every later run would read what the last trace left there (a schedule
// stepped inside the graph replayed stale rates). Refused, after the body
// traced (in either order, and at the assignment, not inside the stdlib's
// optimizer that read the field).
void Interpreter::refuse_fed_fields_written(const HostReads& reads) const {
  for (const TracedFieldWrite& w : traced_field_writes_) {
    if (!reads.feeds(w.record, w.field)) continue;
    const std::string name = "`" + symbol_name(w.field) + "`";
    fail(w.span, "this graph reads " + name + " anew on every run (a learning rate), but an assignment to " + name +
                     " inside the graph runs only when it is traced, so later runs would use a stale value; assign " +
                     name + " before calling the graph");
  }
}

CompiledGraph& Interpreter::trace_and_compile(GraphCache& cache, std::optional<Signature> sig, Span span,
                                              const GuardScope& scope,
                                              const std::function<TracedBody(ir::Tracer&)>& body,
                                              const std::string& why) {
  CompiledGraph* cg = sig ? &add_entry(cache, std::move(*sig), span, why) : nullptr;
  auto t0 = std::chrono::steady_clock::now();
  ir::Tracer tr(cache.name);
  start_trace(tr);
  TracedBody traced;
  traced_stores_.clear();
  traced_field_writes_.clear();
  // The host values the body reads from outside become constants of the
  // graph: noted, to be checked on every call.
  HostReads reads;
  HostReadRecording recording(*this, reads, scope.env);
  backend::CollectiveRecording collectives;
  try {
    try {
      GraphCodeRun code(*this);
      traced = body(tr);
      refuse_closure_made_in_trace(traced.result, "graph `" + cache.name + "` returns", span);
      refuse_fed_fields_written(reads);
      check_escapes(tr, scope.env, traced.assigns, span);
    } catch (const backend::Error& e) {  // a walk over a value nested too deeply (ops' errors are located)
      fail(span, e.what());
    }
  } catch (...) {
    traced_stores_.clear();
    traced_field_writes_.clear();
    if (cg) cache.entries.pop_back();  // no half-made graph in the cache
    throw;
  }
  traced_stores_.clear();
  traced_field_writes_.clear();
  ir::Graph g = tr.finish(traced.outputs);
  if (!cg) {
    Signature made;
    for (ir::ValueId v : g.inputs) made.push_back({g.name_of(v), true, g.values[v].type, {}});
    cg = &add_entry(cache, std::move(made), span, why);
  }
  cg->autocast = backend::autocast_dtype();
  cg->grad_mode = backend::grad_enabled();
  cg->guards = CaptureGuards::build(g, scope);
  cg->host_reads = std::move(reads);
  cg->result = std::move(traced.result);
  cg->assigns = std::move(traced.assigns);
  cg->collective_run = collectives.run_of((cache.name.starts_with("graph block") ? "" : "graph ") + cache.name);
  cg->trace_ms = ms_since(t0);
  compile(*cg, std::move(g));
  cg->note_writes();
  return *cg;
}

void CompiledGraph::note_writes() {
  std::unordered_map<ir::ValueId, size_t> input_at;
  for (size_t i = 0; i < graph.inputs.size(); ++i) input_at.emplace(graph.inputs[i], i);
  input_written.assign(graph.inputs.size(), false);
  for (const ir::StateUpdate& u : graph.updates) {
    if (auto it = input_at.find(u.state); it != input_at.end()) input_written[it->second] = true;
    else if (const backend::Tensor& t = graph.values[u.state].captured; t.defined())
      written_captured_blocks.insert(t.block().get());
  }
  std::unordered_set<const backend::TensorImpl*> captured;
  for (const ir::Value& v : graph.values)
    if (v.captured.defined()) {
      captured_blocks.insert(v.captured.block().get());
      captured.insert(v.captured.impl());
    }
  host_reads.forget_captured(captured);
}

namespace {
// Where a call's arguments share memory with what its graph writes (`f(w)`
// of a graph that updates the captured w, `f(a, a)` of one that writes its
// first argument): the trace took them for distinct tensors, so a write, or
// a read after it, would be lost. The argument's name; "" when none does.
std::string memory_shared_with_writes(const CompiledGraph& cg, std::span<const backend::Tensor> inputs) {
  if (cg.graph.updates.empty()) return "";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const void* b = inputs[i].block().get();
    bool shared = cg.written_captured_blocks.contains(b);
    if (cg.input_written[i]) {
      shared = shared || cg.captured_blocks.contains(b);
      for (size_t j = 0; j < inputs.size() && !shared; ++j) shared = j != i && inputs[j].block().get() == b;
    }
    if (shared) return cg.graph.name_of(cg.graph.inputs[i]);
  }
  return "";
}
}  // namespace

// The cache's entry for this call: the latest that `fits` (its signature
// and mode) and whose captured tensors and host values still hold, moved
// last and fed the host numbers of the run about to start; null when none
// does, with `why` the reason the latest that fits failed (for the retrace
// note). An entry whose captured tensors were rebound is dropped: it would
// keep the old ones alive. One whose host values changed is kept for when
// they come back (a model's `training`, which train() and eval() switch
// around every epoch, traced again on every switch).
CompiledGraph* Interpreter::holding_entry(GraphCache& cache, const GuardScope& scope,
                                          const std::function<bool(const CompiledGraph&)>& fits, std::string& why) {
  why.clear();
  for (size_t i = cache.entries.size(); i-- > 0;) {
    CompiledGraph& e = *cache.entries[i];
    if (!e.fits_mode() || !fits(e)) continue;
    const bool guards = e.guards.hold(scope);
    if (guards && e.host_reads.hold(scope.env)) {
      std::rotate(cache.entries.begin() + std::ptrdiff_t(i), cache.entries.begin() + std::ptrdiff_t(i) + 1,
                  cache.entries.end());
      e.host_reads.feed();
      return &e;
    }
    if (why.empty()) why = guards ? e.host_reads.why_not(scope.env) : e.guards.why_not(scope);
    if (!guards) cache.entries.erase(cache.entries.begin() + std::ptrdiff_t(i));
  }
  return nullptr;
}

Value Interpreter::call_graph(const Function& f, std::vector<Value>& args, Span call_span) {
  const FunctionDef& def = *f.def;
  if (!f.graph_cache) f.graph_cache = new_graph_cache(def.name.empty() ? "<lambda>" : def.name);
  GraphCache& cache = *f.graph_cache;
  Signature sig;
  std::vector<backend::Tensor> inputs;
  std::vector<Value> by_address;
  try {
    for (size_t i = 0; i < args.size(); ++i) flatten(args[i], def.params[i].name, sig, inputs, by_address);
  } catch (const backend::Error& e) {  // an argument nested too deeply
    fail(call_span, e.what());
  }

  GuardScope scope{{}, args, f.env.get(), prelude_.get()};
  std::string stale;
  CompiledGraph* cg = holding_entry(cache, scope, [&](const CompiledGraph& e) { return e.signature == sig; }, stale);
  std::vector<std::string> arg_names;
  if (!cg) {
    for (const auto& p : def.params) arg_names.push_back(p.name);
    scope.arg_names = arg_names;
    cg = &trace_and_compile(cache, std::move(sig), call_span, scope, [&](ir::Tracer& tr) {
      TracedBody traced;
      auto env = new_scope(f.env);
      ScopeEnd end(env);
      for (size_t i = 0; i < args.size(); ++i) {
        const std::string& name = def.params[i].name;
        env->define(intern(name), map_tensors(args[i], name, Reach::sequences,
                                              [&](const backend::Tensor& t, const ValuePath& path) {
                                                return passed_param(t) ? t : tr.add_input(t.type(), path.str());
                                              }));
      }
      exec_stmts(def.body->stmts, env, &traced.result);
      traced.outputs = result_tensors(traced.result);
      return traced;
    }, stale);
    cg->held_args = std::move(by_address);
  }
  // The body as eager code, as --eager runs it.
  auto run_eagerly = [&] {
    EagerGraphRun eager(*this, f.env.get());
    auto env = std::make_shared<Env>(f.env);
    ScopeEnd end(env);
    for (size_t i = 0; i < args.size(); ++i) env->define(intern(def.params[i].name), args[i]);
    Value r;
    exec_stmts(def.body->stmts, env, &r);
    return r;
  };
  if (const std::string shared = memory_shared_with_writes(*cg, inputs); !shared.empty()) {
    if (explain_retrace_)
      log() << "note: graph " << cache.name << " ran as eager code at " << sources_.location(call_span) << ": `"
            << shared << "` shares memory with a tensor the graph writes\n";
    return as_graph_results(run_eagerly());
  }
  std::vector<backend::Tensor> outs;
  if (opts_.check_graphs) {
    outs = check_against_eager(*cg, inputs, [&] { return result_tensors(run_eagerly()); }, call_span);
  } else {
    outs = run_compiled(*cg, inputs, call_span);
  }
  return with_outputs(cg->result, outs);
}

// The variables a block sees (only those holding tensors with
// `tensors_only`), innermost first, each name once.
static std::vector<std::pair<Symbol, Value*>> visible_variables(Env* env, const Env* stop, bool tensors_only = true) {
  std::vector<std::pair<Symbol, Value*>> out;
  std::unordered_map<Symbol, bool> seen;
  for (Env* e = env; e && e != stop; e = e->parent.get())
    for (size_t i = 0; i < e->names.size(); ++i)
      if (seen.emplace(e->names[i], true).second && (!tensors_only || e->values[i].is_tensor()))
        out.emplace_back(e->names[i], &e->values[i]);
  return out;
}

namespace {
// Puts back what a graph block's variables held before its trace, failed or
// not (they get the run's outputs after): each tensor variable, and each
// other one the trace left a traced tensor in (`loss = f(x)` where `loss`
// held none), which --check-graph's eager run would read otherwise.
struct RestoreVariables {
  std::vector<std::pair<Value*, Value>> tensors, others;
  ~RestoreVariables() {
    for (auto& [v, old] : tensors) *v = std::move(old);
    for (auto& [v, old] : others)
      if (v->is_tensor() && v->as_tensor().is_traced()) *v = std::move(old);
  }
};
}  // namespace

// A graph block: its inputs are the tensor variables it reads from the
// scopes around it, its outputs the variables it assigns there.
Interpreter::Flow Interpreter::exec_graph_block(const GraphBlockStmt& s, const EnvPtr& env) {
  if (!graph_mode_on()) {
    // --eager: plain code that writes captured tensors in place where the
    // graph would (state_update), as a graph function's does.
    if (!opts_.eager_graphs || ir::Tracer::active() || in_eager_graph_) return exec_block(*s.body, env, nullptr);
    // Its outputs, the tensors it binds to variables anew, carry no history
    // after it, as a graph's results (`loss = f(w)` kept no history in the
    // graph, but grew one across a loop under --eager).
    std::unordered_map<const Value*, const void*> held;
    for (auto& [sym, v] : visible_variables(env.get(), prelude_.get(), /*tensors_only=*/false))
      held.emplace(v, v->is_tensor() ? v->as_tensor().impl() : nullptr);
    Flow flow = Flow::Normal;
    {
      EagerGraphRun eager(*this, env.get());
      flow = exec_block(*s.body, env, nullptr);
    }
    for (auto& [sym, v] : visible_variables(env.get(), prelude_.get()))
      if (auto it = held.find(v); it == held.end() || it->second != v->as_tensor().impl()) *v = as_graph_results(*v);
    return flow;
  }
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
    // A variable the entry binds anew (it held no tensor when traced) that
    // holds one now is written in place by the same code run eagerly (a
    // state update, docs/graph-mode.md): traced again, it is one here too.
    for (Symbol sym : cg.assigns)
      if (const Value* v = env->find(sym); v && v->is_tensor()) return false;
    return true;
  };
  std::vector<backend::Tensor> inputs;  // bound for the entry found (the last bind)
  const GuardScope scope{{}, {}, env.get(), prelude_.get()};
  std::string stale;
  CompiledGraph* cg = holding_entry(cache, scope, [&](const CompiledGraph& e) { return bind(e, inputs); }, stale);
  if (!cg) {
    std::unordered_map<const backend::TensorImpl*, std::string> names;
    std::unordered_map<std::string, backend::Tensor> before;
    RestoreVariables restore;
    for (auto& [sym, v] : visible_variables(env.get(), prelude_.get(), /*tensors_only=*/false)) {
      if (!v->is_tensor()) {
        restore.others.emplace_back(v, *v);
        continue;
      }
      names.emplace(v->as_tensor().impl(), symbol_name(sym));
      before.emplace(symbol_name(sym), v->as_tensor());
      restore.tensors.emplace_back(v, *v);
    }
    cg = &trace_and_compile(cache, std::nullopt, s.span, scope, [&](ir::Tracer& tr) {
      tr.input_name = [&](const backend::Tensor& t) {
        auto it = names.find(t.impl());
        return it == names.end() ? std::string() : it->second;
      };
      TracedBody traced;
      exec_block(*s.body, env, nullptr);
      for (auto& [sym, v] : visible_variables(env.get(), prelude_.get()))
        if (tr.is_traced(v->as_tensor())) {
          traced.outputs.push_back(v->as_tensor());
          traced.assigns.push_back(sym);
        }
      return traced;
    }, stale);
    inputs.clear();
    for (const SignatureItem& item : cg->signature) inputs.push_back(before.at(item.name));
  }
  if (const std::string shared = memory_shared_with_writes(*cg, inputs); !shared.empty()) {
    if (explain_retrace_)
      log() << "note: " << cache.name << " ran as eager code at " << sources_.location(s.span) << ": `" << shared
            << "` shares memory with a tensor the graph writes\n";
    EagerGraphRun eager(*this, env.get());
    exec_block(*s.body, env, nullptr);
    return Flow::Normal;
  }
  std::vector<backend::Tensor> outs;
  if (opts_.check_graphs) {
    outs = check_against_eager(*cg, inputs, [&] {
      EagerGraphRun eager(*this, env.get());
      exec_block(*s.body, env, nullptr);
      std::vector<backend::Tensor> ts;
      for (Symbol sym : cg->assigns) ts.push_back(env->find(sym)->as_tensor());
      return ts;
    }, s.span);
  } else {
    outs = run_compiled(*cg, inputs, s.span);
  }
  for (size_t i = 0; i < outs.size(); ++i) *env->find(cg->assigns[i]) = Value(outs[i]);
  return Flow::Normal;
}

}  // namespace nn::frontend
