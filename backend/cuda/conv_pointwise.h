// Pointwise convolutions (a 1x1 kernel, stride 1, no padding, one group) on
// NCHW tensors as cuBLAS products: per image n, y[n] = w @ x[n] with x[n]
// the [C, H * W] matrix of its channels. conv2d (nn_conv.cpp) times them
// against cuDNN's algorithms and takes them where they are faster, as they
// are for most of ResNet-50's 1x1 convolutions. Every product's sums come
// in a fixed order: the results repeat bit for bit.
#pragma once
#include "backend/attrs.h"
#include "backend/cuda/cuda_device.h"

namespace nn::backend::cuda {

// Whether a convolution of weight shape w with these attributes is pointwise.
bool is_pointwise(const Shape& w, const Attrs& attrs);

// y [N, O, H, W] = conv2d(x [N, C, H, W], w [O, C, 1, 1]).
void pointwise_forward(CudaDevice& dev, const Tensor& x, const Tensor& w, Tensor& y);
// dx [N, C, H, W] from dy [N, O, H, W] and w.
void pointwise_backward_input(CudaDevice& dev, const Tensor& dy, const Tensor& w, Tensor& dx);
// dw [O, C, 1, 1] from dy [N, O, H, W] and x: one product over N * H * W,
// with dy and x copied images-inside ([O, N, H * W]) into scratch memory.
void pointwise_backward_weight(CudaDevice& dev, const Tensor& dy, const Tensor& x, Tensor& dw);

}  // namespace nn::backend::cuda
