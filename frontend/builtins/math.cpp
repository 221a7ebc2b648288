// Built-ins for elementwise math, reductions and linear algebra.
#include <cmath>

#include <fmt/format.h>

#include "backend/ops.h"
#include "backend/ops/elementwise_params.h"
#include "frontend/builtins/builtins.h"
#include "frontend/host_data.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {
using backend::Tensor;

// The built-in of an elementwise op: its operands (x, or a and b), then its
// attribute with the table's default.
void def_elementwise(Interpreter& vm, backend::OpId id) {
  const backend::OpDef& d = backend::op(id);
  const size_t n = size_t(d.num_inputs);
  std::string params = n == 1 ? "x" : "a, b";
  for (const backend::AttrSpec& s : d.attrs) {
    const bool* b = std::get_if<bool>(&s.fallback);
    const std::string fallback = b ? (*b ? "true" : "false") : fmt::format("{}", std::get<double>(s.fallback));
    params += fmt::format(", {}={}", s.name, fallback);
  }
  def(vm, d.name, params, [&d, n](Args& a) {
    std::vector<Tensor> in;
    for (size_t i = 0; i < n; ++i) in.push_back(a.tensor(i));
    backend::Attrs attrs;
    if (!d.attrs.empty()) {
      const backend::AttrSpec& s = d.attrs[0];
      backend::AttrValue v = std::holds_alternative<bool>(s.fallback) ? backend::AttrValue(a.boolean(n))
                                                                       : backend::AttrValue(a.number(n));
      attrs = backend::call_attrs(d, std::move(v));
    }
    return Value(backend::call(d, in, attrs));
  });
}

std::optional<int64_t> one_axis(Args& a, size_t i) {
  if (a[i].is_none()) return std::nullopt;
  return a.integer(i);
}
}  // namespace

void install_math(Interpreter& vm) {
  // Every line of the elementwise tables (backend/ops/elementwise_ops.h)
  // marked a built-in: unary ops all, binary ops where the table says so.
  // An attribute is a parameter with the table's default.
#define NN_UNARY_BUILTIN(id, ...) def_elementwise(vm, backend::OpId::id);
  NN_UNARY_OPS(NN_UNARY_BUILTIN)
#undef NN_UNARY_BUILTIN
#define NN_BINARY_BUILTIN(id, F, kind, commutative, builtin, ...) \
  if (builtin) def_elementwise(vm, backend::OpId::id);
  NN_BINARY_OPS(NN_BINARY_BUILTIN)
#undef NN_BINARY_BUILTIN

  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, Binary> binary[] = {
      {"matmul", backend::matmul}, {"dot", backend::dot}, {"outer", backend::outer},
  };
  for (auto [name, fn] : binary)
    def(vm, name, "a, b", [fn](Args& a) { return Value(fn(a.tensor(0), a.tensor(1))); });
  def(vm, "where", "c, a, b", [](Args& a) {
    return Value(backend::where(a.tensor(0), a.tensor(1), a.tensor(2)));
  });
  // A bound given as none is open, as NumPy's clip(x, None, 3): the
  // dtype's own end (-inf, an integer dtype's least value, false), so that
  // x keeps its dtype and clamp's gradient.
  def(vm, "clip", "x, lo=none, hi=none", [](Args& a) {
    if (a[1].is_none() && a[2].is_none()) a.fail(1, "clip needs a bound: lo, hi or both");
    const Tensor x = a.tensor(0);
    auto bound = [&](size_t i, bool low) {
      if (!a[i].is_none()) return a.tensor(i);
      if (x.dtype() == backend::DType::boolean) return backend::scalar_int(low ? 0 : 1, x.dtype(), /*weak=*/true);
      if (backend::is_integral(x.dtype()))
        return backend::scalar_int(low ? int_min_of(x.dtype()) : int_max_of(x.dtype()), x.dtype(), /*weak=*/true);
      return backend::scalar(low ? -INFINITY : INFINITY, x.dtype(), /*weak=*/true);
    };
    return Value(backend::clip(x, bound(1, true), bound(2, false)));
  });

  using Reduce = Tensor (*)(const Tensor&, const backend::Axes&, bool);
  // The reduction table's lines (backend/ops/reduction_ops.h), then the
  // composites that take the same arguments.
  const std::pair<const char*, Reduce> reductions[] = {
#define NN_REDUCTION_BUILTIN(id, ...) {#id, backend::id},
      NN_REDUCTION_OPS(NN_REDUCTION_BUILTIN)
#undef NN_REDUCTION_BUILTIN
      {"mean", backend::mean}, {"logsumexp", backend::logsumexp}, {"norm", backend::norm},
      {"all", backend::all},   {"any", backend::any},
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
