// f32 2-d convolutions through oneDNN (where built in and on,
// backend/onednn.h): forward (with bias), the input gradient and the weight
// gradient, on NCHW / OIHW tensors as nn stores them. Each returns false,
// having written nothing, when oneDNN is off or does not take the
// convolution; the caller then runs its im2col kernel.
#pragma once
#include "backend/ops/conv_geometry.h"

namespace nn::backend {

bool onednn_conv_forward(const ConvGeom& g, const float* x, const float* w, const float* b, float* y);
bool onednn_conv_backward_input(const ConvGeom& g, const float* dy, const float* w, float* dx);
bool onednn_conv_backward_weight(const ConvGeom& g, const float* dy, const float* x, float* dw);

}  // namespace nn::backend
