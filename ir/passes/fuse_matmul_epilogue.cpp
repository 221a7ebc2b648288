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
      // The elementwise node as a fused one (a lone op is made one). Its
      // program is rewritten in place, copied only where another node
      // shares it.
      Node& e = g.nodes[f];
      Node made;
      const bool fused = e.is(OpId::fused);
      if (!fused && !(fusible_dtypes(g, e) & (ct.dtype == DType::f32 ? kFuseF32 : kFuseF64))) continue;
      if (!fused) made = make_fused_node(g, std::span(&f, 1), ct.dtype, uses);
      const Node& epilogue = fused ? e : made;
      const backend::ProgramPtr& own = epilogue.attrs.get<backend::ProgramPtr>("program");
      if (own->shape != ct.shape || own->compute != ct.dtype) continue;
      auto prog = own.use_count() == 1 ? std::const_pointer_cast<backend::FusedProgram>(own)
                                       : std::make_shared<backend::FusedProgram>(*own);
      // The program reads the product as input 0, the others after it.
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
      if (!fused) e = std::move(made);
      e.op = &backend::op(OpId::matmul_epilogue);
      e.inputs = std::move(inputs);
      e.attrs = backend::Attrs{{"ta", ta}, {"tb", tb}, {"program", backend::ProgramPtr(std::move(prog))}};
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
