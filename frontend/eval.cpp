// Evaluation of expressions: literals, names, containers, fields, indexing
// and lambdas. Operators are in operators.cpp, calls in calls.cpp.
#include <optional>

#include "backend/autograd.h"
#include "backend/error.h"
#include "backend/ops.h"
#include "backend/untraced.h"
#include "frontend/habits.h"
#include "frontend/host_data.h"
#include "frontend/index_items.h"
#include "frontend/interpreter.h"
#include "ir/tracer.h"

namespace nn::frontend {

Value Interpreter::eval(const Expr& e, const EnvPtr& env) {
  switch (e.kind) {
    case ExprKind::Int: return Value(static_cast<const IntLit&>(e).value);
    case ExprKind::Float: return Value(static_cast<const FloatLit&>(e).value);
    case ExprKind::Bool: return Value(static_cast<const BoolLit&>(e).value);
    case ExprKind::None: return Value();
    case ExprKind::Str: return Value(static_cast<const StrLit&>(e).value);
    case ExprKind::Name: return eval_name(static_cast<const NameExpr&>(e), env);
    case ExprKind::List: return eval_list(static_cast<const ListExpr&>(e), env);
    case ExprKind::Tuple: {
      auto& t = static_cast<const TupleExpr&>(e);
      std::vector<Value> items;
      items.reserve(t.items.size());
      for (auto& it : t.items) items.push_back(eval(*it, env));
      return Value(make_tuple(std::move(items)));
    }
    case ExprKind::Record: return eval_record(static_cast<const RecordExpr&>(e), env);
    case ExprKind::Unary: {
      auto& u = static_cast<const UnaryExpr&>(e);
      return negate(eval(*u.operand, env), e.span);
    }
    case ExprKind::Not: {
      auto& n = static_cast<const NotExpr&>(e);
      return Value(!truthy(eval(*n.operand, env), n.operand->span, "`not`"));
    }
    case ExprKind::Binary: {
      auto& b = static_cast<const BinaryExpr&>(e);
      // Number literals next to a tensor become cached weak tensors, not new ones per call.
      Value lhs = eval(*b.lhs, env);
      Value rhs = eval(*b.rhs, env);
      if (lhs.is_tensor() && (b.rhs->kind == ExprKind::Int || b.rhs->kind == ExprKind::Float))
        rhs = literal_tensor(*b.rhs);
      else if (rhs.is_tensor() && (b.lhs->kind == ExprKind::Int || b.lhs->kind == ExprKind::Float))
        lhs = literal_tensor(*b.lhs);
      return binary(b.op, lhs, rhs, b.span);
    }
    case ExprKind::Logical: {
      auto& l = static_cast<const LogicalExpr&>(e);
      Value lhs = eval(*l.lhs, env);
      bool t = truthy(lhs, l.lhs->span, l.is_and ? "`and`" : "`or`");
      if (l.is_and ? !t : t) return lhs;
      return eval(*l.rhs, env);
    }
    case ExprKind::Range: {
      auto& r = static_cast<const RangeExpr&>(e);
      Value lo = eval(*r.lo, env), hi = eval(*r.hi, env);
      if (!lo.is_int()) fail(r.lo->span, "a range bound must be an int, not " + a_type_name(lo));
      if (!hi.is_int()) fail(r.hi->span, "a range bound must be an int, not " + a_type_name(hi));
      return Value(RangeValue{lo.as_int(), hi.as_int()});
    }
    case ExprKind::Call: return eval_call(static_cast<const CallExpr&>(e), env);
    case ExprKind::Index: return eval_index(static_cast<const IndexExpr&>(e), env);
    case ExprKind::Field: return eval_field(static_cast<const FieldExpr&>(e), env);
    case ExprKind::Lambda: {
      return Value(make_closure(static_cast<const LambdaExpr&>(e).def, env));
    }
    case ExprKind::If: {
      auto& i = static_cast<const IfExpr&>(e);
      CollectBlock no_collection(*this);  // statements inside an expression: no safe point
      const Block& taken = truthy(eval(*i.cond, env), i.cond->span, "`if`") ? *i.then_block : *i.else_block;
      Value v;
      if (exec_block(taken, env, &v) != Flow::Normal)
        fail(taken.span, "`break`, `continue` and `return` cannot leave an `if` used as a value");
      return v;
    }
  }
  fail(e.span, "internal: unknown expression");
}

Value Interpreter::literal_tensor(const Expr& e) {
  // Made once for every interpreter that runs this tree, so no account pays.
  auto make = [](std::once_flag& made, backend::Tensor& t, auto&& f) {
    std::call_once(made, [&] {
      backend::UncountedScope uncounted;
      t = f();
    });
    return Value(t);
  };
  if (e.kind == ExprKind::Int) {
    auto& l = static_cast<const IntLit&>(e);
    return make(l.made, l.as_tensor, [&] { return backend::scalar_int(l.value, backend::DType::i64, true); });
  }
  auto& l = static_cast<const FloatLit&>(e);
  return make(l.made, l.as_tensor, [&] { return backend::scalar(l.value, backend::DType::f64, true); });
}

Value Interpreter::eval_name(const NameExpr& e, const EnvPtr& env) {
  if (Value* v = env->find(e.sym)) {
    if (host_reads_ && HostReads::noted(*v)) note_host_read(env, e.sym, *v);
    return *v;
  }
  std::vector<std::string> known;
  for (Env* s = env.get(); s; s = s->parent.get())
    for (Symbol n : s->names) known.push_back(symbol_name(n));
  std::string hint = closest_name(e.name, known);
  Diagnostic d{"unknown name `" + e.name + "`", e.span, {}};
  if (std::string habit = habit_hint(e.name); !habit.empty()) d.notes.push_back(habit);
  else if (!hint.empty()) d.notes.push_back("help: did you mean `" + hint + "`?");
  throw ScriptError(std::move(d));
}

Value Interpreter::eval_list(const ListExpr& e, const EnvPtr& env, bool exact_floats) {
  // A bracket literal is a tensor when each item is a number or bool, or a
  // nested bracket literal that became a tensor (a row); anything else, a
  // tensor variable included, makes it a list.
  std::vector<Value> items;
  items.reserve(e.items.size());
  bool tensor_literal = !e.items.empty();
  for (auto& it : e.items) {
    items.push_back(exact_floats && it->kind == ExprKind::List
                        ? eval_list(static_cast<const ListExpr&>(*it), env, true)
                        : eval(*it, env));
    const Value& v = items.back();
    if (!v.is_number() && !(it->kind == ExprKind::List && v.is_tensor())) tensor_literal = false;
  }
  if (!tensor_literal) return Value(make_list(std::move(items)));
  bool any_tensor = false, any_float = false, all_bool = true;
  for (auto& v : items) {
    if (v.is_tensor()) any_tensor = true;
    if (v.is_float()) any_float = true;
    if (!v.is_bool()) all_bool = false;
  }
  if (!any_tensor) {
    backend::Shape shape{int64_t(items.size())};
    if (all_bool) {
      std::vector<int64_t> b;
      for (auto& v : items) b.push_back(v.as_bool());
      return Value(on_default_device(backend::from_ints(b, shape, backend::DType::boolean)));
    }
    if (any_float) {
      std::vector<double> d;
      for (auto& v : items) d.push_back(v.as_number());
      backend::Tensor t = backend::from_doubles(d, shape, exact_floats ? backend::DType::f64 : backend::DType::f32);
      t.set_weak(exact_floats);
      return Value(on_default_device(t));
    }
    std::vector<int64_t> d;
    for (auto& v : items) d.push_back(v.is_bool() ? int64_t(v.as_bool()) : v.as_int());
    // Weak too when exact: tensor() then knows its values are host numbers
    // and checks that they fit the integer dtype asked for.
    backend::Tensor t = backend::from_ints(d, shape, backend::DType::i64);
    t.set_weak(exact_floats);
    return Value(on_default_device(t));
  }
  // Nested rows: all must be tensors of one shape (ragged is an error).
  std::vector<backend::Tensor> rows;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_tensor()) fail(e.items[i]->span, "ragged nested list: a number where a row was expected");
    rows.push_back(items[i].as_tensor());
    if (rows.back().shape() != rows[0].shape())
      fail(e.items[i]->span, "ragged nested list: row of shape " + rows.back().shape().str() +
                                 " where rows have shape " + rows[0].shape().str());
  }
  try {
    // Rows of numbers make a constant, inside a graph too (traced, the
    // literal was no number tensor() could range-check).
    bool constant = true;
    for (const backend::Tensor& r : rows) constant = constant && !r.is_traced();
    std::optional<backend::Untraced> untraced;
    if (constant) untraced.emplace();
    backend::Tensor t = backend::stack(rows, 0);
    t.set_weak(exact_floats && t.dtype() != backend::DType::boolean);
    return Value(t);
  } catch (const backend::Error& ex) {
    fail(e.span, ex.what());
  }
}

Value Interpreter::eval_record(const RecordExpr& e, const EnvPtr& env) {
  auto r = make_record();
  for (auto& f : e.fields) {
    Symbol s = intern(f.name);
    if (r->find(s)) fail(f.name_span, "field `" + f.name + "` is given twice");
    r->fields.emplace_back(s, eval(*f.value, env));
  }
  return Value(r);
}

// ---------------------------------------------------------------- indexing

// A one-element integer tensor used where a host int must be known (a list's
// index, a slice's bound): its value, or a diagnostic at `span` inside a
// graph, where a tensor the graph computes has none yet.
namespace {
int64_t known_int(const backend::Tensor& t, Span span, const char* what) {
  if (t.is_traced())
    fail(span, std::string(what) + " must be known while the graph is traced: an int, not a tensor the graph " +
                   "computes (" + t.type().str() + ")");
  // A tensor from outside is the graph's by reference: read now, its value
  // would be a constant of every later run, however it changed.
  if (ir::Tracer::active())
    fail(span, std::string(what) + " inside a graph must be an int, not a tensor (" + t.type().str() +
                   "): a graph reads a tensor from outside anew on every run, but a bound or a list's index is " +
                   "fixed when it is traced");
  return t.item_int();
}
}  // namespace

int64_t list_index(const Value& index, int64_t size, Span span) {
  int64_t i = 0;
  if (index.is_int()) i = index.as_int();
  else if (index.is_tensor() && is_integral(index.as_tensor().dtype()) && index.as_tensor().numel() == 1)
    i = known_int(index.as_tensor(), span, "a list's index");
  else fail(span, "an index must be an int, not " + a_type_name(index));
  int64_t j = i < 0 ? i + size : i;
  if (j < 0 || j >= size)
    fail(span, "index " + std::to_string(i) + " is out of range for length " + std::to_string(size));
  return j;
}

namespace {
std::optional<int64_t> slice_bound(Interpreter& vm, const ExprPtr& e, const EnvPtr& env) {
  if (!e) return std::nullopt;
  Value v = vm.eval(*e, env);
  if (v.is_none()) return std::nullopt;
  if (v.is_int()) return v.as_int();
  if (v.is_tensor() && is_integral(v.as_tensor().dtype()) && v.as_tensor().numel() == 1)
    return known_int(v.as_tensor(), e->span, "a slice bound");
  fail(e->span, "a slice bound must be an int, not " + a_type_name(v));
}
}  // namespace

std::vector<IndexArg> eval_index_args(Interpreter& vm, const IndexExpr& e, const EnvPtr& env) {
  std::vector<IndexArg> args;
  for (auto& it : e.items) {
    IndexArg arg;
    arg.span = it.span;
    backend::IndexItem& item = arg.item;
    if (it.is_slice) {
      item.kind = backend::IndexItem::slice;
      item.start = slice_bound(vm, it.start, env);
      item.stop = slice_bound(vm, it.stop, env);
      item.step = slice_bound(vm, it.step, env);
    } else {
      Value v = vm.eval(*it.index, env);
      item.kind = backend::IndexItem::index;
      if (v.is_int()) item.i = v.as_int();
      else if (v.is_none()) arg.kind = IndexArg::new_axis;
      // A 0-d integer tensor is an int; inside a graph, where its value is
      // not known yet or may change before a later run (one from outside,
      // by reference: a ring buffer's step), an index tensor of no axes,
      // which picks the same.
      else if (v.is_tensor() && is_integral(v.as_tensor().dtype()) && v.as_tensor().ndim() == 0 &&
               !v.as_tensor().is_traced() && !ir::Tracer::active())
        item.i = v.as_tensor().item_int();
      else if (v.is_tensor() && is_integral(v.as_tensor().dtype())) {
        arg.kind = IndexArg::tensor;
        arg.ids = v.as_tensor();
      } else if (v.is_tensor()) {
        fail(it.span, "an index tensor must be an integer tensor, got " + v.as_tensor().type().str() +
                          "; convert it with astype(ids, i64)");
      } else {
        fail(it.span, "an index must be an int, a slice, none or an integer tensor, not " + a_type_name(v));
      }
    }
    args.push_back(std::move(arg));
  }
  return args;
}

std::vector<backend::IndexItem> eval_index_items(Interpreter& vm, const IndexExpr& e, const EnvPtr& env) {
  std::vector<backend::IndexItem> items;
  for (IndexArg& arg : eval_index_args(vm, e, env)) {
    // A 0-d tensor from outside, inside a graph: read now, it would be a
    // constant of every later run (a ring buffer's step wrote slot 0 on
    // every call).
    if (arg.kind == IndexArg::tensor && arg.ids.ndim() == 0 && !arg.ids.is_traced())
      fail(arg.span, "assigning by index inside a graph takes ints and slices, not a tensor from outside (" +
                         arg.ids.type().str() + "): the graph would fix its value when traced; index with an int, " +
                         "or write outside the graph");
    if (arg.kind != IndexArg::basic)
      fail(arg.span, std::string("assigning by index takes ints and slices, not ") +
                         (arg.kind == IndexArg::new_axis ? "none" : "an integer tensor"));
    items.push_back(arg.item);
  }
  return items;
}

Value Interpreter::eval_index(const IndexExpr& e, const EnvPtr& env) { return index_value(e, eval(*e.target, env), env); }

Value Interpreter::index_value(const IndexExpr& e, const Value& target, const EnvPtr& env) {
  if (target.is_tensor()) {
    std::vector<IndexArg> args = eval_index_args(*this, e, env);
    note_op_loc(e.span);
    try {
      return Value(index_tensor(target.as_tensor(), args));
    } catch (const backend::Error& ex) {
      fail(e.span, ex.what());
    }
  }
  const std::vector<Value>* seq = nullptr;
  if (target.is_list()) seq = &target.as_list()->items;
  else if (target.is_tuple()) seq = &target.as_tuple()->items;
  if (!seq && !target.is_str() && !target.is_range()) fail(e.target->span, a_type_name(target) + " cannot be indexed");
  if (e.items.size() != 1) fail(e.span, a_type_name(target) + " takes one index");
  // A string by its characters (code points), as Python's.
  const HostString* chars = target.is_str() ? &target.as_host_str() : nullptr;
  int64_t size = seq ? int64_t(seq->size()) : chars ? chars->chars() : target.as_range().size();
  auto& it = e.items[0];
  if (!it.is_slice) {
    int64_t i = list_index(eval(*it.index, env), size, it.span);
    if (seq) return (*seq)[size_t(i)];
    if (chars) return Value(std::string(chars->char_at(i)));
    return Value(target.as_range().at(i));
  }
  // Python slice semantics on host sequences.
  auto lo = slice_bound(*this, it.start, env), hi = slice_bound(*this, it.stop, env),
       st = slice_bound(*this, it.step, env);
  int64_t step = st.value_or(1);
  if (step == 0) fail(it.span, "slice step cannot be zero");
  // -2^63 has no negation; any step past the length takes the same one item.
  step = std::max(step, -INT64_MAX);
  auto clampb = [&](std::optional<int64_t> b, int64_t dflt) {
    if (!b) return dflt;
    int64_t v = *b < 0 ? *b + size : *b;
    return step > 0 ? std::clamp<int64_t>(v, 0, size) : std::clamp<int64_t>(v, -1, size - 1);
  };
  int64_t a = clampb(lo, step > 0 ? 0 : size - 1), b = clampb(hi, step > 0 ? size : -1);
  const int64_t count = step > 0 ? (b > a ? (b - a - 1) / step + 1 : 0) : (a > b ? (a - b - 1) / -step + 1 : 0);
  std::vector<Value> out;
  std::string sout;
  if (target.is_range()) {  // a huge range's slice: asked before it is made
    try {
      check_items_fit(count);
      out.reserve(size_t(count));
    } catch (const backend::OutOfMemory& ex) {
      fail(e.span, ex.what());
    } catch (const std::bad_alloc&) {
      fail(e.span, "out of memory on cpu: a slice of " + std::to_string(count) + " items");
    }
  }
  // By count, not `i += step`, which overflowed for a step near 2^63 (and
  // read past the sequence).
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = a + k * step;
    if (seq) out.push_back((*seq)[size_t(i)]);
    else if (chars) sout += chars->char_at(i);
    else out.push_back(Value(target.as_range().at(i)));
  }
  if (target.is_str()) return Value(sout);
  if (target.is_tuple()) return Value(make_tuple(std::move(out)));
  return Value(make_list(std::move(out)));
}

// ---------------------------------------------------------------- fields

Value Interpreter::eval_field(const FieldExpr& e, const EnvPtr& env) {
  return field_of(eval(*e.target, env), e.sym, e.name_span, env, false);
}

Value Interpreter::field_of(const Value& target, Symbol name, Span span, const EnvPtr& env, bool for_call) {
  const std::string& n = symbol_name(name);
  if (target.is_record()) {
    if (const Value* v = target.as_record()->find(name)) {
      if (host_reads_ && HostReads::noted(*v)) host_reads_->note_field(target.as_record(), name, *v);
      return *v;
    }
  }
  if (target.is_tensor() && !for_call) {
    const backend::Tensor& t = target.as_tensor();
    if (n == "shape") {
      std::vector<Value> dims;
      for (int64_t d : t.shape()) dims.push_back(Value(d));
      return Value(make_list(std::move(dims)));
    }
    if (n == "ndim") return Value(int64_t(t.ndim()));
    // PyTorch's attribute, not the method sugar for requires_grad(x): a
    // bound function would be true in an `if` whatever the tensor.
    if (n == "requires_grad") return Value(backend::requires_grad(t));
    if (n == "grad")
      throw ScriptError(Diagnostic{"a tensor keeps no gradient: there is no `.grad`", span,
                                   {"help: `grad(loss, [w])` gives w's gradient; `minimize(loss, opt)` takes a step"}});
    if (n == "size") return Value(t.numel());
    if (n == "dtype") return Value(t.dtype());
    if (n == "device") return Value(DeviceValue{t.device()});
    if (n == "T") {
      if (t.ndim() != 2) fail(span, "`.T` needs a 2-d tensor, not " + t.type().str() + "; use transpose() or permute()");
      note_op_loc(span);  // the node is `.T`'s, in a graph and in save_onnx's messages
      try {
        return Value(backend::transpose(t, 0, 1));
      } catch (const backend::Error& ex) {
        fail(span, ex.what());
      }
    }
  }
  // Method sugar: x.f means f with x as its first argument.
  if (Value* f = env->find(name); f && f->is_function()) {
    if (host_reads_) {
      note_host_read(env, name, *f);
      // A field `f` given to the record later is what eager code would call.
      if (target.is_record()) host_reads_->note_absent(target.as_record(), name);
    }
    auto bound = std::make_shared<Function>();
    bound->kind = Function::Kind::Bound;
    bound->self = target;
    bound->target = f->as_function();
    return Value(FunctionPtr(bound));
  }
  if (target.is_record()) {
    std::vector<std::string> fields;
    for (auto& [k, v] : target.as_record()->fields) fields.push_back(symbol_name(k));
    Diagnostic d{"record has no field `" + n + "`", span, {}};
    std::string hint = closest_name(n, fields);
    if (!hint.empty()) d.notes.push_back("help: did you mean `" + hint + "`?");
    else if (std::string habit = habit_hint(n); !habit.empty()) d.notes.push_back(habit);  // opt.zero_grad()
    throw ScriptError(std::move(d));
  }
  Diagnostic d{a_type_name(target) + " has no attribute `" + n + "`, and no function `" + n + "` is in scope", span, {}};
  if (std::string habit = habit_hint(n); !habit.empty()) d.notes.push_back(habit);
  throw ScriptError(std::move(d));
}

}  // namespace nn::frontend
