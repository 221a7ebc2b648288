// The CUDA backend as the rest of the backend sees it. backend/cuda/ holds
// it when nn is built with CUDA (CMake option NN_CUDA), as a plugin
// (libnn_cuda.so) that backend/cuda_plugin_loader.cpp loads the first time
// a GPU is asked for, so that a CPU run maps no CUDA library; otherwise
// backend/cuda_absent.cpp answers that there is no GPU. Nothing here needs
// the CUDA headers. The switches below keep their values whether or not the
// plugin is loaded yet.
#pragma once
#include <string>

namespace nn::backend {

class Device;
class Registry;

// True when this build has the CUDA backend.
bool cuda_built();
// The GPUs the CUDA runtime sees; 0 without a GPU, a driver or the backend.
int cuda_device_count();
// GPU `index` (cuda:index); null when there is no such GPU.
Device* cuda_device(int index);
// Why there is no GPU, as the CUDA runtime words it.
std::string cuda_unavailable_reason();
// Why the CUDA backend of this build could not be loaded (its plugin
// missing, not loadable, or from another build); empty once it is loaded,
// and in a build without it. Loads it when that was not tried yet.
std::string cuda_load_error();
// Fills the `cuda` kernel of each op the backend has one for, once the
// backend is loaded (no GPU is touched). The registry calls it when it is
// built; loading the plugin later calls it then.
void register_cuda_kernels(Registry& r);
// Whether graph fusion makes fused kernels for GPU graphs (compiled with
// NVRTC, backend/cuda/fused.cpp). On unless NN_CUDA_FUSION=0 (or a host
// turns it off); always off without the backend.
bool gpu_fusion();
void set_gpu_fusion(bool on);
// Whether conv2d and its gradients on the GPU take only cuDNN algorithms
// that give the same bits run after run. On unless NN_CUDNN_ALGOS=fastest
// (or a host turns it off): the others may add in another order each run,
// and are faster on some geometries. Always on without the backend.
bool gpu_deterministic_convolutions();
void set_gpu_deterministic_convolutions(bool on);
// Whether f32 matrix products and convolutions on the GPU may use TF32
// Tensor Cores (operands rounded to 10-bit mantissas, sums in f32), as
// PyTorch's allow_tf32 does. Off unless NN_CUDA_TF32=1 (or a host turns it
// on): f32 means f32. Always off without the backend.
bool gpu_tf32();
void set_gpu_tf32(bool on);

}  // namespace nn::backend
