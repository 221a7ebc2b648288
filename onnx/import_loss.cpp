// Import entries of the losses (import_table.h): NegativeLogLikelihoodLoss
// and SoftmaxCrossEntropyLoss over [N, C, d...] with class weights and an
// ignored class.
#include "backend/nn_ops.h"
#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

// logp [N, C, d...], target [N, d...]: -logp[n, target, d...] * weight[target],
// 0 where target is ignore_index; `mean` divides by the weights' sum.
Tensor nll(const NodeContext& n, const Tensor& logp, const Tensor& target, const Tensor& weight) {
  if (logp.ndim() < 2 || target.ndim() != logp.ndim() - 1) n.fail("needs input [N, C, ...] and target [N, ...]");
  const std::string reduction = n.attr_str("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    n.fail("attribute reduction=" + reduction + " is not supported");
  const Tensor t = astype(target, DType::i64);
  Tensor ignored = zeros(t.shape(), DType::boolean);
  if (n.has_attr("ignore_index")) ignored = eq(t, scalar_int(n.attr_int("ignore_index", 0)));
  const Tensor safe = where(ignored, scalar_int(0), t);
  const Tensor picked = squeeze(gather(logp, unsqueeze(safe, 1), 1), 1);
  Tensor w = weight.defined() ? reshape(index_select(weight, reshape(safe, {safe.numel()}), 0), dims_of(t))
                              : ones(t.shape(), logp.dtype());
  w = where(ignored, like(0, w), w);
  const Tensor loss = mul(neg(picked), w);
  if (reduction == "none") return loss;
  if (reduction == "sum") return sum(loss);
  return div(sum(loss), sum(w));
}

Outs nll_entry(const NodeContext& n) {
  return {nll(n, n.input(0), n.input(1), n.has_input(2) ? n.input(2) : Tensor())};
}

Outs sce_entry(const NodeContext& n) {
  const Tensor& scores = n.input(0);
  if (scores.ndim() < 2) n.fail("needs scores [N, C, ...]");
  const Tensor logp = log_softmax(scores, 1);
  return {nll(n, logp, n.input(1), n.has_input(2) ? n.input(2) : Tensor()), logp};
}

const ImportEntry entries[] = {
    {"NegativeLogLikelihoodLoss", nll_entry},
    {"SoftmaxCrossEntropyLoss", sce_entry},
};

}  // namespace

std::span<const ImportEntry> loss_imports() { return entries; }

}  // namespace nn::onnx_io
