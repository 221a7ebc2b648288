// oneDNN (Intel's deep-learning primitives library, Debian's libdnnl-dev),
// where nn is built with it (NN_ONEDNN, cmake/onednn.cmake): f32 GEMM, the
// CPU convolutions and batch norm's backward run through it. Whether it is
// used can be switched off for the whole process: by the environment
// (NN_ONEDNN=0, read once) or by set_onednn_enabled, which tests and
// benchmarks use to compare it with the OpenBLAS, im2col and nn kernels that
// run without it.
#pragma once

namespace nn::backend {

// Whether nn was built with oneDNN.
bool onednn_built();
// Whether f32 GEMM and convolutions go to oneDNN now: built, and not off.
bool onednn_enabled();
// Ignored (stays off) where nn was built without oneDNN.
void set_onednn_enabled(bool on);

}  // namespace nn::backend
