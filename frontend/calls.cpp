// Calls: closures, built-ins and bound methods (their arguments bound by
// frontend/bind_args), the call stack in diagnostics, the guards against
// runaway recursion, and the conversions of built-ins' arguments.
#include <cstdlib>

#include "backend/autograd.h"
#include "backend/error.h"
#include "backend/ops.h"
#include "frontend/host_data.h"
#include "frontend/interpreter.h"
#include "frontend/tensor_walk.h"

namespace nn::frontend {
namespace {
// Python allows 1000; nn code recursing deeper than this is almost surely runaway.
constexpr int kMaxCallDepth = 4000;
constexpr size_t kMaxTraceNotes = 8;

// Adds "in fn f, called at a.nn:3:5" to an error passing through a call;
// the same frame repeated (recursion) becomes one note with a count.
void add_frame_note(ScriptError& e, const std::string& what, const std::string& where) {
  Diagnostic& d = e.first();
  std::string note = "in " + what + ", called at " + where;
  size_t frames = 0;
  for (auto& n : d.notes)
    if (n.rfind("in ", 0) == 0) ++frames;
  // The same frame is the note itself or the note with its count: a prefix
  // alone would take "at a.nn:1:1" for "at a.nn:1:12".
  const std::string counted = note + " (";
  std::string* last = d.notes.empty() ? nullptr : &d.notes.back();
  if (last && (*last == note || last->rfind(counted, 0) == 0)) {
    const size_t times = *last == note ? 1 : std::strtoul(last->c_str() + counted.size(), nullptr, 10);
    *last = counted + std::to_string(times + 1) + " times)";
  } else if (frames < kMaxTraceNotes) {
    d.notes.push_back(note);
  }
}

// `self` (a bound method's receiver, a callable record) goes first, written
// where the call is.
void prepend_self(CallArgs& call, Value self) {
  call.positional.insert(call.positional.begin(), std::move(self));
  if (!call.positional_spans.empty()) call.positional_spans.insert(call.positional_spans.begin(), call.call_span);
}

}  // namespace

std::string Function::name() const {
  switch (kind) {
    case Kind::Closure: return def && !def->name.empty() ? def->name : "";
    case Kind::Builtin: return builtin->name;
    case Kind::Bound: return target->name();
  }
  return "";
}

struct CallGuard {
  Interpreter& vm;
  CallGuard(Interpreter& v, Span span) : vm(v) { vm.enter_call(span); }
  ~CallGuard() { --vm.call_depth_; }
};

// Keeps backend::library_entry() right across a call: the script's call
// site when it calls into the stdlib, nothing while a script's function
// runs (one the stdlib calls back, say).
struct LibraryEntryScope {
  backend::SourceLoc saved = backend::library_entry();
  bool entering = false;  // a script's call into the stdlib
  LibraryEntryScope(bool callee_in_library, Span call_span) {
    if (!callee_in_library) backend::set_library_entry({});
    else if ((entering = !saved.valid())) backend::set_library_entry({call_span.file, call_span.begin, call_span.end});
  }
  ~LibraryEntryScope() { backend::set_library_entry(saved); }
};

void Interpreter::enter_call(Span span) {
  if (call_depth_ >= kMaxCallDepth)
    fail(span, "recursion too deep (more than " + std::to_string(kMaxCallDepth) + " nested calls)");
  check_stack(span);
  ++call_depth_;
}

Value Interpreter::eval_call(const CallExpr& e, const EnvPtr& env) {
  Value callee;
  if (e.callee->kind == ExprKind::Field) {
    auto& f = static_cast<const FieldExpr&>(*e.callee);
    callee = field_of(eval(*f.target, env), f.sym, f.name_span, env, true);
  } else {
    callee = eval(*e.callee, env);
  }
  CallArgs call;
  call.call_span = e.span;
  call.positional.reserve(e.args.size());
  call.positional_spans.reserve(e.args.size());
  const bool exact_literal = callee.is_function() && callee.as_function()->builtin &&
                             callee.as_function()->builtin->exact_literal;
  // Positional arguments come first (the AST builder checks the order).
  for (auto& a : e.args) {
    if (a.keyword.empty()) {
      const bool exact = exact_literal && call.positional.empty() && a.value->kind == ExprKind::List;
      call.positional.push_back(exact ? eval_list(static_cast<const ListExpr&>(*a.value), env, true)
                                      : eval(*a.value, env));
      call.positional_spans.push_back(a.value->span);
    } else {
      call.keywords.push_back(KeywordArg{intern(a.keyword), eval(*a.value, env), a.keyword_span, a.value->span});
    }
  }
  return call_value(callee, call);
}

Value Interpreter::call(const Value& callee, std::vector<Value> positional,
                        std::vector<std::pair<Symbol, Value>> keywords, Span call_span) {
  auto scope = run_scope();
  CallArgs call;
  call.positional = std::move(positional);
  call.keywords.reserve(keywords.size());
  for (auto& [name, value] : keywords) call.keywords.push_back(KeywordArg{name, std::move(value), {}, {}});
  call.call_span = call_span;
  if (runs_ > 0) {  // a built-in calling back: inside a run
    // Its C++ frame need not hold what it works on by counted references
    // (a host's function), so no collection until it returns.
    CollectBlock no_collection(*this);
    return call_value(callee, call);
  }
  // A host's call (nn::Interpreter::call): once it returns, nothing of the
  // evaluator holds a value, as after a top-level statement.
  RunDepth depth(runs_);
  Value result = call_value(callee, call);
  maybe_collect(64);
  return result;
}

Value Interpreter::call_value(const Value& callee, CallArgs& call) {
  if (callee.is_record()) {
    // A record with a `call` field is callable (layers, SPEC §8).
    static const Symbol call_sym = intern("call");
    if (const Value* f = callee.as_record()->find(call_sym); f && f->is_function()) {
      if (host_reads_) host_reads_->note_field(callee.as_record(), call_sym, *f);  // a trace inlined it
      prepend_self(call, callee);
      return call_value(*f, call);
    }
  }
  if (!callee.is_function()) fail(call.call_span, a_type_name(callee) + " is not a function and cannot be called");
  const Function& f = *callee.as_function();
  switch (f.kind) {
    case Function::Kind::Closure: return call_closure(f, call);
    case Function::Kind::Builtin:
      // A host's function may hold references to its own interpreter.
      if (f.owner != 0 && f.owner != id_) [[unlikely]] refuse_foreign(f, call.call_span);
      return call_builtin(*f.builtin, call);
    case Function::Kind::Bound: {
      prepend_self(call, f.self);
      return call_value(Value(f.target), call);
    }
  }
  fail(call.call_span, "internal: unknown function kind");
}

void Interpreter::refuse_foreign(const Function& f, Span span) const {
  std::string what = f.kind == Function::Kind::Builtin ? "host function `" + f.name() + "`"
                     : f.name().empty()                ? std::string("a lambda")
                                                       : "fn `" + f.name() + "`";
  std::string owner = "interpreter #" + std::to_string(f.owner);
  if (f.owner_alive.expired())
    fail(span, "cannot call " + what + ": it belongs to " + owner + ", which was destroyed");
  fail(span, "cannot call " + what + " in interpreter #" + std::to_string(id_) + ": it belongs to " + owner +
                 " (interpreters are independent: call a function through the interpreter that made it)");
}

Value Interpreter::call_closure(const Function& f, CallArgs& call) {
  if (f.owner != id_) [[unlikely]] refuse_foreign(f, call.call_span);
  const FunctionDef& def = *f.def;
  const Span call_span = call.call_span;
  CallGuard guard(*this, call_span);
  LibraryEntryScope entry(def.span.file == prelude_file_, call_span);
  const FunctionParameters& params = parameters_of(def);
  std::vector<Value> values = bind_args(params.view(), call, *this, f.env).values;
  Value result;
  // --eager runs a graph as plain code; the outermost one hands back its
  // results as a graph does.
  const bool outermost_eager_graph = def.is_graph && opts_.eager_graphs && !ir::Tracer::active() && !in_eager_graph_;
  try {
    if (def.is_graph && graph_mode_on()) {
      result = call_graph(f, values, call_span);
    } else {
      auto env = new_scope(f.env);
      ScopeEnd end(env);
      for (size_t i = 0; i < params.fixed.size(); ++i) env->define(params.fixed[i].sym, std::move(values[i]));
      if (params.rest_sym) env->define(params.rest_sym, std::move(values.back()));
      TraceScope scope(def.name.empty() ? "<lambda>" : def.name, call_span);
      std::optional<EagerGraphRun> eager;
      if (outermost_eager_graph) eager.emplace(*this, f.env.get());
      exec_stmts(def.body->stmts, env, &result);
    }
  } catch (ScriptError& e) {
    if (entry.entering && e.first().span.file == prelude_file_) point_at_script(e, def, call_span);
    else
      add_frame_note(e, (def.is_graph ? "graph " : "fn ") + (def.name.empty() ? std::string("<lambda>") : def.name),
                     sources_.location(call_span));
    throw;
  }
  // A graph's results carry no autodiff history (SPEC §17); --eager gives
  // them none either, so that it behaves as the graph does.
  if (outermost_eager_graph) result = as_graph_results(result);
  return result;
}

Value as_graph_results(const Value& result) {
  return map_tensors(result, "", Reach::sequences_and_records, [](const backend::Tensor& t, const ValuePath&) {
    if (t.impl()->requires_grad && !t.impl()->grad_fn) return t;  // a param handed back
    backend::Tensor d = backend::detach(t);
    d.impl()->graph_result = true;
    return d;
  });
}

// An error inside the stdlib, reached from a script's call: reported at
// the script's line, which the user can change, with the stdlib's function as a
// note (its frames inside the stdlib dropped: their lines change with
// the stdlib and mean little to the script).
void Interpreter::point_at_script(ScriptError& e, const FunctionDef& def, Span call_span) {
  Diagnostic& d = e.first();
  const SourceFile& lib = sources_.file(prelude_file_);
  std::erase_if(d.notes, [&](const std::string& n) { return n.find(lib.path()) != std::string::npos; });
  d.notes.push_back("inside the stdlib's fn " + (def.name.empty() ? std::string("<lambda>") : def.name));
  d.span = call_span;
}

Value Interpreter::call_builtin(const Builtin& b, CallArgs& call) {
  const Span call_span = call.call_span;
  Args args(*this, call_span, bind_args(b.parameters(), call, *this, nullptr), b.parameters());
  note_op_loc(call_span);
  try {
    return b.fn(args);
  } catch (const backend::OutOfMemory& e) {
    fail(call_span, e.what());
  } catch (const backend::Error& e) {
    fail(call_span, e.what());
  } catch (const std::bad_alloc&) {
    fail(call_span, b.name + ": out of memory on cpu");
  }
}

// ---------------------------------------------------------------- Args

void Args::fail(size_t i, const std::string& message) const { frontend::fail(span(i), message); }

std::string Args::which(size_t i) const {
  if (i >= params_.fixed.size()) return "";
  return " for `" + params_.fixed[i].name + "` of " + std::string(params_.callee);
}

backend::Tensor Args::tensor(size_t i) const { return vm_.to_tensor(bound_.values[i], span(i)); }

int64_t Args::integer(size_t i) const {
  const Value& v = bound_.values[i];
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool();
  if (v.is_tensor() && is_integral(v.as_tensor().dtype()) && v.as_tensor().numel() == 1) {
    vm_.note_value_read(v.as_tensor());
    return v.as_tensor().item_int();
  }
  fail(i, "expected an int" + which(i) + ", got " + a_type_name(v));
}

double Args::number(size_t i) const {
  const Value& v = bound_.values[i];
  if (v.is_number()) return v.as_number();
  if (v.is_tensor() && v.as_tensor().numel() == 1) {
    vm_.note_value_read(v.as_tensor());
    return v.as_tensor().item_double();
  }
  fail(i, "expected a number" + which(i) + ", got " + a_type_name(v));
}

bool Args::boolean(size_t i) const {
  const Value& v = bound_.values[i];
  if (v.is_bool()) return v.as_bool();
  if (v.is_tensor() && v.as_tensor().numel() == 1 && v.as_tensor().dtype() == backend::DType::boolean) {
    vm_.note_value_read(v.as_tensor());
    return v.as_tensor().item_bool();
  }
  fail(i, "expected true or false" + which(i) + ", got " + a_type_name(v));
}

const std::string& Args::str(size_t i) const {
  if (!bound_.values[i].is_str()) fail(i, "expected a string" + which(i) + ", got " + a_type_name(bound_.values[i]));
  return bound_.values[i].as_str();
}

backend::DType Args::dtype(size_t i) const {
  const Value& v = bound_.values[i];
  if (v.is_dtype()) return v.as_dtype();
  if (v.is_str()) {
    backend::DType d;
    if (backend::parse_dtype(v.as_str(), d)) return d;
  }
  fail(i, "expected a dtype (f32, f64, i32, i64, bool)" + which(i) + ", got " + a_type_name(v));
}

std::vector<int64_t> Args::int_list(size_t i) const {
  const Value& v = bound_.values[i];
  std::vector<int64_t> out;
  auto from_items = [&](const std::vector<Value>& items) {
    for (auto& it : items) {
      if (it.is_int()) out.push_back(it.as_int());
      else if (it.is_tensor() && is_integral(it.as_tensor().dtype()) && it.as_tensor().numel() == 1)
        out.push_back(it.as_tensor().item_int());
      else fail(i, "expected a list of ints, but it holds " + a_type_name(it));
    }
  };
  if (v.is_int()) out.push_back(v.as_int());
  else if (v.is_list()) from_items(v.as_list()->items);
  else if (v.is_tuple()) from_items(v.as_tuple()->items);
  else if (v.is_tensor() && is_integral(v.as_tensor().dtype()) && v.as_tensor().ndim() <= 1) {
    backend::Tensor t;
    {
      Untraced untraced;
      t = backend::astype(on_host(v.as_tensor()), backend::DType::i64);
    }
    const int64_t* p = t.data<int64_t>();
    out.assign(p, p + t.numel());
  } else fail(i, "expected a list of ints, got " + a_type_name(v));
  return out;
}

backend::Shape Args::shape(size_t i) const {
  std::vector<int64_t> dims = int_list(i);
  for (int64_t d : dims)
    if (d < 0) fail(i, "negative dimension " + std::to_string(d) + " in shape");
  if (dims.size() > size_t(backend::kMaxDims))
    fail(i, "tensors have at most " + std::to_string(backend::kMaxDims) + " dimensions");
  return backend::Shape::of(dims);
}

std::optional<std::vector<int64_t>> Args::axes(size_t i) const {
  if (bound_.values[i].is_none()) return std::nullopt;
  return int_list(i);
}

// ---------------------------------------------------------------- conversions

backend::Tensor Interpreter::to_tensor(const Value& v, Span span) {
  switch (v.kind()) {
    case Value::Kind::Tensor: return v.as_tensor();
    case Value::Kind::Int: return backend::scalar_int(v.as_int(), backend::DType::i64, true);
    case Value::Kind::Float: return backend::scalar(v.as_float(), backend::DType::f64, true);
    case Value::Kind::Bool: return backend::scalar_int(v.as_bool(), backend::DType::boolean, true);
    case Value::Kind::List:
    case Value::Kind::Tuple: {
      // A list of tensors/numbers (say from a loop) becomes one tensor by stacking.
      const auto& items = v.is_list() ? v.as_list()->items : v.as_tuple()->items;
      if (items.empty()) return backend::zeros(backend::Shape{0});
      std::vector<backend::Tensor> rows;
      bool any_float = false;
      for (auto& it : items) {
        if (it.is_float()) any_float = true;
        if (!it.is_number() && !it.is_tensor() && !it.is_list() && !it.is_tuple())
          fail(span, "cannot make a tensor from a list holding " + a_type_name(it));
      }
      for (auto& it : items) {
        backend::Tensor t = to_tensor(it, span);
        if (t.weak()) t = backend::astype(t, any_float ? backend::DType::f32
                                              : t.dtype() == backend::DType::boolean ? backend::DType::boolean
                                                                                     : backend::DType::i64);
        t.set_weak(false);
        rows.push_back(on_default_device(t));
      }
      for (auto& r : rows)
        if (r.shape() != rows[0].shape())
          fail(span, "ragged list: elements of shapes " + rows[0].shape().str() + " and " + r.shape().str());
      return backend::stack(rows, 0);
    }
    default: fail(span, "expected a tensor or a number, got " + a_type_name(v));
  }
}

}  // namespace nn::frontend
