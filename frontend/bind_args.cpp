// Binding a call's arguments to a function's parameters (see bind_args.h).
#include "frontend/bind_args.h"

#include <algorithm>

#include "frontend/diagnostic.h"
#include "frontend/interpreter.h"

namespace nn::frontend {
namespace {

std::string count_of(size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

// `name=value` where the call wrote it; the call when C++ made it.
Span keyword_span(const KeywordArg& k, Span call_span) {
  if (k.name_span.valid() && k.value_span.valid()) return Span::cover(k.name_span, k.value_span);
  if (k.value_span.valid()) return k.value_span;
  return call_span;
}

[[noreturn]] void fail_too_many(const Parameters& params, const CallArgs& call) {
  const size_t n = params.fixed.size();
  const size_t given = call.positional.size();
  // "at most" where defaults make fewer enough.
  bool any_default = false;
  for (auto& p : params.fixed) any_default = any_default || p.has_default();
  fail(call.call_span, std::string(params.callee) + " takes " + (any_default ? "at most " : "") + count_of(n, "argument") +
                           " but " + std::to_string(given) + (given == 1 ? " was" : " were") + " given");
}

// "`x`, `axis` and `keepdims`"
std::string list_names(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + ("`" + names[i] + "`");
  return s;
}

[[noreturn]] void fail_unknown_keyword(const Parameters& params, const KeywordArg& k, Span call_span) {
  std::vector<std::string> names;
  names.reserve(params.fixed.size());
  for (auto& p : params.fixed) names.push_back(p.name);
  const std::string& name = symbol_name(k.name);
  Diagnostic d{"unknown keyword argument `" + name + "` for " + std::string(params.callee), call_span, {}};
  // PyTorch's and NumPy's names of nn's parameters.
  static const std::pair<const char*, const char*> kAliases[] = {
      {"dim", "axis"}, {"keepdim", "keepdims"}, {"min", "lo"}, {"max", "hi"}, {"input", "x"}};
  std::string hint = closest_name(name, names);
  for (auto [theirs, ours] : kAliases)
    if (hint.empty() && name == theirs && std::find(names.begin(), names.end(), ours) != names.end()) hint = ours;
  if (!hint.empty()) d.notes.push_back("help: did you mean `" + hint + "`?");
  else if (!names.empty()) d.notes.push_back("help: it takes " + list_names(names));
  throw ScriptError(std::move(d));
}

}  // namespace

std::shared_ptr<const FunctionParameters> make_parameters(const FunctionDef& def) {
  auto params = std::make_shared<FunctionParameters>();
  params->callee = def.name.empty() ? "function" : "`" + def.name + "`";
  for (auto& p : def.params) {
    if (p.is_rest) params->rest_sym = intern(p.name);
    else params->fixed.push_back(Parameter{p.name, intern(p.name), std::nullopt, p.default_value.get()});
  }
  return params;
}

BoundArgs bind_args(const Parameters& params, CallArgs& call, Interpreter& vm, const EnvPtr& scope) {
  const size_t n = params.fixed.size();
  const size_t npos = call.positional.size();
  if (npos > n && params.rest == Parameters::Rest::none) fail_too_many(params, call);
  const size_t slots = n + (params.rest == Parameters::Rest::list ? 1 : 0);

  // The positional arguments take the first slots in place: their vectors
  // become the bound ones, which saves copying them on every call.
  BoundArgs out;
  out.values = std::move(call.positional);
  out.spans = std::move(call.positional_spans);
  if (npos > n) {
    auto extra = out.values.begin() + ptrdiff_t(n);
    std::vector<Value> rest(std::make_move_iterator(extra), std::make_move_iterator(out.values.end()));
    if (params.rest == Parameters::Rest::list) {
      out.values.resize(n);
      out.values.emplace_back(make_list(std::move(rest)));
    } else {
      out.rest = std::move(rest);
    }
  } else if (params.rest == Parameters::Rest::list) {
    out.values.resize(n);
    out.values.emplace_back(make_list());
  }
  out.values.resize(slots);
  out.spans.resize(slots);
  out.given.assign(slots, false);
  for (size_t i = 0; i < std::min(npos, slots); ++i) out.given[i] = true;
  if (params.rest == Parameters::Rest::list) {
    out.given[n] = true;
    out.spans[n] = Span{};
  }

  for (auto& k : call.keywords) {
    size_t i = 0;
    while (i < n && params.fixed[i].sym != k.name) ++i;
    if (i == n) {
      if (params.rest == Parameters::Rest::list && k.name == params.rest_sym)
        fail(keyword_span(k, call.call_span),
             "the rest parameter `*" + symbol_name(params.rest_sym) + "` of " + std::string(params.callee) +
                 " cannot be given by keyword");
      fail_unknown_keyword(params, k, call.call_span);
    }
    if (out.given[i])
      fail(keyword_span(k, call.call_span),
           "argument `" + params.fixed[i].name + "` of " + std::string(params.callee) + " is given twice");
    out.values[i] = std::move(k.value);
    out.spans[i] = k.value_span;
    out.given[i] = true;
  }

  for (size_t i = 0; i < n; ++i) {
    if (out.given[i]) continue;
    const Parameter& p = params.fixed[i];
    if (p.default_value) out.values[i] = *p.default_value;
    else if (p.default_expr) out.values[i] = vm.eval(*p.default_expr, scope);
    else fail(call.call_span, std::string(params.callee) + " is missing its argument `" + p.name + "`");
  }
  return out;
}

}  // namespace nn::frontend
