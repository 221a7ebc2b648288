// Pass `fuse-matmul-epilogue`: a 2-d GEMM (matmul, matmul_tn, matmul_nt on
// float matrices) whose product only one elementwise node reads, a fused
// node or a lone fusible op over the product's shape and dtype, becomes one
// `matmul_epilogue` node (backend/ops/matmul_epilogue.cpp): the elementwise
// work runs on each block of rows right after the GEMM wrote it, and the
// product never goes to memory. `relu(x @ w + b)` is one node; so is a
// weight's gradient with its optimizer update.
#include "ir/fused_node.h"

#include "backend/ops/fused_program.h"

namespace nn::ir {
namespace {

using backend::DType;

// The transpose flags of a GEMM node, or false when the node is none.
bool gemm_flags(const Graph& g, const Node& n, bool& ta, bool& tb) {
  if (!n.op || n.outputs.size() != 1) return false;
  switch (n.op->id) {
    case OpId::matmul: ta = tb = false; break;
    case OpId::matmul_tn: ta = true, tb = false; break;
    case OpId::matmul_nt: ta = false, tb = true; break;
    default: return false;
  }
  const backend::TensorType &a = g.values[n.inputs[0]].type, &b = g.values[n.inputs[1]].type;
  return a.shape.ndim() == 2 && b.shape.ndim() == 2 && a.dtype == b.dtype &&
         (a.dtype == DType::f32 || a.dtype == DType::f64) && on_cpu(g.values[n.outputs[0]].type.device);
}

class FuseMatmulEpilogue : public Pass {
 public:
  const char* name() const override { return "fuse-matmul-epilogue"; }

  size_t run(Graph& g) override {
    const Uses uses = count_uses(g);
    // The one node reading each value, kNone when none or several do.
    std::vector<NodeId> reader(g.values.size(), kNone);
    std::vector<bool> shared(g.values.size(), false);
    for (NodeId i = 0; i < g.nodes.size(); ++i)
      for (ValueId v : g.nodes[i].inputs) {
        if (reader[v] != kNone && reader[v] != i) shared[v] = true;
        reader[v] = i;
      }
    Rewriter rw(g);
    size_t changed = 0;
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      bool ta = false, tb = false;
      if (!gemm_flags(g, g.nodes[i], ta, tb)) continue;
      const ValueId c = g.nodes[i].outputs[0];
      const NodeId f = reader[c];
      if (f == kNone || shared[c] || uses.kept[c] || rw.dropped(f)) continue;
      const backend::TensorType& ct = g.values[c].type;
      Node epilogue;
      if (g.nodes[f].attrs.has("program") && g.nodes[f].op && g.nodes[f].op->id == OpId::fused) {
        epilogue = g.nodes[f];
      } else if (fusible_dtypes(g, g.nodes[f]) & (ct.dtype == DType::f32 ? kFuseF32 : kFuseF64)) {
        epilogue = make_fused_node(g, {f}, ct.dtype, uses);
      } else {
        continue;
      }
      const backend::FusedProgram& p = backend::program_of(epilogue.attrs);
      if (p.shape != ct.shape || p.compute != ct.dtype) continue;
      // The program reads the product as input 0, the others after it.
      auto prog = std::make_shared<backend::FusedProgram>(p);
      std::vector<uint32_t> moved(epilogue.inputs.size());
      std::vector<ValueId> inputs{g.nodes[i].inputs[0], g.nodes[i].inputs[1]};
      for (size_t k = 0; k < epilogue.inputs.size(); ++k) {
        if (epilogue.inputs[k] == c) {
          moved[k] = 0;
        } else {
          moved[k] = uint32_t(inputs.size() - 1);
          inputs.push_back(epilogue.inputs[k]);
        }
      }
      for (auto& st : prog->steps)
        for (auto& a : st.args)
          if (a.kind == backend::FusedProgram::Arg::Kind::input) a.index = moved[a.index];
      prog->num_inputs = uint32_t(inputs.size() - 1);
      Node& e = g.nodes[f];
      e.op = &backend::op(OpId::matmul_epilogue);
      e.inputs = std::move(inputs);
      e.outputs = epilogue.outputs;
      e.attrs = backend::Attrs{{"ta", ta}, {"tb", tb}, {"program", backend::ProgramPtr(std::move(prog))}};
      e.set_parts({epilogue.parts().begin(), epilogue.parts().end()});
      e.loc = g.nodes[i].loc;  // the node's own line is the GEMM's
      e.scope = g.nodes[i].scope;
      e.phase = g.nodes[i].phase;
      rw.drop(i);
      ++changed;
    }
    if (changed) rw.apply();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_matmul_epilogue() { return std::make_unique<FuseMatmulEpilogue>(); }

}  // namespace nn::ir
