// Pass `transpose-into-matmul` (Owl's pattern 006): matmul(permute(a,
// [1, 0]), b) becomes matmul_tn(a, b), and matmul(a, permute(b, [1, 0]))
// becomes matmul_nt(a, b), for 2-d float matrices: the GEMM reads the
// transpose in place (BLAS's trans flags) instead of a copy being made
// first. The backward of every matmul has two such transposes. The permute
// is left to dead-code.
#include "ir/pass.h"

namespace nn::ir {
namespace {

// The matrix a 2-d transpose reads, or kNone.
ValueId transposed(const Graph& g, ValueId v) {
  const NodeId p = g.values[v].producer;
  if (p == kNone || !g.nodes[p].op || g.nodes[p].op->id != OpId::permute) return kNone;
  const auto& dims = g.nodes[p].attrs.get<std::vector<int64_t>>("dims");
  return dims == std::vector<int64_t>{1, 0} ? g.nodes[p].inputs[0] : kNone;
}

class TransposeIntoMatmul : public Pass {
 public:
  const char* name() const override { return "transpose-into-matmul"; }
  size_t run(Graph& g) override {
    static const backend::OpDef &tn = backend::op(OpId::matmul_tn), &nt = backend::op(OpId::matmul_nt);
    size_t changed = 0;
    for (Node& n : g.nodes) {
      if (!n.op || n.op->id != OpId::matmul) continue;
      const backend::TensorType &a = g.values[n.inputs[0]].type, &b = g.values[n.inputs[1]].type;
      if (a.shape.ndim() != 2 || b.shape.ndim() != 2 || a.dtype != b.dtype || !backend::is_floating(a.dtype)) continue;
      if (ValueId x = transposed(g, n.inputs[0]); x != kNone) {
        n.op = &tn;
        n.inputs[0] = x;
      } else if (ValueId y = transposed(g, n.inputs[1]); y != kNone) {
        n.op = &nt;
        n.inputs[1] = y;
      } else {
        continue;
      }
      ++changed;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_transpose_into_matmul() { return std::make_unique<TransposeIntoMatmul>(); }

}  // namespace nn::ir
