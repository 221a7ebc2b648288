// Pass `cse` (common subexpression elimination): two calls of the same pure
// op on the same values with the same attributes compute the same thing;
// the later one's outputs become the earlier one's. Random ops (each draws
// anew), stateful ops and host calls are never merged.
#include <unordered_map>

#include "ir/pass.h"

namespace nn::ir {
namespace {

class CommonSubexpr : public Pass {
 public:
  const char* name() const override { return "cse"; }
  size_t run(Graph& g) override {
    Rewriter rw(g);
    std::unordered_map<std::string, NodeId> seen;
    size_t merged = 0;
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (!n.op || n.op->effect != backend::Effect::pure) continue;
      std::string key = n.op->name;
      key += '(';
      for (ValueId v : n.inputs) {
        key += std::to_string(rw.resolve(v));
        key += ',';
      }
      key += ')';
      key += n.attrs.str();
      auto [it, fresh] = seen.emplace(std::move(key), i);
      if (fresh) continue;
      const Node& first = g.nodes[it->second];
      for (size_t k = 0; k < n.outputs.size(); ++k) rw.replace(n.outputs[k], first.outputs[k]);
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
