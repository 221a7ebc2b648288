// Neural-network functions that are composites of ops.h functions, so they
// need no kernel and no backward rule of their own: embedding (take),
// dropout (rand, a comparison and where), and the elementwise losses
// mse_loss, l1_loss and bce_with_logits (means over all elements).
#include <fmt/core.h>

#include <string>

#include "backend/autocast.h"
#include "backend/nn_ops.h"
#include "backend/ops/nn_common.h"

namespace nn::backend {
namespace {
using namespace nnops;

Tensor host_number(double v) { return scalar(v, DType::f64, /*weak=*/true); }

// Elementwise losses compare like with like: a [N] prediction against a
// [N, 1] target would broadcast to [N, N], a classic silent bug.
void check_same_shape(const char* op, const char* a_name, const Tensor& a, const char* b_name, const Tensor& b) {
  if (a.shape() != b.shape())
    throw Error(std::string(op) + ": " + a_name + " " + a.type().str() + " and " + b_name + " " + b.type().str() +
                " have different shapes");
}

}  // namespace

Tensor embedding(const Tensor& ids, const Tensor& table) {
  if (!is_integral(ids.dtype()))
    throw Error("embedding: ids must be an integer tensor, got " + ids.type().str() + " (table " +
                table.type().str() + ")");
  if (table.ndim() != 2) throw Error("embedding: table must be 2-d [V, D], got " + table.type().str());
  // take's backward (a scatter-add into the table's shape) gives the table its gradient.
  return renaming_errors("take: ", "embedding: ", [&] { return take(table, ids); });
}

Tensor dropout(const Tensor& x, double p, bool training) {
  if (!(p >= 0.0 && p < 1.0)) throw Error(fmt::format("dropout: p must be in [0, 1), got {}", p));
  if (!training || p == 0.0) return x;
  Tensor xf = as_float(x);
  // Keep where a uniform draw in [0, 1) is >= p: probability 1 - p. rand is
  // a random op (fresh on every call and every graph replay, seeded by
  // seed()); where's backward sends the gradient through the kept values
  // with the same 1/(1 - p) scale, so dropout needs no backward of its own.
  Tensor keep = ge(rand(xf.shape(), xf.dtype()), host_number(p));
  return where(keep, mul(xf, host_number(1.0 / (1.0 - p))), scalar(0.0, xf.dtype()));
}

Tensor reduce_losses(const Tensor& losses, Reduction r) {
  switch (r) {
    case Reduction::mean: return mean(losses);
    case Reduction::sum: return sum(losses);
    case Reduction::none: return losses;
  }
  return losses;
}

Tensor ignoring_index(const Tensor& ids, int64_t ignore, Reduction r,
                      const std::function<Tensor(const Tensor& ids)>& losses_of) {
  if (!is_integral(ids.dtype()))
    throw Error("ignore_index takes class ids (an integer tensor), not " + ids.type().str());
  const Tensor keep = ne(ids, scalar(double(ignore), ids.dtype(), /*weak=*/true));
  // An ignored example computes with id 0 (any id in range), then counts
  // for nothing: where, not a product, so that an infinite loss there does
  // not make NaN, and its gradient is 0.
  const Tensor losses = losses_of(where(keep, ids, scalar(0.0, ids.dtype(), /*weak=*/true)));
  const Tensor kept = where(keep, losses, scalar(0.0, losses.dtype(), /*weak=*/true));
  if (r != Reduction::mean) return reduce_losses(kept, r);
  return div(sum(kept), sum(astype(keep, kept.dtype())));
}

// The losses compute in f32 under autocast (SPEC §15, PyTorch's autocast
// lists): autocast_f32 widens 16-bit operands before the first op.
Tensor mse_loss(const Tensor& pred, const Tensor& target, Reduction r) {
  check_same_shape("mse_loss", "pred", pred, "target", target);
  Tensor d = sub(autocast_f32(pred), autocast_f32(target));
  return reduce_losses(mul(d, d), r);
}

Tensor l1_loss(const Tensor& pred, const Tensor& target, Reduction r) {
  check_same_shape("l1_loss", "pred", pred, "target", target);
  return reduce_losses(abs(sub(autocast_f32(pred), autocast_f32(target))), r);
}

Tensor bce_with_logits(const Tensor& logits, const Tensor& targets_in, Reduction r) {
  check_same_shape("bce_with_logits", "logits", logits, "targets", targets_in);
  Tensor x = as_float(autocast_f32(logits)), targets = autocast_f32(targets_in);
  // max(x, 0) - x y + log1p(exp(-|x|)) is softplus(x) - x y, and softplus
  // computes exactly max(x, 0) + log1p(exp(-|x|)). Written with softplus, the
  // gradient is sigmoid(x) - y everywhere; spelled out with relu and abs it
  // would lose the 1/2 at x = 0 (both have derivative 0 there).
  return reduce_losses(sub(softplus(x), mul(x, targets)), r);
}

}  // namespace nn::backend
