// A build without the CUDA backend: no GPU, no CUDA kernels.
#include "backend/cuda_backend.h"

namespace nn::backend {

bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
Device* cuda_device(int) { return nullptr; }
std::string cuda_unavailable_reason() { return "this build of nn has no CUDA backend"; }
std::string cuda_load_error() { return ""; }
void register_cuda_kernels(Registry&) {}
bool gpu_fusion() { return false; }
void set_gpu_fusion(bool) {}
bool gpu_deterministic_convolutions() { return true; }
void set_gpu_deterministic_convolutions(bool) {}
bool gpu_tf32() { return false; }
void set_gpu_tf32(bool) {}

}  // namespace nn::backend
