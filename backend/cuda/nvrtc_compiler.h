// NVRTC: CUDA C++ sources compiled at run time (the fused kernels of GPU
// graphs, cuda/fused_source.h) into PTX for one compute capability. Each
// (source, capability) is compiled once per process and its PTX kept.
#pragma once
#include <string>

namespace nn::backend::cuda {

// The PTX of `source` for compute capability `arch` (90: sm_90). Throws
// Error with NVRTC's log when the source does not compile.
const std::string& nvrtc_ptx(const std::string& source, int arch);

// How many sources NVRTC has compiled in this process (the cache's misses).
size_t nvrtc_compilations();

}  // namespace nn::backend::cuda
