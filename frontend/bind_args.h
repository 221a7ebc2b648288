// Binding a call's arguments to a function's parameters: positional ones in
// order, then keywords by name, then defaults. The one binding of nn
// functions (graph functions among them) and built-ins, and so the one place
// of the diagnostics of a call that does not fit its function: too many
// arguments, a missing one, an unknown or repeated keyword.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/ast.h"
#include "frontend/source.h"
#include "frontend/symbol.h"
#include "frontend/value.h"

namespace nn::frontend {

class Interpreter;
struct Env;
using EnvPtr = std::shared_ptr<Env>;

struct Parameter {
  std::string name;
  Symbol sym = 0;
  std::optional<Value> default_value;  // a built-in's default: a constant
  const Expr* default_expr = nullptr;  // an nn function's: evaluated at each call, in its scope
  bool has_default() const { return default_value || default_expr; }
};

// A function's parameters as binding sees them; the function owns them.
struct Parameters {
  // How messages name the function: "`f`", "function" (a lambda), "zeros".
  std::string_view callee;
  std::span<const Parameter> fixed;
  // Positional arguments past the fixed parameters: an error, one more
  // value holding them as a list (`fn f(*rest)`), or kept apart for a
  // built-in that takes any number (`*` in its parameter list).
  enum class Rest : uint8_t { none, list, apart };
  Rest rest = Rest::none;
  Symbol rest_sym = 0;  // Rest::list: the parameter's name
};

// An nn function's parameters, made on its first call and kept on its
// definition (FunctionDef::parameters).
struct FunctionParameters {
  std::string callee;
  std::vector<Parameter> fixed;
  Symbol rest_sym = 0;  // `*rest`; 0 when there is none
  Parameters view() const {
    return {callee, fixed, rest_sym ? Parameters::Rest::list : Parameters::Rest::none, rest_sym};
  }
};
std::shared_ptr<const FunctionParameters> make_parameters(const FunctionDef& def);  // the AST builder's
inline const FunctionParameters& parameters_of(const FunctionDef& def) { return *def.parameters; }

struct KeywordArg {
  Symbol name;
  Value value;
  Span name_span;   // `name` in `name=value`; invalid from C++ callers
  Span value_span;  // `value`; invalid from C++ callers
};

// A call's arguments, evaluated. Spans are where the arguments were written
// (empty or invalid when C++ code makes the call); messages about the call
// as a whole point at `call_span`.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<Span> positional_spans;
  std::vector<KeywordArg> keywords;
  Span call_span;
};

// The arguments bound: values[i] and spans[i] for fixed parameter i (the
// rest list last with Rest::list), `given` telling which the call gave,
// `rest` the extra positional arguments with Rest::apart.
struct BoundArgs {
  std::vector<Value> values;
  std::vector<Span> spans;  // where each argument was written; invalid for defaults
  std::vector<bool> given;
  std::vector<Value> rest;
};

// Binds `call` (its values are moved) or throws a ScriptError. Default
// expressions are evaluated by `vm` in `scope`.
BoundArgs bind_args(const Parameters& params, CallArgs& call, Interpreter& vm, const EnvPtr& scope);

}  // namespace nn::frontend
