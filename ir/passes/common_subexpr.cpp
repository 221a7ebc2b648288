// Pass `cse` (common subexpression elimination): two calls of the same pure
// op on the same values with the same attributes compute the same thing;
// the later one's outputs become the earlier one's. Random ops (each draws
// anew), stateful ops and host calls are never merged.
#include <utility>
#include <vector>

#include "ir/hash_mix.h"
#include "ir/pass.h"

namespace nn::ir {
namespace {

class CommonSubexpr : public Pass {
 public:
  const char* name() const override { return "cse"; }
  size_t run(Graph& g) override {
    Rewriter rw(g);
    // Calls by a hash of (op, inputs); equal hashes are compared in full,
    // attributes only when the rest agrees.
    // Open addressing, linear probing: no allocation per node.
    size_t cap = 16;
    while (cap < 2 * g.nodes.size()) cap *= 2;
    const size_t mask = cap - 1;
    std::vector<std::pair<size_t, NodeId>> seen(cap, {0, kNone});  // (hash, node)
    size_t merged = 0;
    std::vector<ValueId> in;
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (!n.op || n.op->effect != backend::Effect::pure) continue;
      in.clear();
      size_t h = std::hash<const void*>()(n.op);
      for (ValueId v : n.inputs) {
        in.push_back(rw.resolve(v));
        h = h * 0x100000001b3ull ^ in.back();
      }
      // Calls with no inputs (zeros, full: the constants of every backward
      // step) differ only in their attributes: without them in the hash they
      // would all probe one long run of slots.
      if (n.inputs.empty() && !n.attrs.empty()) h ^= n.attrs.hash();
      h = mix_hash(h);
      NodeId same = kNone;
      size_t slot = h & mask;
      for (; seen[slot].second != kNone && same == kNone; slot = (slot + 1) & mask) {
        if (seen[slot].first != h) continue;
        const Node& m = g.nodes[seen[slot].second];
        if (m.op != n.op || m.inputs.size() != in.size() || m.outputs.size() != n.outputs.size()) continue;
        bool equal = true;
        for (size_t k = 0; k < in.size() && equal; ++k) equal = rw.resolve(m.inputs[k]) == in[k];
        if (equal && n.attrs.same_as(m.attrs)) same = seen[slot].second;
      }
      if (same == kNone) {
        seen[slot] = {h, i};
        continue;
      }
      for (size_t k = 0; k < n.outputs.size(); ++k) rw.replace(n.outputs[k], g.nodes[same].outputs[k]);
      rw.drop(i);
      ++merged;
    }
    if (merged) rw.apply();
    return merged;
  }
};

}  // namespace

std::unique_ptr<Pass> make_common_subexpr() { return std::make_unique<CommonSubexpr>(); }

}  // namespace nn::ir
