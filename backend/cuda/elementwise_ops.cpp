// CUDA kernels of the elementwise tables (ops/elementwise_ops.h), one per
// line, and of where: each launches the line's functor (cuda/elementwise.cu)
// in the dtype its kind computes in, as the CPU kernel does. Float and
// dtype-keeping functions and arithmetic compute in the output's dtype,
// comparisons in the operands' promoted dtype (SPEC §3), predicates in the
// input's, logical ops on bools; where reads a bool condition.
#include <array>

#include "backend/cuda/elementwise_launch.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"
#include "backend/ops/elementwise_params.h"
#include "backend/ops/type_rules.h"

namespace nn::backend::cuda {
namespace {

enum class Reads { output, input, promoted, bools };

// The dtype a comparison runs in, as the CPU kernel picks it.
DType promoted_dtype(const Tensor& a, const Tensor& b) {
  const std::array<TensorType, 2> t{TensorType{a.dtype(), {}, nullptr, a.weak()},
                                    TensorType{b.dtype(), {}, nullptr, b.weak()}};
  return promote_types(t).dtype;
}

template <OpId Id, Reads R>
void kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  DType t = out[0].dtype();
  if constexpr (R == Reads::input) t = in[0].dtype();
  if constexpr (R == Reads::promoted) t = promoted_dtype(in[0], in[1]);
  if constexpr (R == Reads::bools) t = DType::boolean;
  const math::EwParams p = params_of(op(Id), attrs);
  if (in.size() == 2) run_elementwise(op_name(Id), Id, t, out[0], in, {t, t}, p);
  else run_elementwise(op_name(Id), Id, t, out[0], in, {t}, p);
}

// The dtype each kind of the tables computes in.
namespace reads_of {
constexpr Reads floating = Reads::output, keeping = Reads::output, negation = Reads::output,
                predicate = Reads::input, arith = Reads::output, arith_no_bool = Reads::output,
                true_div = Reads::output, compare = Reads::promoted, logical = Reads::bools;
}  // namespace reads_of

void where(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const DType t = out[0].dtype();
  run_elementwise("where", OpId::where, t, out[0], in, {DType::boolean, t, t});
}

}  // namespace

void register_elementwise(Registry& r) {
#define NN_CUDA_ENTRY(id, F, kind, ...) r.edit(OpId::id).cuda = kernel<OpId::id, reads_of::kind>;
  NN_UNARY_OPS(NN_CUDA_ENTRY)
  NN_BINARY_OPS(NN_CUDA_ENTRY)
#undef NN_CUDA_ENTRY
  r.edit(OpId::where).cuda = where;
}

}  // namespace nn::backend::cuda
