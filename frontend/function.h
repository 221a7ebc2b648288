// Callable values: closures over nn code, built-in functions written in C++,
// and bound methods (method sugar `x.f(a)` for a function f in scope).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/bind_args.h"
#include "frontend/value.h"

namespace nn::frontend {

class Interpreter;
struct Env;
struct GraphCache;
using EnvPtr = std::shared_ptr<Env>;

// Arguments of a built-in, bound to its parameters by bind_args.
class Args {
 public:
  Args(Interpreter& vm, Span call_span, BoundArgs bound, Parameters params = {})
      : vm_(vm), call_span_(call_span), bound_(std::move(bound)), params_(params) {}
  size_t size() const { return bound_.values.size(); }
  Value& operator[](size_t i) { return bound_.values[i]; }
  const Value& operator[](size_t i) const { return bound_.values[i]; }
  bool given(size_t i) const { return bound_.given[i]; }
  // Positional arguments past the last parameter (variadic built-ins).
  std::vector<Value>& rest() { return bound_.rest; }
  Span span(size_t i) const { return bound_.spans[i].valid() ? bound_.spans[i] : call_span_; }
  Span call_span() const { return call_span_; }
  Interpreter& vm() { return vm_; }

  // Conversions with diagnostics pointing at the argument.
  backend::Tensor tensor(size_t i) const;            // numbers and lists become tensors
  int64_t integer(size_t i) const;                   // int, or 1-element integer tensor
  double number(size_t i) const;                     // int/float/bool or 1-element tensor
  bool boolean(size_t i) const;
  const std::string& str(size_t i) const;
  backend::DType dtype(size_t i) const;
  backend::Shape shape(size_t i) const;              // list/tuple of ints, int tensor, or an int
  std::vector<int64_t> int_list(size_t i) const;     // same inputs as shape(), may be negative
  std::optional<std::vector<int64_t>> axes(size_t i) const;  // none, an int, or a list of ints
  [[noreturn]] void fail(size_t i, const std::string& message) const;

 private:
  // " for `axis` of gather": which argument a conversion failed on.
  std::string which(size_t i) const;
  Interpreter& vm_;
  Span call_span_;
  BoundArgs bound_;
  Parameters params_;  // the built-in's, naming its arguments in messages
};

struct Builtin {
  std::string name;
  std::vector<Parameter> params;
  bool variadic = false;  // extra positional arguments go to Args::rest()
  std::function<Value(Args&)> fn;
  // A bracket literal as the first argument keeps its floats' exact values
  // (`tensor([0.1], f64)` is 0.1, not f32's 0.100000001).
  bool exact_literal = false;
  // Values a built-in made at run time holds (value_and_grad's function and
  // wrt): kept here rather than captured by `fn`, so that the cycle
  // collector sees them (frontend/cycle_collector.cpp). `fn` reads them
  // through the Builtin, which outlives it.
  std::vector<Value> held = {};
  Parameters parameters() const {
    return {name, params, variadic ? Parameters::Rest::apart : Parameters::Rest::none, 0};
  }
};

struct Function {
  enum class Kind : uint8_t { Closure, Builtin, Bound };
  Kind kind = Kind::Closure;
  // Closure: the definition (shared with the parsed program: a closure keeps
  // its own code, and through it its source text, alive) and the scope it
  // captured by reference.
  std::shared_ptr<const FunctionDef> def;
  EnvPtr env;
  // Closure, and Builtin of a host (nn::Interpreter::define): the
  // interpreter that made it (Interpreter::id) and whether that one still
  // lives. Another interpreter refuses to run it: its scope, spans and
  // graphs, or the host's state its function holds, belong to the owner.
  // 0 for the built-ins every interpreter shares.
  uint64_t owner = 0;
  std::weak_ptr<const void> owner_alive;
  // Builtin.
  std::shared_ptr<const Builtin> builtin;
  // Bound: `self` becomes the first positional argument of `target`.
  Value self;
  FunctionPtr target;

  // Graph functions: the compiled graphs, one per call signature.
  mutable std::shared_ptr<GraphCache> graph_cache;

  std::string name() const;
};

}  // namespace nn::frontend
