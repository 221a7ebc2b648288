// batch_norm_backward through oneDNN's batch-normalisation primitive (where
// built in and on, backend/onednn.h), for f32 activations in the blocked
// layout nChw16c (backend/ops/blocked_layout.h), which oneDNN's own kernels
// run in. There it took a third to a half of nn's kernel's time (ResNet-8's
// shapes, batch 32: 77 against 196 us at 16x32x32, 17 against 53 us at
// 64x8x8), which accumulates in double. Its forward was slower than nn's
// (72 against 48 us), and so was the NCHW layout (457 against 178 us
// backward): those stay nn's.
#pragma once
#include "backend/shape.h"

namespace nn::backend {

// x, dy and dx [N, C/16, H, W, 16] for the activation `plain` [N, C, H, W];
// gamma, mean and var [C]; dgamma and dbeta [C] out. Returns false, having
// written nothing, where oneDNN is off or refuses the shape; the caller then
// runs its own kernel.
bool onednn_batch_norm_backward(const Shape& plain, double eps, const float* dy, const float* x, const float* gamma,
                                const float* mean, const float* var, float* dx, float* dgamma, float* dbeta);
// How many shapes hold primitives now.
size_t onednn_batch_norm_cached();

}  // namespace nn::backend
