// CUDA kernels of the elementwise unary ops (backend/ops/unary.cpp): float
// functions compute in the output's float dtype, dtype-keeping ops in the
// output's dtype, predicates in the input's.
#include "backend/cuda/elementwise_launch.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

EwParams params_of(EwOp op, const Attrs& a) {
  if (op == EwOp::leaky_relu) return {a.get_or<double>("slope", 0.01)};
  if (op == EwOp::gelu || op == EwOp::gelu_backward) return {a.get_or<bool>("approximate", false) ? 1.0 : 0.0};
  return {};
}

template <EwOp Op>
void in_output_dtype(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const DType t = out[0].dtype();
  if (in.size() == 2) run_elementwise("unary op", Op, t, out[0], in, {t, t}, params_of(Op, attrs));
  else run_elementwise("unary op", Op, t, out[0], in, {t}, params_of(Op, attrs));
}

template <EwOp Op>
void in_input_dtype(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const DType t = in[0].dtype();
  run_elementwise("unary op", Op, t, out[0], in, {t});
}

}  // namespace

void register_unary(Registry& r) {
  r.edit("exp").cuda = in_output_dtype<EwOp::exp>;
  r.edit("log").cuda = in_output_dtype<EwOp::log>;
  r.edit("sqrt").cuda = in_output_dtype<EwOp::sqrt>;
  r.edit("rsqrt").cuda = in_output_dtype<EwOp::rsqrt>;
  r.edit("sin").cuda = in_output_dtype<EwOp::sin>;
  r.edit("cos").cuda = in_output_dtype<EwOp::cos>;
  r.edit("tanh").cuda = in_output_dtype<EwOp::tanh>;
  r.edit("sigmoid").cuda = in_output_dtype<EwOp::sigmoid>;
  r.edit("leaky_relu").cuda = in_output_dtype<EwOp::leaky_relu>;
  r.edit("gelu").cuda = in_output_dtype<EwOp::gelu>;
  r.edit("softplus").cuda = in_output_dtype<EwOp::softplus>;
  r.edit("gelu_backward").cuda = in_output_dtype<EwOp::gelu_backward>;
  r.edit("neg").cuda = in_output_dtype<EwOp::neg>;
  r.edit("abs").cuda = in_output_dtype<EwOp::abs>;
  r.edit("sign").cuda = in_output_dtype<EwOp::sign>;
  r.edit("relu").cuda = in_output_dtype<EwOp::relu>;
  r.edit("floor").cuda = in_output_dtype<EwOp::floor>;
  r.edit("ceil").cuda = in_output_dtype<EwOp::ceil>;
  r.edit("round").cuda = in_output_dtype<EwOp::round>;
  r.edit("logical_not").cuda = in_input_dtype<EwOp::logical_not>;
  r.edit("isnan").cuda = in_input_dtype<EwOp::isnan>;
}

}  // namespace nn::backend::cuda
