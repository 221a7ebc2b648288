// A GPU as type rules and passes see one: a device of type cuda that runs
// nothing (they read types only), for tests on machines without a GPU; and
// the GPU fusion switch set for one scope.
#pragma once
#include "backend/cuda_backend.h"
#include "backend/device.h"

namespace nntest {

struct FakeGpu : nn::backend::Device {
  FakeGpu() : Device(nn::backend::DeviceType::cuda, 0, "cuda:0") {}
  void copy_to_host(void*, const void*, size_t) override {}
  void copy_from_host(void*, const void*, size_t) override {}
  void copy(void*, const void*, size_t) override {}
};

// GPU fusion on or off until the end of the scope, then as it was.
class GpuFusionScope {
 public:
  explicit GpuFusionScope(bool on) : before_(nn::backend::gpu_fusion()) { nn::backend::set_gpu_fusion(on); }
  ~GpuFusionScope() { nn::backend::set_gpu_fusion(before_); }
  GpuFusionScope(const GpuFusionScope&) = delete;
  GpuFusionScope& operator=(const GpuFusionScope&) = delete;

 private:
  bool before_;
};

}  // namespace nntest
