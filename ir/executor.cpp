// The executor (ir/executor.h): one pass over the plan's steps.
#include "ir/executor.h"

#include "backend/dispatch.h"
#include "backend/interrupt.h"
#include "backend/profiler.h"

namespace nn::ir {
namespace {

backend::Tensor fresh(const backend::TensorType& t) {
  backend::Tensor x = backend::Tensor::empty(t.shape, t.dtype, t.device);
  if (t.weak) x.set_weak(true);
  return x;
}

// x's contents in new memory of its own.
backend::Tensor clone(const backend::Tensor& x, const backend::TensorType& t) {
  backend::Tensor c = fresh(t);
  x.device()->copy(c.raw_data(), x.raw_data(), x.nbytes());
  return c;
}

// The tensor a non-intermediate value stands for in this run.
const backend::Tensor& bound(const Graph& g, std::span<const backend::Tensor> args, std::vector<uint32_t>& arg_of,
                             ValueId v) {
  const Value& val = g.values[v];
  return val.role == Role::input ? args[arg_of[v]] : val.captured;
}

const char* category(Phase p) { return phase_name(p); }

}  // namespace

std::vector<backend::Tensor> run(const Graph& g, const Plan& p, std::span<const backend::Tensor> args) {
  if (args.size() != g.inputs.size())
    throw backend::Error("internal: graph " + g.name + " takes " + std::to_string(g.inputs.size()) +
                         " inputs, got " + std::to_string(args.size()));
  std::vector<uint32_t> arg_of(g.values.size(), 0);
  for (uint32_t i = 0; i < g.inputs.size(); ++i) arg_of[g.inputs[i]] = i;
  std::vector<backend::Tensor> slots(g.values.size());
  for (ValueId v = 0; v < g.values.size(); ++v)
    if (g.values[v].role != Role::intermediate) slots[v] = bound(g, args, arg_of, v);

  backend::Profiler* prof = backend::Profiler::active();
  std::vector<backend::Tensor> in, out;
  for (size_t step = 0; step < p.order.size(); ++step) {
    const NodeId id = p.order[step];
    const Node& n = g.nodes[id];
    if (backend::take_interrupt()) throw RunError("interrupted", n.loc, id);
    const int64_t t0 = prof ? backend::Profiler::now_ns() : 0;
    in.clear();
    for (ValueId v : n.inputs) in.push_back(slots[v]);
    out.clear();
    try {
      if (!n.op) {
        n.host(in);
      } else if (n.op->view) {
        const backend::TensorType& t = g.values[n.outputs[0]].type;
        out.push_back(in[0].view(t.shape));
        if (t.weak) out.back().set_weak(true);
      } else {
        const int reuse = p.reuse_input[step];
        const ValueId home = p.write_into[step];
        for (size_t i = 0; i < n.outputs.size(); ++i) {
          const backend::TensorType& t = g.values[n.outputs[i]].type;
          if (i == 0 && home != kNone) {
            out.push_back(slots[home]);
          } else if (i == 0 && reuse >= 0 && in[size_t(reuse)].block()->use_count() == 1) {
            out.push_back(in[size_t(reuse)].view(t.shape));
          } else if (i == 0 && n.op->effect == backend::Effect::stateful) {
            out.push_back(clone(in[0], t));  // writes into a copy: the old value has other readers
          } else {
            out.push_back(fresh(t));
          }
        }
        // A stateful kernel writes into its first input: give it the output.
        if (n.op->effect == backend::Effect::stateful) in[0] = out[0];
        for (auto& t : out) t.raw_data();  // memory now, so that running out names the op
        backend::kernel_for(*n.op, in, out)(in, out, n.attrs);
      }
    } catch (const RunError&) {
      throw;
    } catch (const backend::Error& e) {
      throw RunError(n.name() + ": " + e.what(), n.loc, id);
    }
    for (size_t i = 0; i < out.size(); ++i) slots[n.outputs[i]] = std::move(out[i]);
    for (ValueId v : p.dies_after[step]) slots[v] = backend::Tensor();
    if (prof) prof->record(n.name(), category(n.phase), t0, backend::Profiler::now_ns());
  }

  // The last kernel may have stopped early for Ctrl-C.
  if (backend::take_interrupt()) throw RunError("interrupted", g.nodes.empty() ? Loc{} : g.nodes[p.order.back()].loc, kNone);
  for (const StateUpdate& u : g.updates) {
    backend::Tensor& dst = slots[u.state];
    const backend::Tensor& src = slots[u.value];
    // Written there in place already (Plan::write_into).
    if (dst.block() == src.block() && dst.offset() == src.offset()) continue;
    dst.device()->copy(dst.raw_data(), src.raw_data(), dst.nbytes());
  }
  std::vector<backend::Tensor> result;
  result.reserve(g.outputs.size());
  for (ValueId v : g.outputs) result.push_back(slots[v]);
  return result;
}

}  // namespace nn::ir
