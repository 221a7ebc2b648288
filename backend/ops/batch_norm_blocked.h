// Batch norm's CPU kernels for x in the nChw16c layout (the ops' attribute
// `blocked`, backend/ops/blocked_layout.h), f32 and f64; the operands and
// results are batch_norm_train's, batch_norm_apply's and
// batch_norm_backward's (backend/ops/nn_norm.cpp), x and y or dx blocked.
#pragma once
#include <span>

#include "backend/tensor.h"

namespace nn::backend {

void bn_train_blocked(std::span<const Tensor> in, std::span<Tensor> out, double eps);
void bn_apply_blocked(std::span<const Tensor> in, std::span<Tensor> out, double eps);
void bn_backward_blocked(std::span<const Tensor> in, std::span<Tensor> out, double eps);

}  // namespace nn::backend
