// The host side of the elementwise kernels: turns tensors into an EwLaunch
// (NumPy broadcasting of every input to the output's shape, dims merged
// where every input is contiguous across them, host numbers passed by value)
// and runs it on the output's GPU.
#pragma once
#include <initializer_list>
#include <span>

#include "backend/cuda/cuda_device.h"
#include "backend/cuda/elementwise_kernels.h"

namespace nn::backend::cuda {

// out = op(in...), computing in `compute`; input k is read as read_as[k]
// (a host number is converted to it here, with the CPU's rules). Integer
// pow and mod errors are thrown as the CPU kernels word them.
void run_elementwise(const char* name, OpId op, DType compute, Tensor& out, std::span<const Tensor> in,
                     std::initializer_list<DType> read_as, math::EwParams params = {});

}  // namespace nn::backend::cuda
