// --check-graph (SPEC §6): each graph call runs the compiled graph, then the
// same code eagerly on the same state and random draws, and the first output
// or state that differs beyond tolerance is an error at the call.
#include <cmath>
#include <unordered_set>

#include "backend/ops.h"
#include "frontend/graph_cache.h"
#include "frontend/host_data.h"
#include "frontend/interpreter.h"
#include "frontend/tensor_walk.h"

namespace nn::frontend {
namespace {

constexpr double kRelTol = 1e-4, kAbsTol = 1e-6;

backend::Tensor copy_of(const backend::Tensor& t) {
  backend::Tensor c = backend::Tensor::empty(t.shape(), t.dtype(), t.device());
  t.device()->copy(c.raw_data(), t.raw_data(), t.nbytes());
  return c;
}

// "" when a and b agree within tolerance, else where and how they differ.
std::string difference(const backend::Tensor& a, const backend::Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    return "graph gives " + a.type().str() + ", eager code " + b.type().str();
  backend::Tensor x = on_host(backend::astype(a, backend::DType::f64));
  backend::Tensor y = on_host(backend::astype(b, backend::DType::f64));
  const double *p = x.data<double>(), *q = y.data<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    bool same = p[i] == q[i] || (std::isnan(p[i]) && std::isnan(q[i])) ||
                std::abs(p[i] - q[i]) <= kAbsTol + kRelTol * std::abs(q[i]);
    if (same) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "at flat index %lld: graph %.9g, eager code %.9g", static_cast<long long>(i), p[i], q[i]);
    return buf;
  }
  return {};
}

// How a difference names graph output i: the variable a graph block
// assigns, or where it sits in a graph function's return value.
std::string output_name(const CompiledGraph& cg, size_t i) {
  if (i < cg.assigns.size()) return "output `" + symbol_name(cg.assigns[i]) + "`";
  std::string where;
  std::unordered_set<const backend::TensorImpl*> seen;
  TensorVisitor visit;
  visit.tensor = [&](const backend::Tensor& t, const ValuePath& path) {
    if (!seen.insert(t.impl()).second || seen.size() != i + 1) return Walk::go_on;
    where = path.str();
    return Walk::stop;
  };
  for_each_tensor(cg.result, "", Reach::sequences_and_records, visit);
  return where.empty() ? "the return value" : "`" + where + "` of the return value";
}

}  // namespace

std::vector<backend::Tensor> Interpreter::check_against_eager(CompiledGraph& cg, std::span<const backend::Tensor> inputs,
                                                              const std::function<std::vector<backend::Tensor>()>& eager,
                                                              Span span) {
  const ir::Graph& g = cg.graph;
  // The tensors the graph writes into, and their contents before.
  std::vector<backend::Tensor> states, before;
  for (const ir::StateUpdate& u : g.updates) {
    const ir::Value& v = g.values[u.state];
    backend::Tensor t = v.captured;
    if (v.role == ir::Role::input)
      for (size_t i = 0; i < g.inputs.size(); ++i)
        if (g.inputs[i] == u.state) t = inputs[i];
    states.push_back(t);
    before.push_back(copy_of(t));
  }
  const backend::RngState rng = backend::rng_state();
  std::vector<backend::Tensor> outs = run_compiled(cg, inputs, span);
  // Every copy before any restore: two states may be one memory (q = reshape(p)).
  std::vector<backend::Tensor> after;
  for (const backend::Tensor& t : states) after.push_back(copy_of(t));
  for (size_t i = 0; i < states.size(); ++i)
    states[i].device()->copy(states[i].raw_data(), before[i].raw_data(), states[i].nbytes());
  backend::set_rng_state(rng);

  std::vector<backend::Tensor> ref = eager();
  auto report = [&](const std::string& what, const std::string& diff) {
    fail(span, "--check-graph: " + what + " of graph " + g.name + " differs from eager code: " + diff +
                   " (tolerance: relative 1e-4, absolute 1e-6)");
  };
  if (ref.size() != outs.size())
    report("the number of outputs", std::to_string(outs.size()) + " against " + std::to_string(ref.size()));
  for (size_t i = 0; i < outs.size(); ++i)
    if (std::string d = difference(outs[i], ref[i]); !d.empty()) report(output_name(cg, i), d);
  // A state by the script's name for it (`m.w`, `opt.m[0]`); the IR's when
  // no variable of the main module holds it.
  for (size_t i = 0; i < states.size(); ++i)
    if (std::string d = difference(after[i], states[i]); !d.empty()) {
      std::string name = user_name(states[i]);
      report("the update of " +
                 (name.empty() ? std::string(ir::role_name(g.values[g.updates[i].state].role)) + " %" +
                                     std::to_string(g.updates[i].state)
                               : "`" + name + "`") +
                 " (" + states[i].type().str() + ")",
             d);
    }
  return outs;
}

}  // namespace nn::frontend
