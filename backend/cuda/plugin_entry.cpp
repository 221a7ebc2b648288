// The CUDA plugin's one entry point: the table of backend/cuda_plugin_api.h,
// filled with this backend's implementations of backend/cuda_backend.h.
// The loader in the host defines the same names; the plugin's version
// script (cmake/cuda_plugin.map) keeps these ones local, so the table and
// the plugin's own calls reach the plugin's code, never the loader's.
#include "backend/cuda_backend.h"
#include "backend/cuda_plugin_api.h"

namespace {

const nn::backend::CudaPluginApi kApi = {
    nn::backend::kCudaPluginAbi,
    NN_VERSION,
    nn::backend::cuda_plugin_layout(),
    nn::backend::cuda_device_count,
    nn::backend::cuda_device,
    nn::backend::cuda_unavailable_reason,
    nn::backend::register_cuda_kernels,
    nn::backend::gpu_fusion,
    nn::backend::set_gpu_fusion,
    nn::backend::gpu_deterministic_convolutions,
    nn::backend::set_gpu_deterministic_convolutions,
    nn::backend::gpu_tf32,
    nn::backend::set_gpu_tf32,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const nn::backend::CudaPluginApi* nn_cuda_plugin() { return &kApi; }
