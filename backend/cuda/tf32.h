// The TF32 switch (cuda_backend.h's gpu_tf32): off unless NN_CUDA_TF32=1 or
// a host turns it on. When on, f32 matrix products (gemm.h) and
// convolutions (nn_conv.cpp) may round their operands to TF32 (10-bit
// mantissas) on Tensor Cores, as PyTorch's allow_tf32 lets them.
#pragma once
#include <atomic>

namespace nn::backend::cuda {

std::atomic<bool>& tf32_switch();

}  // namespace nn::backend::cuda
