// The strided copy on a GPU: the same StridedCopy description as the CPU
// kernels use (backend/ops/strided_copy.h), simplified the same way, run by
// the data-movement kernel on the device's stream.
#pragma once
#include "backend/cuda/cuda_device.h"
#include "backend/ops/strided_copy.h"

namespace nn::backend::cuda {

void strided_copy(CudaDevice& dev, const void* src, void* dst, size_t elem_size, StridedCopy c);

}  // namespace nn::backend::cuda
