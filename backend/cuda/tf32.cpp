// The TF32 switch (tf32.h).
#include "backend/cuda/tf32.h"

#include <cstdlib>
#include <string>

#include "backend/cuda_backend.h"

namespace nn::backend::cuda {

std::atomic<bool>& tf32_switch() {
  static std::atomic<bool> on = [] {
    const char* v = std::getenv("NN_CUDA_TF32");
    return v && std::string(v) == "1";
  }();
  return on;
}

}  // namespace nn::backend::cuda

namespace nn::backend {
bool gpu_tf32() { return cuda::tf32_switch().load(); }
void set_gpu_tf32(bool on) { cuda::tf32_switch().store(on); }
}  // namespace nn::backend
