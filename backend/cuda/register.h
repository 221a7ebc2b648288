// Registration of the CUDA kernels, one call per op family (mirroring
// backend/ops/register.h): each fills the `cuda` field of its ops' entries.
#pragma once

namespace nn::backend {
class Registry;
}

namespace nn::backend::cuda {

void register_elementwise(Registry& r);  // cuda/elementwise_ops.cpp (the elementwise tables and where)
void register_creation(Registry& r);   // cuda/creation.cpp (incl. random)
void register_cast(Registry& r);       // cuda/cast.cpp (cast, to_device)
void register_reduction(Registry& r);  // cuda/reduction.cpp
void register_matmul(Registry& r);     // cuda/matmul.cpp (matmul, matmul_tn, matmul_nt)
void register_shape(Registry& r);      // cuda/shape.cpp
void register_index(Registry& r);      // cuda/index.cpp
void register_nn_conv(Registry& r);    // cuda/nn_conv.cpp (cuDNN)
void register_nn_pool(Registry& r);    // cuda/nn_pool.cpp
void register_nn_norm(Registry& r);    // cuda/nn_norm.cpp
void register_nn_softmax(Registry& r); // cuda/nn_softmax.cpp (softmax, losses, one_hot)
void register_fused(Registry& r);      // cuda/fused.cpp (NVRTC)
void register_nccl(Registry& r);       // cuda/nccl_collectives.cpp, where NCCL was found

inline void register_all(Registry& r) {
  register_elementwise(r);
  register_creation(r);
  register_cast(r);
  register_reduction(r);
  register_matmul(r);
  register_shape(r);
  register_index(r);
  register_nn_conv(r);
  register_nn_pool(r);
  register_nn_norm(r);
  register_nn_softmax(r);
  register_fused(r);
#if NN_HAVE_NCCL
  register_nccl(r);
#endif
}

}  // namespace nn::backend::cuda
