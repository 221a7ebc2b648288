// Parsing of built-in parameter lists and installation of every family.
#include <cstdlib>
#include <limits>
#include <sstream>

#include "backend/dtype.h"
#include "frontend/builtins/builtins.h"
#include "frontend/interpreter.h"
#include "ir/tracer.h"

namespace nn::frontend {
namespace builtins {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

Value parse_default(const std::string& text) {
  if (text == "none") return Value();
  if (text == "true") return Value(true);
  if (text == "false") return Value(false);
  backend::DType d;
  if (backend::parse_dtype(text, d)) return Value(d);
  if (text.size() >= 2 && text.front() == '"') return Value(text.substr(1, text.size() - 2));
  if (text.find_first_of(".e") != std::string::npos) return Value(std::strtod(text.c_str(), nullptr));
  return Value(int64_t(std::strtoll(text.c_str(), nullptr, 10)));
}

}  // namespace

Builtin& def(Interpreter& vm, const std::string& name, const std::string& params, std::function<Value(Args&)> fn) {
  auto b = std::make_shared<Builtin>();
  b->name = name;
  b->fn = std::move(fn);
  std::stringstream ss(params);
  for (std::string part; std::getline(ss, part, ',');) {
    part = trim(part);
    if (part.empty()) continue;
    if (part[0] == '*') {
      b->variadic = true;
      continue;
    }
    Parameter p;
    size_t eq = part.find('=');
    p.name = trim(part.substr(0, eq));
    if (eq != std::string::npos) p.default_value = parse_default(trim(part.substr(eq + 1)));
    b->params.push_back(std::move(p));
  }
  Builtin& entry = *b;
  vm.define_builtin(std::move(b));
  return entry;
}

Value list_of(const std::vector<backend::Tensor>& ts) {
  std::vector<Value> items;
  for (const backend::Tensor& t : ts) items.emplace_back(t);
  return Value(make_list(std::move(items)));
}

void refuse_in_graph(Args& a, const char* name) {
  if (ir::Tracer::active())
    fail(a.call_span(), std::string(name) +
                            " cannot run inside a compiled graph (it would act only while the graph is "
                            "traced); call it outside the graph function");
}

}  // namespace builtins

void Interpreter::install_builtins() {
  builtins::install_creation(*this);
  builtins::install_shape(*this);
  builtins::install_math(*this);
  builtins::install_sequence(*this);
  builtins::install_host(*this);
  builtins::install_autodiff(*this);
  builtins::install_neural(*this);
  builtins::install_data(*this);
  builtins::install_files(*this);
  builtins::install_training_state(*this);
  builtins::install_rates(*this);
  builtins::install_precision(*this);
  builtins::install_text(*this);
  builtins::install_distributed(*this);
  builtins::install_graphs(*this);
  builtins::install_onnx(*this);
  using backend::DType;
  for (DType d : {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean, DType::f16, DType::bf16})
    prelude_->define(intern(backend::dtype_name(d)), Value(d));
  // The float constants a PyTorch user reaches for (math.inf, math.nan, math.pi).
  prelude_->define(intern("inf"), Value(std::numeric_limits<double>::infinity()));
  prelude_->define(intern("nan"), Value(std::numeric_limits<double>::quiet_NaN()));
  prelude_->define(intern("pi"), Value(3.141592653589793));
  auto args = make_list();
  for (auto& a : opts_.args) args->items.push_back(Value(a));
  prelude_->define(intern("args"), Value(args));
}

}  // namespace nn::frontend
