// Autodiff built-ins (SPEC §5): param, grad, value_and_grad, detach and
// no_grad, over the backend's eager tape (backend/autograd.h). grad takes
// its wrt as a tensor or any nesting of lists, tuples and records of
// tensors, and answers in the same structure.
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backend/autograd.h"
#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {

// The tensors of a wrt structure, depth first, in order; anything else in
// it is an error at `span` (the argument that gave it, named `what`).
void collect(const Value& v, std::vector<backend::Tensor>& out, const Span& span, const char* what = "wrt") {
  switch (v.kind()) {
    case Value::Kind::Tensor: out.push_back(v.as_tensor()); return;
    case Value::Kind::List:
      for (const Value& item : v.as_list()->items) collect(item, out, span, what);
      return;
    case Value::Kind::Tuple:
      for (const Value& item : v.as_tuple()->items) collect(item, out, span, what);
      return;
    case Value::Kind::Record:
      for (const auto& [name, item] : v.as_record()->fields) collect(item, out, span, what);
      return;
    default:
      fail(span, std::string(what) + " must be a tensor or a list, tuple or record of tensors, but it holds " +
                     a_type_name(v));
  }
}

// The gradients laid out like wrt: the same kinds of containers, the same
// record fields, each tensor replaced by its gradient (taken in order).
Value rebuild(const Value& v, const std::vector<backend::Tensor>& grads, size_t& next) {
  switch (v.kind()) {
    case Value::Kind::List: {
      auto l = make_list();
      for (const Value& item : v.as_list()->items) l->items.push_back(rebuild(item, grads, next));
      return Value(l);
    }
    case Value::Kind::Tuple: {
      std::vector<Value> items;
      for (const Value& item : v.as_tuple()->items) items.push_back(rebuild(item, grads, next));
      return Value(make_tuple(std::move(items)));
    }
    case Value::Kind::Record: {
      auto r = make_record();
      for (const auto& [name, item] : v.as_record()->fields) r->set(name, rebuild(item, grads, next));
      return Value(r);
    }
    default: return Value(grads[next++]);
  }
}

// The diagnostic of an input changed in place after an op saved it: at the
// line that changed it, naming the tensor as the script does.
[[noreturn]] void changed_in_place(Interpreter& vm, const backend::ChangedInPlace& e, const Span& grad_span) {
  const Span changed{e.changed_at.file, e.changed_at.begin, e.changed_at.end};
  const Span saved{e.saved_at.file, e.saved_at.begin, e.saved_at.end};
  Diagnostic d;
  const char* how = e.output ? "made" : "used";
  d.message = "grad: " + vm.describe_tensor(e.tensor) + " was changed in place after `" + e.op + "` " + how +
              " it, so its gradient would be wrong";
  d.span = changed.valid() ? changed : grad_span;
  if (saved.valid()) d.notes.push_back("`" + e.op + "` " + how + " it at " + vm.sources().location(saved));
  // The script's line that asked (a `minimize` call rather than the stdlib's grad).
  const backend::SourceLoc asked = backend::library_entry();
  const Span asked_at = asked.valid() ? Span{asked.file, asked.begin, asked.end} : grad_span;
  if (changed.valid()) d.notes.push_back("grad was asked at " + vm.sources().location(asked_at));
  d.notes.push_back("help: take grad before changing it, or compute the loss again after the change");
  throw ScriptError(std::move(d));
}

// grad(y, wrt) on values; y_span and wrt_span point at where they came from.
Value grad_of(Interpreter& vm, const Value& y, const Span& y_span, const Value& wrt, const Span& wrt_span,
              const Span& call_span) {
  if (!y.is_tensor())
    fail(y_span, "grad needs a scalar tensor as the loss, not " + (y.is_none() ? "none" : a_type_name(y)));
  std::vector<backend::Tensor> ts;
  collect(wrt, ts, wrt_span);
  // The loss depends on none of an empty wrt (SPEC §17): often a model
  // whose weights were made without param().
  if (ts.empty())
    fail(wrt_span, "grad: wrt holds no tensor, so there is nothing to differentiate with respect to; make weights "
                   "with param(...)");
  // A tensor that is no param (nor computed from one) is a constant to
  // autodiff: the loss cannot depend on it (SPEC §17).
  bool any_tracked = false;
  for (const backend::Tensor& t : ts) any_tracked = any_tracked || backend::requires_grad(t);
  if (!ts.empty() && !any_tracked)
    fail(wrt_span, "grad: " + vm.describe_tensor(ts[0]) + (ts.size() > 1 ? " and the others of wrt are" : " is") +
                       " not a param, so autodiff treats " + (ts.size() > 1 ? "them" : "it") +
                       " as a constant and the loss cannot depend on " + (ts.size() > 1 ? "them" : "it") +
                       "; make weights with param(...)");
  // Inside a graph the walk traces the backward part, and what follows it
  // (an optimizer's step) is the optimizer part.
  ir::Tracer* tr = ir::Tracer::active();
  if (tr) tr->set_phase(ir::Phase::backward);
  std::vector<backend::Tensor> grads;
  try {
    grads = backend::grad(y.as_tensor(), ts);
  } catch (const backend::ChangedInPlace& e) {
    if (tr) tr->set_phase(ir::Phase::optimizer);
    changed_in_place(vm, e, call_span);
  } catch (...) {
    if (tr) tr->set_phase(ir::Phase::optimizer);
    throw;
  }
  if (tr) tr->set_phase(ir::Phase::optimizer);
  size_t next = 0;
  return rebuild(wrt, grads, next);
}

}  // namespace

void install_autodiff(Interpreter& vm) {
  def(vm, "param", "t", [](Args& a) {
    // A host int is a number like 2.0 here (an f32 param); the backend's
    // message names the dtype of an integer tensor.
    if (a[0].is_int()) return Value(backend::param(backend::astype(a.tensor(0), backend::DType::f32)));
    return Value(backend::param(a.tensor(0)));
  });

  def(vm, "grad", "y, wrt", [](Args& a) { return grad_of(a.vm(), a[0], a.span(0), a[1], a.span(1), a.call_span()); });

  // A function of any positional arguments that calls f with them and
  // gives (value, grads); the wrt structure is read at each call, so a
  // record of params that changes is followed.
  def(vm, "value_and_grad", "f, wrt", [](Args& a) {
    if (!a[0].is_function()) a.fail(0, "value_and_grad needs a function, not " + a_type_name(a[0]));
    Value f = a[0], wrt = a[1];
    {
      std::vector<backend::Tensor> check;
      collect(wrt, check, a.span(1));  // a bad wrt is reported here, not at each call
    }
    auto b = std::make_shared<Builtin>();
    b->name = "value_and_grad(" + a[0].as_function()->name() + ")";
    b->variadic = true;
    // f and wrt are held by the Builtin, where the cycle collector sees them
    // (f is often a closure over the scope that keeps this function).
    b->held = {f, wrt};
    // The calling interpreter, not a captured one: the function value may
    // outlive the interpreter that made it.
    b->fn = [self = b.get()](Args& call) {
      const Value f = self->held[0], wrt = self->held[1];
      Value value = call.vm().call(f, call.rest(), {}, call.call_span());
      if (!value.is_tensor())
        fail(call.call_span(), "value_and_grad: the function must return a scalar tensor, not " + a_type_name(value));
      Value grads = grad_of(call.vm(), value, call.call_span(), wrt, call.call_span(), call.call_span());
      return Value(make_tuple({value, grads}));
    };
    auto fn = std::make_shared<Function>();
    fn->kind = Function::Kind::Builtin;
    fn->builtin = std::move(b);
    return Value(FunctionPtr(fn));
  });

  // The stdlib's helpers over a structure of gradients as grad gives it (a
  // tensor, or lists, tuples and records of them): its tensors in order, and
  // the same structure holding others (clip_grad_norm).
  def(vm, "_tensors", "v", [](Args& a) {
    std::vector<backend::Tensor> ts;
    collect(a[0], ts, a.span(0), "the gradients");
    auto l = make_list();
    for (backend::Tensor& t : ts) l->items.push_back(Value(std::move(t)));
    return Value(l);
  });
  def(vm, "_with_tensors", "v, ts", [](Args& a) {
    std::vector<backend::Tensor> shape_of, ts;
    collect(a[0], shape_of, a.span(0), "the gradients");
    collect(a[1], ts, a.span(1), "the gradients");
    if (ts.size() != shape_of.size())
      a.fail(1, "expected " + std::to_string(shape_of.size()) + " tensors, got " + std::to_string(ts.size()));
    size_t next = 0;
    return rebuild(a[0], ts, next);
  });
  // The tensors of a list, each once (the first time it appears): a model
  // that holds one param in two places (tied weights, a layer used twice)
  // has it once in params(m), as PyTorch's parameters().
  def(vm, "_unique_tensors", "xs", [](Args& a) {
    if (!a[0].is_list() && !a[0].is_tuple()) a.fail(0, "expected a list of tensors, got " + a_type_name(a[0]));
    auto out = make_list();
    std::unordered_set<const backend::TensorImpl*> seen;
    for (const Value& v : a[0].is_list() ? a[0].as_list()->items : a[0].as_tuple()->items)
      if (!v.is_tensor() || seen.insert(v.as_tensor().impl()).second) out->items.push_back(v);
    return Value(out);
  });
  def(vm, "detach", "x", [](Args& a) { return Value(backend::detach(a.tensor(0))); });
  def(vm, "requires_grad", "x", [](Args& a) {
    return Value(a[0].is_tensor() && backend::requires_grad(a[0].as_tensor()));
  });

  // Grad mode is restored however fn ends (the guard's destructor), an
  // error included.
  def(vm, "no_grad", "fn", [](Args& a) {
    if (!a[0].is_function()) a.fail(0, "no_grad needs a function to call, not " + a_type_name(a[0]));
    backend::NoGradGuard guard;
    return a.vm().call(a[0], {}, {}, a.call_span());
  });
}

}  // namespace nn::frontend::builtins
