// CUDA kernels of the elementwise binary ops (backend/ops/binary.cpp and
// compare.cpp): arithmetic in the output's dtype, comparisons in the
// operands' promoted dtype (SPEC §3), logical ops on bools, where with a
// bool condition.
#include <array>

#include "backend/cuda/elementwise_launch.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"
#include "backend/ops/type_rules.h"

namespace nn::backend::cuda {
namespace {

template <EwOp Op>
void arith(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const DType t = out[0].dtype();
  run_elementwise("binary op", Op, t, out[0], in, {t, t});
}

// The dtype a comparison runs in, as the CPU kernel picks it.
DType compare_dtype(const Tensor& a, const Tensor& b) {
  const std::array<TensorType, 2> t{TensorType{a.dtype(), {}, nullptr, a.weak()},
                                    TensorType{b.dtype(), {}, nullptr, b.weak()}};
  return promote_types(t).dtype;
}

template <EwOp Op>
void compare(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const DType t = compare_dtype(in[0], in[1]);
  run_elementwise("comparison", Op, t, out[0], in, {t, t});
}

template <EwOp Op>
void logical(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  run_elementwise("logical op", Op, DType::boolean, out[0], in, {DType::boolean, DType::boolean});
}

void where(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const DType t = out[0].dtype();
  run_elementwise("where", EwOp::where, t, out[0], in, {DType::boolean, t, t});
}

}  // namespace

void register_binary(Registry& r) {
  r.edit("add").cuda = arith<EwOp::add>;
  r.edit("sub").cuda = arith<EwOp::sub>;
  r.edit("mul").cuda = arith<EwOp::mul>;
  r.edit("div").cuda = arith<EwOp::div>;
  r.edit("pow").cuda = arith<EwOp::pow>;
  r.edit("mod").cuda = arith<EwOp::mod>;
  r.edit("maximum").cuda = arith<EwOp::maximum>;
  r.edit("minimum").cuda = arith<EwOp::minimum>;
  r.edit("eq").cuda = compare<EwOp::eq>;
  r.edit("ne").cuda = compare<EwOp::ne>;
  r.edit("lt").cuda = compare<EwOp::lt>;
  r.edit("le").cuda = compare<EwOp::le>;
  r.edit("gt").cuda = compare<EwOp::gt>;
  r.edit("ge").cuda = compare<EwOp::ge>;
  r.edit("logical_and").cuda = logical<EwOp::logical_and>;
  r.edit("logical_or").cuda = logical<EwOp::logical_or>;
  r.edit("where").cuda = where;
}

}  // namespace nn::backend::cuda
