// Fusibility of a node and the fused node of a group (ir/fused_node.h).
#include "ir/fused_node.h"

#include <bit>
#include <utility>
#include <vector>

#include "backend/cuda_backend.h"
#include "backend/ops/fused_program.h"
#include "backend/ops/type_rules.h"
#include "ir/hash_mix.h"

namespace nn::ir {

using backend::DType;

bool fusion_immediate(const Value& v) {
  return v.role == Role::constant && v.type.weak && v.captured.defined() && v.type.shape.numel() == 1;
}

bool fused_kernels_on(const backend::Device* d) {
  return on_cpu(d) || (d->type() == backend::DeviceType::cuda && backend::gpu_fusion());
}

uint8_t fusible_dtypes(const Graph& g, const Node& n) {
  if (!n.op || !n.op->tile.any() || n.op->effect != backend::Effect::pure || n.outputs.size() != 1) return 0;
  const backend::TensorType& out = g.values[n.outputs[0]].type;
  if (out.weak || !fused_kernels_on(out.device)) return 0;
  // On a GPU, f16 and bf16 join f32 programs: the kernel widens their
  // loads exactly and rounds each 16-bit step's result as the lone op
  // stores it (cuda/fused_source.cpp). The CPU's tile evaluator has no
  // 16-bit steps.
  const bool gpu = !on_cpu(out.device);
  auto dtype_mask = [gpu](DType t) -> uint8_t {
    if (t == DType::f32 || (gpu && (t == DType::f16 || t == DType::bf16))) return kFuseF32;
    if (t == DType::f64) return kFuseF64;
    if (t == DType::boolean) return kFuseF32 | kFuseF64;
    return 0;
  };
  uint8_t m = dtype_mask(out.dtype);
  if (!n.op->tile.f32) m &= uint8_t(~kFuseF32);
  if (!n.op->tile.f64) m &= uint8_t(~kFuseF64);
  for (ValueId v : n.inputs) {
    const Value& val = g.values[v];
    if (fusion_immediate(val)) continue;
    if (!same_device(val.type.device, out.device)) return 0;
    const uint8_t d = dtype_mask(val.type.dtype);
    if (!d) return 0;
    m &= d;
  }
  if (out.dtype == DType::boolean) {
    const uint8_t d = dtype_mask(backend::promote_types(g.types_of(n.inputs)).dtype);
    if (!d) return 0;
    m &= d;
  }
  return m;
}

namespace {
// A group's members lie far apart in a long graph (a gradient summed over
// the time steps): each member's node and values would cost a trip to
// memory in turn. Fetched a few members ahead instead: the node first, its
// values once the node is there.
void prefetch_member(const Graph& g, std::span<const NodeId> members, size_t k) {
  constexpr size_t kAhead = 8;
  if (k + kAhead < members.size()) __builtin_prefetch(&g.nodes[members[k + kAhead]]);
  if (k + kAhead / 2 < members.size()) {
    const Node& n = g.nodes[members[k + kAhead / 2]];
    for (ValueId v : n.inputs) __builtin_prefetch(&g.values[v]);
    __builtin_prefetch(&g.values[n.outputs[0]]);
  }
}
using Kind = backend::FusedProgram::Arg::Kind;

// Where the program finds a value the members touch, and how often members
// read it.
struct Slot {
  Kind kind;
  uint32_t index;
  uint32_t reads = 0;
};

// What make_fused_node keeps between its calls, per thread, so that a pass
// making thousands of fused nodes allocates none of it per node; each call
// starts by clearing what the one before used.
struct FusionScratch {
  std::vector<Slot> slots;
  std::vector<uint32_t> slot_of;  // per value id: its slot + 1, or 0
  std::vector<ValueId> touched;   // the values whose slot_of is set
  // Recomputed steps by a hash of (op, operands): an open-addressing table
  // of (hash, step + 1), laid out by the call that first needs it.
  std::vector<std::pair<uint64_t, uint32_t>> earlier;

  void begin(size_t values) {
    for (ValueId v : touched) slot_of[v] = 0;
    touched.clear();
    slots.clear();
    if (slot_of.size() < values) slot_of.resize(values, 0);
  }
};

FusionScratch& fusion_scratch() {
  static thread_local FusionScratch s;
  return s;
}

}  // namespace

Node make_fused_node(const Graph& g, std::span<const NodeId> members, DType compute, const Uses& uses) {
  auto prog = std::make_shared<backend::FusedProgram>();
  prog->compute = compute;
  const Node& head = g.nodes[members[0]];
  prog->shape = g.values[head.outputs[0]].type.shape;
  Node node;
  node.op = &backend::op(OpId::fused);
  node.loc = head.loc;
  node.scope = head.scope;
  node.phase = head.phase;
  FusionScratch& scratch = fusion_scratch();
  scratch.begin(g.values.size());
  auto slot = [&](ValueId v, Slot fresh_slot, bool& fresh) -> Slot& {
    fresh = scratch.slot_of[v] == 0;
    if (fresh) {
      scratch.slots.push_back(fresh_slot);
      scratch.touched.push_back(v);
      scratch.slot_of[v] = uint32_t(scratch.slots.size());
    }
    return scratch.slots[scratch.slot_of[v] - 1];
  };
  prog->steps.reserve(members.size());
  std::vector<std::pair<uint64_t, uint32_t>>& earlier = scratch.earlier;
  const size_t slots_mask = std::bit_ceil(members.size() * 2) - 1;
  bool earlier_ready = false;
  std::vector<Part> parts;
  parts.reserve(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    prefetch_member(g, members, k);
    const Node& src = g.nodes[members[k]];
    backend::FusedProgram::Step st{src.op, src.attrs, {}, g.values[src.outputs[0]].type.dtype};
    for (ValueId v : src.inputs) {
      bool fresh;
      Slot& sl = slot(v, Slot{Kind::input, 0}, fresh);
      if (fresh) {
        if (fusion_immediate(g.values[v])) {
          sl = {Kind::immediate, uint32_t(prog->immediates.size())};
          prog->immediates.push_back(g.values[v].captured.item_double());
        } else {
          sl.index = uint32_t(node.inputs.size());
          node.inputs.push_back(v);
        }
      }
      ++sl.reads;
      st.args.push_back({sl.kind, sl.index});
    }
    bool fresh;
    Slot& out = slot(src.outputs[0], Slot{Kind::step, 0}, fresh);
    node.recomputed |= src.recomputed;
    // A recomputed step equal to an earlier recomputed one (op, attributes,
    // operands) is that step: the recompute pass makes a forward value again
    // for each backward reader (an LSTM cell's backward made tanh(c) twice).
    // Found by a hash of (op, operands); a collision only misses a twin.
    if (src.recomputed) {
      uint64_t h = std::hash<const void*>()(st.op);
      for (const auto& a : st.args) h = (h * 0x100000001b3ull) ^ (uint64_t(a.kind) << 32 | a.index);
      if (!earlier_ready) earlier.assign(slots_mask + 1, {0, 0}), earlier_ready = true;
      size_t at = mix_hash(h) & slots_mask;
      while (earlier[at].second && earlier[at].first != h) at = (at + 1) & slots_mask;
      const uint32_t twin = earlier[at].second;  // its step + 1, or 0
      const backend::FusedProgram::Step* o = twin ? &prog->steps[twin - 1] : nullptr;
      if (!twin) earlier[at] = {h, uint32_t(prog->steps.size() + 1)};
      if (o && o->op == st.op && o->args == st.args && o->dtype == st.dtype && o->attrs.items() == st.attrs.items()) {
        out = {Kind::step, twin - 1};
        continue;
      }
    }
    out = {Kind::step, uint32_t(prog->steps.size())};
    prog->steps.push_back(std::move(st));
    parts.push_back({src.loc, src.scope, src.phase});
  }
  for (NodeId m : members) {
    const ValueId v = g.nodes[m].outputs[0];
    const Slot& sl = scratch.slots[scratch.slot_of[v] - 1];
    if (uses.kept[v] || uses.readers[v] > sl.reads) {
      prog->outputs.push_back(sl.index);
      node.outputs.push_back(v);
    }
  }
  prog->num_inputs = uint32_t(node.inputs.size());
  node.set_parts(std::move(parts));
  node.attrs.set("program", backend::ProgramPtr(std::move(prog)));
  return node;
}

std::string node_name_for_messages(const Node& n) {
  if (!n.attrs.has("program")) return n.name();
  const backend::FusedProgram& p = backend::program_of(n.attrs);
  std::string names = n.op && n.op->id == OpId::matmul_epilogue ? "matmul" : "";
  constexpr size_t kShown = 6;
  for (size_t s = 0; s < p.steps.size() && s < kShown; ++s)
    names += (names.empty() ? "" : ", ") + (p.steps[s].op ? p.steps[s].op->name : std::string("?"));
  if (p.steps.size() > kShown) names += ", ...";
  return names + " (fused)";
}

}  // namespace nn::ir
