// Fused nodes drawn as the ops they merged (ir/picture/fused_expand.h).
#include "ir/picture/fused_expand.h"

#include "backend/ops.h"
#include "backend/ops/fused_program.h"

namespace nn::ir {

Graph expand_fused(const Graph& g, std::vector<std::vector<NodeId>>& groups) {
  using Kind = backend::FusedProgram::Arg::Kind;
  Graph x;
  x.name = g.name;
  x.values = g.values;
  x.names = g.names;
  x.scopes = g.scopes;
  x.inputs = g.inputs;
  x.outputs = g.outputs;
  x.updates = g.updates;
  x.locate = g.locate;
  groups.clear();
  auto append = [&](Node n) {
    for (uint32_t k = 0; k < n.outputs.size(); ++k) {
      x.values[n.outputs[k]].producer = NodeId(x.nodes.size());
      x.values[n.outputs[k]].index = k;
    }
    x.nodes.push_back(std::move(n));
    return NodeId(x.nodes.size() - 1);
  };
  for (const Node& n : g.nodes) {
    if (!n.attrs.has("program")) {
      append(n);
      continue;
    }
    const backend::FusedProgram& p = backend::program_of(n.attrs);
    const backend::Device* dev = n.outputs.empty() ? nullptr : g.values[n.outputs[0]].type.device;
    auto type = [&](backend::DType d) { return backend::TensorType{d, p.shape, const_cast<backend::Device*>(dev)}; };
    std::vector<NodeId>& group = groups.emplace_back();
    // The program's inputs as values: a matmul_epilogue's product is the
    // output of its GEMM, drawn first; its other inputs follow a and b.
    std::vector<ValueId> in;
    const bool epilogue = n.op && n.op->id == OpId::matmul_epilogue && n.inputs.size() >= 2;
    if (epilogue) {
      Node gemm;
      const bool ta = n.attrs.get_or<bool>("ta", false), tb = n.attrs.get_or<bool>("tb", false);
      gemm.op = &backend::op(ta ? "matmul_tn" : tb ? "matmul_nt" : "matmul");
      gemm.inputs = {n.inputs[0], n.inputs[1]};
      gemm.outputs = {x.add_value(type(p.compute), Role::intermediate)};
      gemm.loc = n.loc;
      gemm.scope = n.scope;
      gemm.phase = n.phase;
      in.push_back(gemm.outputs[0]);
      group.push_back(append(std::move(gemm)));
      in.insert(in.end(), n.inputs.begin() + 2, n.inputs.end());
    } else {
      in = n.inputs;
    }
    std::vector<ValueId> immediate(p.immediates.size(), kNone);
    std::vector<ValueId> step_value(p.steps.size(), kNone);
    for (size_t o = 0; o < p.outputs.size() && o < n.outputs.size(); ++o) step_value[p.outputs[o]] = n.outputs[o];
    for (size_t s = 0; s < p.steps.size(); ++s) {
      const backend::FusedProgram::Step& st = p.steps[s];
      Node part;
      part.op = st.op;
      part.attrs = st.attrs;
      for (const backend::FusedProgram::Arg& a : st.args) {
        if (a.kind == Kind::input) {
          part.inputs.push_back(a.index < in.size() ? in[a.index] : kNone);
        } else if (a.kind == Kind::step) {
          part.inputs.push_back(step_value[a.index]);
        } else {
          if (immediate[a.index] == kNone) {
            backend::Tensor c = backend::scalar(p.immediates[a.index], backend::DType::f64, true);
            immediate[a.index] = x.add_value(c.type(), Role::constant);
            x.values[immediate[a.index]].captured = c;
          }
          part.inputs.push_back(immediate[a.index]);
        }
      }
      if (step_value[s] == kNone) step_value[s] = x.add_value(type(st.dtype), Role::intermediate);
      part.outputs = {step_value[s]};
      if (s < n.parts().size()) {
        part.loc = n.parts()[s].loc;
        part.scope = n.parts()[s].scope;
        part.phase = n.parts()[s].phase;
      }
      group.push_back(append(std::move(part)));
    }
  }
  return x;
}

}  // namespace nn::ir
