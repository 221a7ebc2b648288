// Pass `dead-code`: a node none of whose outputs is read, returned or
// written back to a state does nothing and goes. Random ops, host calls and
// collectives stay: they draw numbers, print or talk to the other ranks, and
// later draws and messages depend on earlier ones.
#include "ir/pass.h"

namespace nn::ir {
namespace {

class DeadCode : public Pass {
 public:
  const char* name() const override { return "dead-code"; }
  size_t run(Graph& g) override {
    Uses u = count_uses(g);
    Rewriter rw(g);
    size_t dropped = 0;
    // Consumers before producers, so a chain of dead nodes goes in one sweep.
    for (NodeId i = NodeId(g.nodes.size()); i-- > 0;) {
      const Node& n = g.nodes[i];
      if (n.ordered_effect() || n.op->effect == backend::Effect::completion) continue;
      bool live = false;
      for (ValueId v : n.outputs) live = live || u.readers[v] > 0 || u.kept[v];
      if (live) continue;
      rw.drop(i);
      ++dropped;
      for (ValueId v : n.inputs) --u.readers[v];
    }
    if (dropped) rw.apply();
    return dropped;
  }
};

}  // namespace

std::unique_ptr<Pass> make_dead_code() { return std::make_unique<DeadCode>(); }

}  // namespace nn::ir
