// f32 2-d convolutions through oneDNN (where built in and on,
// backend/onednn.h): forward (with bias), the input gradient and the weight
// gradient, on NCHW / OIHW tensors as nn stores them. Each returns false,
// having written nothing, when oneDNN is off or does not take the
// convolution; the caller then runs its im2col kernel.
#pragma once
#include "backend/ops/conv_geometry.h"
#include "backend/parallel.h"

namespace nn::backend {

// ReLU in place as nn's relu has it, x < 0 ? 0 : x: a NaN stays NaN
// (oneDNN's own ReLU post-op, max(x, 0), would make it 0).
template <class T>
void relu_in_place(T* y, int64_t n) {
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = y[i] < T(0) ? T(0) : y[i];
  });
}

// relu: y = relu(conv), applied as each output leaves the primitive.
// blocked: the activations whose channels are a multiple of 16 (x, y, dx,
// dy) are in the nChw16c layout (backend/ops/blocked_layout.h), not NCHW.
bool onednn_conv_forward(const ConvGeom& g, const float* x, const float* w, const float* b, float* y,
                         bool relu = false, bool blocked = false);
// A max pool's window over a convolution's output: kernel, stride, padding
// and the pooled size.
struct PoolWindow {
  Pair k, stride, pad;
  int64_t oh = 0, ow = 0;
};
// y = max_pool(relu(conv)): the pool runs on the primitive's own (blocked)
// output, so only the pooled result is reordered to NCHW. A NaN in a window
// makes its maximum NaN, as nn's max_pool2d has it.
bool onednn_conv_relu_max_pool(const ConvGeom& g, const PoolWindow& p, const float* x, const float* w,
                               const float* b, float* y);
// How many convolutions hold primitives now (at most 64: the least recently
// used are dropped).
size_t onednn_conv_cached();
bool onednn_conv_backward_input(const ConvGeom& g, const float* dy, const float* w, float* dx, bool blocked = false);
bool onednn_conv_backward_weight(const ConvGeom& g, const float* dy, const float* x, float* dw, bool blocked = false);

}  // namespace nn::backend
