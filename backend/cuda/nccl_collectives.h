// Which way this run's collectives of CUDA tensors go (cuda/nccl_collectives.cpp).
#pragma once

namespace nn::backend::cuda {

// Whether they go through NCCL: known after the first one (false before,
// and in a build without NCCL).
bool nccl_chosen();

}  // namespace nn::backend::cuda
