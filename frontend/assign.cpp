// Assignment statements: `name = e`, `r.f = e`, `x[i] = e` and the compound
// forms `+= -= *= /=`.
#include "backend/autograd.h"
#include "backend/error.h"
#include "backend/ops.h"
#include "frontend/format.h"
#include "frontend/host_data.h"
#include "frontend/index_items.h"
#include "frontend/interpreter.h"
#include "ir/tracer.h"

namespace nn::frontend {
namespace {
BinOp compound_op(AssignOp op) {
  switch (op) {
    case AssignOp::Add: return BinOp::Add;
    case AssignOp::Sub: return BinOp::Sub;
    case AssignOp::Mul: return BinOp::Mul;
    default: return BinOp::Div;
  }
}
// The registry op of a compound assignment's operator.
const backend::OpDef* elementwise_op(BinOp op) {
  using backend::OpId;
  switch (op) {
    case BinOp::Add: return &backend::op(OpId::add);
    case BinOp::Sub: return &backend::op(OpId::sub);
    case BinOp::Mul: return &backend::op(OpId::mul);
    case BinOp::Div: return &backend::op(OpId::div);
    default: return nullptr;
  }
}
}  // namespace

// `x += v` on a tensor writes into x's memory, as NumPy and PyTorch do: every
// holder of that tensor (a model's record, an optimizer's list) sees the
// update. It keeps x's shape and dtype; a result of a wider category (a float
// into an integer tensor) or another shape is an error.
Value Interpreter::update_in_place(const Value& old, BinOp op, const Value& v, Span span) {
  // `xs += ys` extends the list itself, as Python's: every holder of it sees the items.
  if (op == BinOp::Add && old.is_list() && (v.is_list() || v.is_tuple())) {
    List& list = *old.as_list();
    const std::vector<Value> items = v.is_list() ? v.as_list()->items : v.as_tuple()->items;  // xs += xs too
    const size_t before = list.items.size();
    list.items.insert(list.items.end(), items.begin(), items.end());
    try {
      list.count();
    } catch (const backend::OutOfMemory& e) {
      list.items.resize(before);
      fail(span, e.what());
    }
    for (const Value& item : items) note_stored(old, item);
    return old;
  }
  if (!old.is_tensor()) return binary(op, old, v, span);
  backend::Tensor target = old.as_tensor();
  // A tensor computed from params keeps the op call that made it for grad();
  // overwriting it would make that history lie.
  if (target.impl()->grad_fn && backend::grad_enabled()) {
    // Most often a running total of losses: `x = x + v` would keep every
    // step's autodiff history alive, so the number is what to add.
    Diagnostic d{std::string("`") + binop_symbol(op) + "=` would overwrite " + target.type().str() +
                     ", which autodiff is tracking",
                 span, {}};
    d.notes.push_back(std::string("help: to keep only the value, write `x ") + binop_symbol(op) +
                      "= item(v)` (a number) or use detach(v); `x = x " + binop_symbol(op) +
                      " v` makes a new tensor that keeps autodiff's history of every step");
    throw ScriptError(std::move(d));
  }
  // The update itself is never part of a gradient (an optimizer step on a param).
  backend::NoGradGuard no_grad;
  note_op_loc(span);
  // Fast path: an elementwise op whose result has x's type writes straight
  // into x, one pass over memory.
  if (const backend::OpDef* d = elementwise_op(op)) {
    try {
      backend::Tensor in[2] = {target, v.is_tensor() ? v.as_tensor() : to_tensor(v, span)};
      if (backend::call_into(*d, in, target)) return old;
    } catch (const backend::Error& e) {
      fail(span, e.what());
    }
  }
  Value result = binary(op, old, v, span);
  const backend::Tensor& r = result.as_tensor();
  if (r.shape() != target.shape())
    fail(span, std::string("`") + binop_symbol(op) + "=` writes into " + target.type().str() +
                   " in place and cannot make it " + r.type().str() + "; write `x = x " + binop_symbol(op) + " v`");
  if (backend::category(r.dtype()) > backend::category(target.dtype()))
    fail(span, std::string("`") + binop_symbol(op) + "=` writes into " + target.type().str() +
                   " in place and cannot store a result of dtype " + std::string(backend::dtype_name(r.dtype())) +
                   " in it; write `x = x " + binop_symbol(op) + " v`");
  try {
    write_whole(target, r);
  } catch (const backend::Error& e) {
    fail(span, e.what());
  }
  return old;
}

// Inside a graph the update is a new value the tensor stands for from here
// on; the last one is written back after each run (ir/tracer.h).
void write_whole(const backend::Tensor& target, const backend::Tensor& v) {
  const backend::Tensor r = v.dtype() == target.dtype() ? v : backend::astype(v, target.dtype());
  if (ir::Tracer* tr = ir::Tracer::active()) return tr->rebind(target, r);
  backend::Tensor t = target;
  backend::index_assign(t, {}, r);
}

// SPEC §13: inside a graph, `v = 0.9 * v + g` on a tensor the graph captured
// (a variable outside it, or a field of a record made outside it, holding a
// tensor of the same shape, the new value of a dtype it can hold) is a
// state update, as `v *= 0.9; v += g` is: the variable or field keeps its
// tensor, which takes the new value after every run. Under --eager the
// graph's code does the same, writing the tensor now, so that every other
// holder of it sees what it would see after a graph run.
bool Interpreter::state_update(const Value& old, const Value& v, bool captured) {
  ir::Tracer* tr = ir::Tracer::active();
  if (!(tr || in_eager_graph_) || !old.is_tensor() || !v.is_tensor()) return false;
  if (tr && (old.as_tensor().is_traced() || !v.as_tensor().is_traced())) return false;
  const backend::Tensor& target = old.as_tensor();
  const backend::Tensor& r = v.as_tensor();
  if (r.shape() != target.shape() || r.device() != target.device() ||
      backend::category(r.dtype()) > backend::category(target.dtype()) || !captured)
    return false;
  {
    backend::NoGradGuard no_grad;  // as in a graph, the write itself has no autodiff history
    write_whole(target, r);
  }
  lend_history(target, r);
  return true;
}

void Interpreter::lend_history(const backend::Tensor& target, const backend::Tensor& from) {
  backend::TensorImpl& t = *target.impl();
  const backend::TensorImpl& f = *from.impl();
  // A param stays the leaf its optimizer and grad() name; a new value
  // without history (a param itself, `h = w`) lends none, nor one cast.
  if (!f.grad_fn || (t.requires_grad && !t.grad_fn) || from.dtype() != target.dtype()) return;
  lent_histories_.push_back({target, t.requires_grad, t.graph_result, t.grad_result, t.output_index, t.grad_fn});
  t.requires_grad = true;
  t.graph_result = false;
  t.grad_result = f.grad_result;
  t.output_index = f.output_index;
  t.grad_fn = f.grad_fn;
}

// `x -= v` of a tensor wrote into x itself (a state update, if traced), and
// `xs += ys` into the list: the name or field holds the same value, nothing
// to write again.
static bool written_in_place(const Value& before, const Value& after) {
  if (before.is_list() && after.is_list()) return before.as_list() == after.as_list();  // xs += ys
  return before.is_tensor() && after.is_tensor() && before.as_tensor().impl() == after.as_tensor().impl();
}

void Interpreter::exec_assign(const AssignStmt& s, const EnvPtr& env) {
  auto combine = [&](const Value& old, Value v) {
    if (s.op != AssignOp::Set) return update_in_place(old, compound_op(s.op), v, s.span);
    // A traced tensor stored anywhere may escape the graph: remember where.
    if (v.is_tensor() && v.as_tensor().is_traced() && ir::Tracer::active())
      traced_stores_[v.as_tensor().impl()] = {v.as_tensor(), &s, s.span, old.is_tensor(),
                                              old.is_tensor() ? old.as_tensor().type() : backend::TensorType{}};
    return v;
  };
  switch (s.target->kind) {
    case ExprKind::Name: {
      auto& n = static_cast<const NameExpr&>(*s.target);
      Value v = eval(*s.value, env);
      Value* slot = env->find(n.sym);
      if (!slot || prelude_->find_local(n.sym) == slot) {
        if (slot) fail(n.span, "cannot assign to the built-in `" + n.name + "`; declare a new name with `let`");
        fail(n.span, "assignment to undeclared name `" + n.name + "`; declare it first with `let " + n.name + " = ...`");
      }
      if (s.op == AssignOp::Set && state_update(*slot, v, outside_the_graph(*env, n.sym))) return;
      if (host_reads_ && s.op != AssignOp::Set && HostReads::noted(*slot)) note_host_read(env, n.sym, *slot);
      const Value before = *slot;
      *slot = combine(*slot, std::move(v));
      if (host_reads_ && !written_in_place(before, *slot)) replay_name_write(env, n.sym, *slot, s.span);
      return;
    }
    case ExprKind::Field: {
      auto& f = static_cast<const FieldExpr&>(*s.target);
      Value target = eval(*f.target, env);
      if (!target.is_record()) fail(f.span, "cannot set field `" + f.name + "` of " + a_type_name(target) + "; only records have settable fields");
      Value v = eval(*s.value, env);
      RecordPtr r = target.as_record();
      if (s.op != AssignOp::Set) {
        Value* old = r->find(f.sym);
        if (!old) fail(f.name_span, "record has no field `" + f.name + "`");
        if (host_reads_ && HostReads::noted(*old)) host_reads_->note_field(r, f.sym, *old);  // read, as `r.f + v`
        v = combine(*old, std::move(v));
      } else {
        const Value* old = r->find(f.sym);
        if (old && state_update(*old, v, !r->made_by_graph)) return;
        v = combine(old ? *old : Value(), std::move(v));
      }
      if (host_reads_) {
        traced_field_writes_.push_back({r, f.sym, s.span});
        const Value* before = r->find(f.sym);
        if (!before || !written_in_place(*before, v)) replay_field_write(r, f.sym, v);
      }
      note_stored(target, v);
      r->set(f.sym, std::move(v));
      return;
    }
    case ExprKind::Index: {
      auto& ix = static_cast<const IndexExpr&>(*s.target);
      Value target;
      if (ix.target->kind == ExprKind::Index) {
        // Indexing a tensor copies, so `x[i][j] = v` would write into a
        // temporary; an item of a list is the tensor itself (`xs[0][:] = v`).
        auto& inner = static_cast<const IndexExpr&>(*ix.target);
        Value base = eval(*inner.target, env);
        if (base.is_tensor())
          fail(ix.span, "chained indexing assigns into a copy; write `x[i, j] = v` to change x itself");
        target = index_value(inner, base, env);
      } else {
        target = eval(*ix.target, env);
      }
      if (target.is_list()) {
        if (ix.items.size() != 1 || ix.items[0].is_slice) fail(ix.span, "a list takes one integer index");
        Value iv = eval(*ix.items[0].index, env);
        const ListPtr& list = target.as_list();
        auto& items = list->items;
        int64_t i = list_index(iv, int64_t(items.size()), ix.items[0].span);
        Value v = eval(*s.value, env);
        // An item of a list made outside the graph is captured, as a field is.
        if (s.op == AssignOp::Set && state_update(items[size_t(i)], v, !list->made_by_graph)) return;
        items[size_t(i)] = combine(items[size_t(i)], std::move(v));
        note_stored(target, items[size_t(i)]);
        return;
      }
      if (!target.is_tensor()) fail(ix.target->span, "cannot assign into " + a_type_name(target) + " by index");
      std::vector<backend::IndexItem> items = eval_index_items(*this, ix, env);
      Value v = eval(*s.value, env);
      if (target.as_tensor().impl()->grad_fn && backend::grad_enabled())
        fail(ix.span, "assigning into " + target.as_tensor().type().str() +
                          ", which autodiff is tracking, would make its gradient wrong; build a new tensor with where() or concat()");
      note_op_loc(s.span);
      const backend::Tensor& t0 = target.as_tensor();
      // A host number must fit an integer tensor, as tensor() and full()
      // insist (3000000000 into i32 wrapped; 1e30 and NaN into i64 saturated).
      if (backend::is_integral(t0.dtype()) && t0.dtype() != backend::DType::boolean && v.is_number()) {
        const bool fits = v.is_int() ? fits_integer(v.as_int(), t0.dtype()) : fits_integer(v.as_float(), t0.dtype());
        if (!fits)
          fail(s.value->span, "value " + to_str(v) + " cannot be converted to " +
                                  std::string(backend::dtype_name(t0.dtype())) + " without overflow");
      }
      try {
        backend::Tensor t = t0;
        if (s.op != AssignOp::Set) {
          v = binary(compound_op(s.op), Value(backend::index(t, items)), v, s.span);
          // As `x op= v`: a float result is not stored into integers (it was
          // truncated here, and refused there).
          if (backend::category(v.as_tensor().dtype()) > backend::category(t.dtype()))
            fail(s.span, std::string("`") + binop_symbol(compound_op(s.op)) + "=` writes into " + t.type().str() +
                             " in place and cannot store a result of dtype " +
                             std::string(backend::dtype_name(v.as_tensor().dtype())) + " in it");
        }
        backend::index_assign(t, items, to_tensor(v, s.value->span));
      } catch (const backend::Error& e) {
        fail(s.span, e.what());
      }
      return;
    }
    default: fail(s.target->span, "cannot assign to this expression");
  }
}

}  // namespace nn::frontend
