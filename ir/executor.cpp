// The executor (ir/executor.h): one pass over the plan's steps.
#include "ir/executor.h"

#include <optional>

#include "backend/comm/communicator.h"
#include "backend/dispatch.h"
#include "backend/interrupt.h"
#include "backend/profiler.h"
#include "backend/scratch.h"
#include "ir/fused_node.h"

namespace nn::ir {
namespace {

backend::Tensor fresh(const backend::TensorType& t) {
  backend::Tensor x = backend::Tensor::empty(t.shape, t.dtype, t.device);
  if (t.weak) x.set_weak(true);
  return x;
}

// The tensor a non-intermediate value stands for in this run.
const backend::Tensor& bound(const Graph& g, std::span<const backend::Tensor> args, std::vector<uint32_t>& arg_of,
                             ValueId v) {
  const Value& val = g.values[v];
  return val.role == Role::input ? args[arg_of[v]] : val.captured;
}

const char* category(Phase p) { return phase_name(p); }

// An arena holding an all-reduce's bucket, in the communicator's shared
// memory where it has room (peers then reduce the bucket in place, sparing
// two copies of it); null otherwise.
backend::BlockPtr shared_arena(const DeviceArena& a) {
  backend::comm::Communicator* comm = backend::comm::communicator_if_started();
  if (!a.holds_bucket || !comm || !a.bytes || a.device->type() != backend::DeviceType::cpu) return {};
  void* memory = comm->take_shared(a.bytes);
  if (!memory) return {};
  struct GiveBack : backend::MemoryOwner {
    GiveBack(backend::comm::Communicator* c, void* m) : comm(c), memory(m) {}
    ~GiveBack() override { comm->give_back_shared(memory); }
    backend::comm::Communicator* comm;
    void* memory;
  };
  return backend::make_ref<backend::Block>(a.device, memory, a.bytes,
                                           backend::Ref<backend::MemoryOwner>(new GiveBack(comm, memory)));
}

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

  // This run's arenas: memory only once a kernel first writes into one.
  const MemoryPlan& mp = p.memory_plan;
  std::vector<backend::BlockPtr> arenas;
  if (p.memory == MemoryMode::arena)
    for (const DeviceArena& a : mp.arenas) {
      if (backend::BlockPtr shared = shared_arena(a)) {
        arenas.push_back(std::move(shared));
        continue;
      }
      arenas.push_back(backend::make_ref<backend::Block>(a.device, a.bytes));
      arenas.back()->set_exact();  // asked for at this size on every run: no size class
    }
  // The arena of a device, or -1.
  auto arena_on = [&](backend::Device* d) {
    for (size_t a = 0; a < arenas.size(); ++a)
      if (mp.arenas[a].device == d) return int(a);
    return -1;
  };
  // New memory for value v: its place in the arena, or a block of its own.
  auto memory_for = [&](ValueId v, const backend::TensorType& t) {
    const uint32_t b = mp.buffers.of_value[v];
    if (arenas.empty() || mp.arena_of[b] == kNone) return fresh(t);
    backend::Tensor x = backend::Tensor::in_block(arenas[mp.arena_of[b]], mp.offset[b], t.shape, t.dtype);
    if (t.weak) x.set_weak(true);
    return x;
  };

  backend::Profiler* prof = backend::Profiler::active();
  backend::comm::Communicator* comm = backend::comm::communicator_if_started();
  std::vector<backend::Tensor> in, out;
  const backend::InterruptCheck interrupted;  // read once, checked per node
  for (size_t step = 0; step < p.order.size(); ++step) {
    const NodeId id = p.order[step];
    const Node& n = g.nodes[id];
    if (interrupted() && backend::take_interrupt()) throw RunError("interrupted", n.loc, id);
    const int64_t t0 = prof ? backend::Profiler::now_ns() : 0;
    in.clear();
    for (ValueId v : n.inputs) in.push_back(slots[v]);
    out.clear();
    try {
      if (!n.op) {
        n.host()->fn(in);
      } else if (n.op->view) {
        size_t at = 0;
        for (ValueId o : n.outputs) {
          const backend::TensorType& t = g.values[o].type;
          out.push_back(in[0].view(t.shape, at));
          if (t.weak) out.back().set_weak(true);
          at += t.nbytes();
        }
        if (n.op->waits) backend::run_kernel(*n.op, in, out, n.attrs);
      } else {
        const bool stateful = n.op->effect == backend::Effect::stateful;
        for (size_t i = 0; i < n.outputs.size(); ++i) {
          const backend::TensorType& t = g.values[n.outputs[i]].type;
          const int k = n.overwritten_input(i);
          if (k >= 0) {
            out.push_back(in[size_t(k)].view(t.shape));  // the input dies here: its memory is the output's
            if (t.weak) out.back().set_weak(true);
          } else {
            out.push_back(memory_for(n.outputs[i], t));
            // A stateful kernel writes into its first input; the old value
            // has other readers, so it writes into a copy.
            if (i == 0 && stateful) in[0].device()->copy(out[0].raw_data(), in[0].raw_data(), in[0].nbytes());
          }
        }
        if (stateful) in[0] = out[0];
        for (auto& t : out) t.raw_data();  // memory now, so that running out names the op
        backend::Device* dev = out.empty() ? in[0].device() : out[0].device();
        // The kernel's temporaries in the part of the arena this step leaves free.
        std::optional<backend::ScratchScope> scratch;
        if (const int a = arena_on(dev); a >= 0) {
          const auto [offset, bytes] = mp.scratch[step * arenas.size() + size_t(a)];
          if (bytes) scratch.emplace(arenas[size_t(a)], offset, bytes);
        }
        backend::run_kernel(*n.op, in, out, n.attrs);
        if (prof) dev->synchronize();  // the kernel's time on a GPU, not its launch's
      }
    } catch (const RunError&) {
      throw;
    } catch (const backend::Error& e) {
      // A kernel's message names its op already ("take: id 5 is out of
      // range", or the name a composite gave it: "index_select: ...",
      // "index 7 is out of range"); the others get the node's name.
      const std::string what = e.what(), named = n.attrs.get_or<std::string>("name", n.name());
      auto names = [&what](const std::string& s) { return what.starts_with(s + ": ") || what.starts_with(s + " "); };
      throw RunError(names(named) || names(n.name()) ? what : node_name_for_messages(n) + ": " + what, n.loc, id);
    }
    // Collectives on their way advance between kernels (SPEC §14).
    if (comm && comm->has_pending()) comm->progress();
    for (size_t i = 0; i < out.size(); ++i) slots[n.outputs[i]] = std::move(out[i]);
    for (ValueId v : p.dies_after(step)) slots[v] = backend::Tensor();
    if (prof) prof->record(n.name(), category(n.phase), t0, backend::Profiler::now_ns());
  }

  // The last kernel may have stopped early for Ctrl-C.
  if (backend::take_interrupt()) throw RunError("interrupted", g.nodes.empty() ? Loc{} : g.nodes[p.order.back()].loc, kNone);
  for (const StateUpdate& u : g.updates) {
    backend::Tensor& dst = slots[u.state];
    const backend::Tensor& src = slots[u.value];
    dst.block()->note_write();  // autodiff's tape may hold the old value (SPEC §17)
    // Written there in place already (an optimizer's chain in the state).
    if (dst.block() == src.block() && dst.offset() == src.offset()) continue;
    dst.device()->copy(dst.raw_data(), src.raw_data(), dst.nbytes());
  }
  std::vector<backend::Tensor> result;
  result.reserve(g.outputs.size());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const ValueId h = i < g.output_holders.size() ? g.output_holders[i] : kNone;
    const backend::TensorType& t = g.values[g.outputs[i]].type;
    if (h != kNone) {
      result.push_back(slots[h].shape() == t.shape ? slots[h] : slots[h].view(t.shape, 0));
    } else if (p.copy_output[i]) {
      const backend::Tensor& src = slots[g.outputs[i]];
      backend::Tensor copy = fresh(t);
      copy.device()->copy(copy.raw_data(), src.raw_data(), copy.nbytes());
      result.push_back(std::move(copy));
    } else {
      result.push_back(slots[g.outputs[i]]);
    }
  }
  return result;
}

}  // namespace nn::ir
