// The floor of a training step on this machine (issue goals "at most 1.3x
// the floor"): the multiply-adds of its products and convolutions, counted
// from a compiled graph, at the rate cblas_sgemm reaches on a 1024² product
// measured in the same run (the machine's speed drifts between runs).
#pragma once

#include "ir/graph.h"

namespace nn::bench {

// 2 x the multiply-adds of every matmul and convolution node of `g`
// (forward and both backwards; bias adds and epilogues are not counted).
double product_flops(const ir::Graph& g);

// cblas_sgemm's GFLOP/s on a 1024² f32 product with OpenBLAS's own
// `threads` threads (median of a few), after which OpenBLAS is set back to
// one thread, the setting nn's kernels run it with.
double sgemm_gflops(int threads);

}  // namespace nn::bench
