// Calls: binding arguments to parameters (positional, keyword, defaults),
// closures, built-ins and bound methods, the call stack in diagnostics, and
// the guards against runaway recursion.
#include <cstdlib>

#include "backend/error.h"
#include "backend/ops.h"
#include "frontend/host_data.h"
#include "frontend/interpreter.h"

namespace nn::frontend {
namespace {
// Python allows 1000; nn code recursing deeper than this is almost surely runaway.
constexpr int kMaxCallDepth = 4000;
constexpr size_t kMaxTraceNotes = 8;

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

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
    if (!f.sym) f.sym = intern(f.name);
    callee = field_of(eval(*f.target, env), f.sym, f.name_span, env, true);
  } else {
    callee = eval(*e.callee, env);
  }
  std::vector<Value> positional;
  std::vector<std::pair<Symbol, Value>> keywords;
  std::vector<Span> spans;
  positional.reserve(e.args.size());
  spans.reserve(e.args.size());
  for (auto& a : e.args) {
    if (a.keyword.empty()) {
      positional.push_back(eval(*a.value, env));
      spans.push_back(a.value->span);
    }
  }
  for (auto& a : e.args) {
    if (!a.keyword.empty()) {
      keywords.emplace_back(intern(a.keyword), eval(*a.value, env));
      spans.push_back(a.value->span);
    }
  }
  return call_value(callee, positional, keywords, e.span, &spans);
}

Value Interpreter::call(const Value& callee, std::vector<Value> positional,
                        std::vector<std::pair<Symbol, Value>> keywords, Span call_span) {
  return call_value(callee, positional, keywords, call_span, nullptr);
}

Value Interpreter::call_value(const Value& callee, std::vector<Value>& positional,
                              std::vector<std::pair<Symbol, Value>>& keywords, Span call_span,
                              const std::vector<Span>* arg_spans) {
  if (callee.is_record()) {
    // A record with a `call` field is callable (layers, SPEC §8).
    static const Symbol call_sym = intern("call");
    if (const Value* f = callee.as_record()->find(call_sym); f && f->is_function()) {
      positional.insert(positional.begin(), callee);
      return call_value(*f, positional, keywords, call_span, nullptr);
    }
  }
  if (!callee.is_function()) fail(call_span, a_type_name(callee) + " is not a function and cannot be called");
  const Function& f = *callee.as_function();
  switch (f.kind) {
    case Function::Kind::Closure: return call_closure(f, positional, keywords, call_span);
    case Function::Kind::Builtin: return call_builtin(*f.builtin, positional, keywords, call_span, arg_spans);
    case Function::Kind::Bound: {
      positional.insert(positional.begin(), f.self);
      std::vector<Span> spans;
      if (arg_spans) {
        spans.push_back(call_span);
        spans.insert(spans.end(), arg_spans->begin(), arg_spans->end());
      }
      return call_value(Value(f.target), positional, keywords, call_span, arg_spans ? &spans : nullptr);
    }
  }
  fail(call_span, "internal: unknown function kind");
}

Value Interpreter::call_closure(const Function& f, std::vector<Value>& positional,
                                std::vector<std::pair<Symbol, Value>>& keywords, Span call_span) {
  const FunctionDef& def = *f.def;
  std::string fname = def.name.empty() ? "function" : "`" + def.name + "`";
  CallGuard guard(*this, call_span);
  auto env = std::make_shared<Env>(f.env);
  const auto& params = def.params;
  bool has_rest = !params.empty() && params.back().is_rest;
  size_t fixed = params.size() - (has_rest ? 1 : 0);
  if (positional.size() > fixed && !has_rest)
    fail(call_span, fname + " takes " + plural(params.size(), "argument") + " but " +
                        std::to_string(positional.size()) + " were given");
  std::vector<bool> given(params.size(), false);
  std::vector<Value> values(params.size());
  for (size_t i = 0; i < positional.size() && i < fixed; ++i) {
    values[i] = std::move(positional[i]);
    given[i] = true;
  }
  if (has_rest) {
    std::vector<Value> rest;
    for (size_t i = fixed; i < positional.size(); ++i) rest.push_back(std::move(positional[i]));
    values[fixed] = Value(make_list(std::move(rest)));
    given[fixed] = true;
  }
  for (auto& [k, v] : keywords) {
    size_t i = 0;
    while (i < params.size() && intern(params[i].name) != k) ++i;
    if (i == params.size()) {
      std::vector<std::string> names;
      for (auto& p : params) names.push_back(p.name);
      Diagnostic d{"unknown keyword argument `" + symbol_name(k) + "` for " + fname, call_span, {}};
      std::string hint = closest_name(symbol_name(k), names);
      if (!hint.empty()) d.notes.push_back("help: did you mean `" + hint + "`?");
      throw ScriptError(std::move(d));
    }
    if (params[i].is_rest) fail(call_span, "the rest parameter `*" + params[i].name + "` of " + fname + " cannot be given by keyword");
    if (given[i]) fail(call_span, "argument `" + params[i].name + "` of " + fname + " is given twice");
    values[i] = std::move(v);
    given[i] = true;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!given[i]) {
      if (!params[i].default_value)
        fail(call_span, fname + " is missing its argument `" + params[i].name + "`");
      values[i] = eval(*params[i].default_value, f.env);
    }
  }
  Value result;
  try {
    if (def.is_graph && graph_mode_on()) {
      result = call_graph(f, values, call_span);
    } else {
      for (size_t i = 0; i < params.size(); ++i) env->define(intern(params[i].name), std::move(values[i]));
      TraceScope scope(def.name.empty() ? "<lambda>" : def.name, call_span);
      exec_stmts(def.body->stmts, env, &result);
    }
  } catch (ScriptError& e) {
    add_frame_note(e, (def.is_graph ? "graph " : "fn ") + (def.name.empty() ? std::string("<lambda>") : def.name),
                   sources_.location(call_span));
    throw;
  }
  return result;
}

Value Interpreter::call_builtin(const Builtin& b, std::vector<Value>& positional,
                                std::vector<std::pair<Symbol, Value>>& keywords, Span call_span,
                                const std::vector<Span>* arg_spans) {
  Args args(*this, call_span);
  size_t n = b.params.size();
  args.values_.resize(n);
  args.given_.assign(n, false);
  args.spans_.assign(n, Span{});
  if (positional.size() > n && !b.variadic)
    fail(call_span, b.name + " takes at most " + plural(n, "argument") + " but " +
                        std::to_string(positional.size()) + " were given");
  for (size_t i = 0; i < positional.size(); ++i) {
    if (i < n) {
      args.values_[i] = std::move(positional[i]);
      args.given_[i] = true;
      if (arg_spans && i < arg_spans->size()) args.spans_[i] = (*arg_spans)[i];
    } else {
      args.rest_.push_back(std::move(positional[i]));
    }
  }
  for (size_t j = 0; j < keywords.size(); ++j) {
    auto& [k, v] = keywords[j];
    size_t i = 0;
    while (i < n && b.params[i].sym != k) ++i;
    if (i == n) {
      std::vector<std::string> names;
      for (auto& p : b.params) names.push_back(p.name);
      Diagnostic d{"unknown keyword argument `" + symbol_name(k) + "` for " + b.name, call_span, {}};
      std::string hint = closest_name(symbol_name(k), names);
      if (!hint.empty()) d.notes.push_back("help: did you mean `" + hint + "`?");
      throw ScriptError(std::move(d));
    }
    if (args.given_[i]) fail(call_span, "argument `" + b.params[i].name + "` of " + b.name + " is given twice");
    args.values_[i] = std::move(v);
    args.given_[i] = true;
    size_t span_index = positional.size() + j;
    if (arg_spans && span_index < arg_spans->size()) args.spans_[i] = (*arg_spans)[span_index];
  }
  for (size_t i = 0; i < n; ++i) {
    if (args.given_[i]) continue;
    if (!b.params[i].default_value) fail(call_span, b.name + " is missing its argument `" + b.params[i].name + "`");
    args.values_[i] = *b.params[i].default_value;
  }
  trace_loc(call_span);
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

backend::Tensor Args::tensor(size_t i) const { return vm_.to_tensor(values_[i], span(i)); }

int64_t Args::integer(size_t i) const {
  const Value& v = values_[i];
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool();
  if (v.is_tensor() && is_integral(v.as_tensor().dtype()) && v.as_tensor().numel() == 1) return v.as_tensor().item_int();
  fail(i, "expected an int, got " + a_type_name(v));
}

double Args::number(size_t i) const {
  const Value& v = values_[i];
  if (v.is_number()) return v.as_number();
  if (v.is_tensor() && v.as_tensor().numel() == 1) return v.as_tensor().item_double();
  fail(i, "expected a number, got " + a_type_name(v));
}

bool Args::boolean(size_t i) const {
  const Value& v = values_[i];
  if (v.is_bool()) return v.as_bool();
  if (v.is_tensor() && v.as_tensor().numel() == 1 && v.as_tensor().dtype() == backend::DType::boolean)
    return v.as_tensor().item_bool();
  fail(i, "expected true or false, got " + a_type_name(v));
}

const std::string& Args::str(size_t i) const {
  if (!values_[i].is_str()) fail(i, "expected a string, got " + a_type_name(values_[i]));
  return values_[i].as_str();
}

backend::DType Args::dtype(size_t i) const {
  const Value& v = values_[i];
  if (v.is_dtype()) return v.as_dtype();
  if (v.is_str()) {
    backend::DType d;
    if (backend::parse_dtype(v.as_str(), d)) return d;
  }
  fail(i, "expected a dtype (f32, f64, i32, i64, bool), got " + a_type_name(v));
}

std::vector<int64_t> Args::int_list(size_t i) const {
  const Value& v = values_[i];
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
  if (values_[i].is_none()) return std::nullopt;
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
