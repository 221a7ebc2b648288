// The C++ face of the neural-network ops (SPEC §7 "Neural" and "Losses"):
// convolution, pooling, normalisation, softmax and the losses. Like ops.h,
// every function goes through dispatch, so it computes now in eager mode and
// records nodes under a tracer. Fused ops (conv2d, the pools, batch_norm in
// training, layer_norm, softmax, log_softmax, softmax_cross_entropy) are
// registry ops with their own kernels and fused backward ops; the rest are
// composites of ops.h functions and need no backward of their own.
#pragma once
#include <array>
#include <cstdint>
#include <functional>

#include "backend/ops.h"

namespace nn::backend {

// A pair of ints for the two spatial dims (height, width); an int stands for
// both. Used for stride, padding, dilation and pooling windows.
using Pair = std::array<int64_t, 2>;
constexpr Pair pair(int64_t v) { return {v, v}; }

// ---- convolution (ops/nn_conv.cpp) ----
// x [N, C, H, W] (or unbatched [C, H, W]), w [O, C/groups, kh, kw], b [O] or
// undefined. Output [N, O, OH, OW] with OH = (H + 2p - d(kh-1) - 1)/s + 1.
// Zero padding. Integer inputs compute in f32.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b = Tensor(), Pair stride = pair(1),
              Pair padding = pair(0), Pair dilation = pair(1), int64_t groups = 1);

// ---- pooling (ops/nn_pool.cpp) ----
// x [N, C, H, W] (or [C, H, W]); stride defaults to the window. Padding is at
// most half the window (as PyTorch). Output sizes round down (ceil_mode off).
// max_pool2d pads with -inf; ties go to the first maximum in row-major order
// of the window; NaN propagates.
Tensor max_pool2d(const Tensor& x, Pair k, std::optional<Pair> stride = std::nullopt, Pair padding = pair(0));
// avg_pool2d counts padded zeros in the divisor (PyTorch's default
// count_include_pad=True): every window divides by kh*kw.
Tensor avg_pool2d(const Tensor& x, Pair k, std::optional<Pair> stride = std::nullopt, Pair padding = pair(0));

// ---- normalisation (ops/nn_norm.cpp) ----
// x [N, C, ...]; gamma, beta, running_mean, running_var [C] (gamma/beta may
// be undefined: 1 and 0). Training normalises with the batch statistics and
// updates running_mean/running_var in place (running_var with the unbiased
// estimate, as PyTorch; the update is not differentiated). Eval uses the
// running statistics.
Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& running_mean,
                  Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5);
// Normalises over the last gamma.ndim() dims (x.shape ends with gamma.shape);
// gamma/beta may be undefined, then `normalized_ndim` (default 1) says how
// many trailing dims.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5,
                  int64_t normalized_ndim = 1);

// ---- softmax and losses (ops/nn_softmax.cpp) ----
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
// What a loss gives: the mean of its per-example (or per-element) losses,
// their sum, or the losses themselves (PyTorch's `reduction`).
enum class Reduction { mean, sum, none };
// logits [N, C]; labels are integer class ids [N] or probabilities [N, C].
// Per example: -log softmax(logits)[label]. An id outside [0, C) is an Error.
Tensor softmax_cross_entropy(const Tensor& logits, const Tensor& labels, Reduction r = Reduction::mean);
// logp [N, C] (log-probabilities), ids [N]: per example -logp[i, ids[i]].
Tensor nll_loss(const Tensor& logp, const Tensor& ids, Reduction r = Reduction::mean);
// ids of any shape -> f32[..., n] of zeros and ones; not differentiable.
Tensor one_hot(const Tensor& ids, int64_t n);
// Fraction of rows whose argmax equals the label (ids [N], or the argmax of
// [N, C] probabilities): an f32 0-d tensor, not differentiable.
Tensor accuracy(const Tensor& logits, const Tensor& labels);

// ---- composites (ops/nn_misc.cpp) ----
// Rows of table [V, D] picked by integer ids of any shape: [..., D].
Tensor embedding(const Tensor& ids, const Tensor& table);
// Inverted dropout: keeps each value with probability 1 - p and scales it by
// 1/(1 - p). p in [0, 1); p = 0 or training = false give x itself.
Tensor dropout(const Tensor& x, double p, bool training = true);
// Per element; pred and target have the same shape.
Tensor mse_loss(const Tensor& pred, const Tensor& target, Reduction r = Reduction::mean);
Tensor l1_loss(const Tensor& pred, const Tensor& target, Reduction r = Reduction::mean);
// Stable: max(x, 0) - x*y + log1p(exp(-|x|)).
Tensor bce_with_logits(const Tensor& logits, const Tensor& targets, Reduction r = Reduction::mean);
// The losses as `r` asks: their mean, their sum, or themselves.
Tensor reduce_losses(const Tensor& losses, Reduction r);
// A loss over class ids with PyTorch's ignore_index: the examples whose id
// is `ignore` count for nothing (0 among the losses of reduction none), the
// mean is over the others (NaN when there are none, as in PyTorch).
// `losses_of` gives the per-example losses of ids in range.
Tensor ignoring_index(const Tensor& ids, int64_t ignore, Reduction r,
                      const std::function<Tensor(const Tensor& ids)>& losses_of);

}  // namespace nn::backend
