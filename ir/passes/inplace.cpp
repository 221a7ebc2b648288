// Pass `inplace`: an output written over an input that dies at its node
// (ggml-alloc's reuse of a dying parent, Owl's in-place ops), recorded in
// Node::overwrites for the schedules and the memory plan.
//
//   %5 = exp %4        (%4 read for the last time)   %5 is written over %4
//   %6 = add %5, %3    (%5 read for the last time)   %6 is written over %5
//
// Which output may take which input: an elementwise op any output into any
// input of exactly its dtype and shape (its kernels read element i of every
// input before writing element i of any output), and so an op with
// overwritable_from into those inputs (matmul_epilogue: its program's
// operands, never the matrices); another op output 0 into
// the input its registry entry names (inplace_input); a stateful op output 0
// into input 0, the tensor it writes. The input must die at this node: the
// node is the last, in trace order, to read it or any view of it (the
// schedules keep it last, ir/schedule.h), and reads that memory once. Never
// overwritten: a value the host keeps (an output, a state's new value) or
// that a kept value is a view of, an input, a constant; a param or state only
// when the graph updates it, read here for the last time (an optimizer's
// chain then runs in the state's own memory), and only by a value that is
// not kept or is that state's new value.
#include <algorithm>

#include "ir/buffers.h"
#include "ir/pass.h"

namespace nn::ir {
namespace {

bool same_bytes(const backend::TensorType& a, const backend::TensorType& b) {
  return a.dtype == b.dtype && a.shape.numel() == b.shape.numel() && a.device == b.device;
}

class Inplace : public Pass {
 public:
  const char* name() const override { return "inplace"; }

  size_t run(Graph& g) override {
    const size_t nv = g.values.size();
    root_ = view_roots(g);
    // The last node (trace order) reading each view class, and how many of
    // its inputs are in that class.
    last_.assign(nv, kNone);
    reads_.assign(nv, 0);
    for (NodeId i = 0; i < g.nodes.size(); ++i)
      for (ValueId v : g.nodes[i].inputs) {
        const ValueId r = root_[v];
        if (last_[r] != i) last_[r] = i, reads_[r] = 0;
        ++reads_[r];
      }
    kept_.assign(nv, false);
    for (ValueId v : g.outputs) kept_[root_[v]] = true;
    for (const StateUpdate& u : g.updates) kept_[root_[u.value]] = true;
    new_value_.assign(nv, kNone);
    for (const StateUpdate& u : g.updates) new_value_[u.state] = u.value;
    // The param or state whose memory holds each value (kNone: none).
    home_.assign(nv, kNone);
    for (ValueId v = 0; v < nv; ++v)
      if (g.values[v].role != Role::intermediate) home_[v] = v;

    size_t changed = 0;
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      if (!n.overwrites().empty()) n.set_overwrites({});
      if (n.op && n.op->view) {
        for (ValueId o : n.outputs) home_[o] = home_[n.inputs[0]];
        continue;
      }
      if (!n.op) continue;
      // Scratch kept between nodes: this loop runs for every node.
      ow_.assign(n.outputs.size(), -1);
      taken_.assign(n.inputs.size(), false);
      bool any = false;
      for (size_t o = 0; o < n.outputs.size(); ++o) {
        candidates(n, o, c_);
        // A state's new value goes into the state's own memory first: so the
        // state keeps its block, and no block is taken for it on each run.
        std::stable_partition(c_.begin(), c_.end(), [&](size_t k) {
          const ValueId h = k < n.inputs.size() ? home_[n.inputs[k]] : kNone;
          return h != kNone && new_value_[h] == n.outputs[o];
        });
        for (size_t k : c_) {
          if (k >= n.inputs.size() || taken_[k] || !allowed(g, i, o, k)) continue;
          ow_[o] = int32_t(k);
          taken_[k] = true;
          home_[n.outputs[o]] = home_[n.inputs[k]];
          any = true;
          ++changed;
          break;
        }
      }
      if (any) n.set_overwrites(ow_);
    }
    return changed;
  }

 private:
  std::vector<ValueId> root_, home_, new_value_;
  std::vector<NodeId> last_;
  std::vector<uint32_t> reads_;
  std::vector<bool> kept_;
  std::vector<int32_t> ow_;
  std::vector<bool> taken_;
  std::vector<size_t> c_;

  static int elementwise_from(const backend::OpDef& op) { return op.elementwise ? 0 : op.overwritable_from; }

  static void candidates(const Node& n, size_t o, std::vector<size_t>& c) {
    c.clear();
    if (const int from = elementwise_from(*n.op); from >= 0) {
      for (size_t k = size_t(from); k < n.inputs.size(); ++k) c.push_back(k);
    } else if (o == 0 && n.op->effect == backend::Effect::stateful) {
      c.push_back(0);
    } else if (o == 0 && n.op->inplace_input >= 0) {
      c.push_back(size_t(n.op->inplace_input));
    }
  }

  bool allowed(const Graph& g, NodeId i, size_t o, size_t k) const {
    const Node& n = g.nodes[i];
    const ValueId in = n.inputs[k], out = n.outputs[o];
    const backend::TensorType &ti = g.values[in].type, &to = g.values[out].type;
    if (elementwise_from(*n.op) >= 0 ? !(ti.dtype == to.dtype && ti.shape == to.shape && ti.device == to.device)
                          : !same_bytes(ti, to))
      return false;
    const ValueId r = root_[in];
    // Dies here, read once here, and nobody keeps it.
    if (last_[r] != i || reads_[r] != 1 || kept_[r]) return false;
    const ValueId home = home_[in];
    if (home == kNone) return true;  // the run's own memory
    // A param's or state's memory: only one the graph updates, only with its
    // exact shape, and the value written there is no output of its own.
    const Value& h = g.values[home];
    if (h.role == Role::constant || new_value_[home] == kNone || h.type.shape != to.shape) return false;
    return !kept_[out] || new_value_[home] == out;
  }
};

}  // namespace

std::unique_ptr<Pass> make_inplace() { return std::make_unique<Inplace>(); }

}  // namespace nn::ir
