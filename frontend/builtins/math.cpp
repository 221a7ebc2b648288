// Built-ins for elementwise math, reductions and linear algebra.
#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {
using backend::Tensor;

std::optional<int64_t> one_axis(Args& a, size_t i) {
  if (a[i].is_none()) return std::nullopt;
  return a.integer(i);
}
}  // namespace

void install_math(Interpreter& vm) {
  using Unary = Tensor (*)(const Tensor&);
  const std::pair<const char*, Unary> unary[] = {
      {"neg", backend::neg},     {"abs", backend::abs},       {"exp", backend::exp},
      {"log", backend::log},     {"sqrt", backend::sqrt},     {"rsqrt", backend::rsqrt},
      {"sin", backend::sin},     {"cos", backend::cos},       {"tanh", backend::tanh},
      {"sigmoid", backend::sigmoid}, {"relu", backend::relu}, {"softplus", backend::softplus},
      {"sign", backend::sign},   {"floor", backend::floor},   {"ceil", backend::ceil},
      {"round", backend::round}, {"logical_not", backend::logical_not}, {"isnan", backend::isnan},
  };
  for (auto [name, fn] : unary) def(vm, name, "x", [fn](Args& a) { return Value(fn(a.tensor(0))); });
  def(vm, "leaky_relu", "x, slope=0.01", [](Args& a) {
    return Value(backend::leaky_relu(a.tensor(0), a.number(1)));
  });
  def(vm, "gelu", "x, approximate=false", [](Args& a) {
    return Value(backend::gelu(a.tensor(0), a.boolean(1)));
  });

  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, Binary> binary[] = {
      {"maximum", backend::maximum}, {"minimum", backend::minimum},
      {"logical_and", backend::logical_and}, {"logical_or", backend::logical_or},
      {"matmul", backend::matmul}, {"dot", backend::dot}, {"outer", backend::outer},
  };
  for (auto [name, fn] : binary)
    def(vm, name, "a, b", [fn](Args& a) { return Value(fn(a.tensor(0), a.tensor(1))); });
  def(vm, "where", "c, a, b", [](Args& a) {
    return Value(backend::where(a.tensor(0), a.tensor(1), a.tensor(2)));
  });
  def(vm, "clip", "x, lo, hi", [](Args& a) {
    return Value(backend::clip(a.tensor(0), a.tensor(1), a.tensor(2)));
  });

  using Reduce = Tensor (*)(const Tensor&, const backend::Axes&, bool);
  const std::pair<const char*, Reduce> reductions[] = {
      {"sum", backend::sum},   {"mean", backend::mean}, {"max", backend::max},
      {"min", backend::min},   {"prod", backend::prod}, {"logsumexp", backend::logsumexp},
      {"norm", backend::norm},
  };
  for (auto [name, fn] : reductions)
    def(vm, name, "x, axis=none, keepdims=false",
        [fn](Args& a) { return Value(fn(a.tensor(0), a.axes(1), a.boolean(2))); });
  def(vm, "var", "x, axis=none, keepdims=false, correction=0", [](Args& a) {
    return Value(backend::var(a.tensor(0), a.axes(1), a.boolean(2), a.integer(3)));
  });
  def(vm, "std", "x, axis=none, keepdims=false, correction=0", [](Args& a) {
    return Value(backend::std(a.tensor(0), a.axes(1), a.boolean(2), a.integer(3)));
  });
  def(vm, "argmax", "x, axis=none, keepdims=false", [](Args& a) {
    return Value(backend::argmax(a.tensor(0), one_axis(a, 1), a.boolean(2)));
  });
  def(vm, "argmin", "x, axis=none, keepdims=false", [](Args& a) {
    return Value(backend::argmin(a.tensor(0), one_axis(a, 1), a.boolean(2)));
  });
}

}  // namespace nn::frontend::builtins
