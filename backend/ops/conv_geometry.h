// The geometry of one 2-d convolution (NCHW input, OIHW weight), shared by
// the im2col kernels (nn_conv.cpp) and the oneDNN ones (conv_onednn.cpp).
#pragma once
#include <cstdint>

#include "backend/nn_ops.h"

namespace nn::backend {

// Everything the kernels need to know about one convolution.
struct ConvGeom {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t o = 0, kh = 0, kw = 0;       // weight [o, c/groups, kh, kw]
  int64_t oh = 0, ow = 0;              // output spatial size
  Pair stride{1, 1}, pad{0, 0}, dil{1, 1};
  int64_t groups = 1;
  int64_t cg() const { return c / groups; }          // input channels per group
  int64_t og() const { return o / groups; }          // output channels per group
  int64_t kg() const { return cg() * kh * kw; }      // im2col rows per group
  int64_t k() const { return c * kh * kw; }          // im2col rows
  int64_t p() const { return oh * ow; }              // im2col columns (output pixels)
  int64_t in_sample() const { return c * h * w; }
  int64_t out_sample() const { return o * p(); }
  // A 1x1 kernel that reads every pixel once: the input is its own im2col.
  bool pointwise() const {
    return kh == 1 && kw == 1 && stride[0] == 1 && stride[1] == 1 && pad[0] == 0 && pad[1] == 0;
  }
};

}  // namespace nn::backend
