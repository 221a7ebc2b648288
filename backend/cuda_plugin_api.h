// The table through which the CUDA plugin (libnn_cuda.so, built from
// backend/cuda/ and entered in backend/cuda/plugin_entry.cpp) serves the
// loader (backend/cuda_plugin_loader.cpp). Both halves come from one build
// and share the C++ ABI; the plugin resolves the rest of the backend
// (Tensor, Registry, pools, dispatch) from the program or library that
// loads it, so there is one copy of every piece of backend state.
#pragma once
#include <cstddef>
#include <string>

#include "backend/attrs.h"
#include "backend/device.h"
#include "backend/op_registry.h"
#include "backend/tensor.h"

namespace nn::backend {

// Raised whenever the table or the types it passes change, so that a plugin
// from another build is refused with a diagnostic instead of crashing.
inline constexpr int kCudaPluginAbi = 1;

// A fingerprint of the types both halves share, so that a plugin whose
// build laid them out otherwise (an older OpDef, say) is refused too.
inline constexpr size_t cuda_plugin_layout() {
  return sizeof(OpDef) * 1000003 + sizeof(Tensor) * 10007 + sizeof(Attrs) * 101 + sizeof(Device);
}

struct CudaPluginApi {
  int abi;                 // kCudaPluginAbi of the plugin's build
  const char* version;     // NN_VERSION of the plugin's build
  size_t layout;           // cuda_plugin_layout() of the plugin's build
  int (*device_count)();
  Device* (*device)(int index);
  std::string (*unavailable_reason)();
  void (*register_kernels)(Registry& r);
  bool (*fusion)();
  void (*set_fusion)(bool on);
  bool (*deterministic_convolutions)();
  void (*set_deterministic_convolutions)(bool on);
  bool (*tf32)();
  void (*set_tf32)(bool on);
};

// The symbol the loader looks up: extern "C" const CudaPluginApi* nn_cuda_plugin();
inline constexpr const char* kCudaPluginEntry = "nn_cuda_plugin";
// The plugin's file name.
inline constexpr const char* kCudaPluginFile = "libnn_cuda.so";

}  // namespace nn::backend
