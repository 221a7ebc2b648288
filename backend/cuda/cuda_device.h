// A CUDA GPU as an nn Device: one stream on which every kernel and copy of
// the device is queued (so work runs in the order it was asked for, and a
// block returned to the pool may be handed out again at once), a caching
// pool over cudaMalloc, and the cuBLAS and cuDNN handles bound to the stream.
// Host reads (copy_to_host, item, printing) wait for the stream.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "backend/device.h"
#include "backend/tensor.h"

namespace nn::backend::cuda {

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int index);
  // Makes this GPU current for the calling thread (a cheap check when it is).
  void activate() const;
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas();
  cudnnHandle_t cudnn();
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_from_host(void* dst, const void* src, size_t bytes) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void synchronize() override;
  size_t total_memory() const { return total_memory_; }

 private:
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  size_t total_memory_ = 0;
};

// The GPU a tensor lives on (an Error when it is not on one).
CudaDevice& device_of(const Tensor& t);
// The GPU of a kernel call: that of the first input or output on a GPU,
// made current for the calling thread.
CudaDevice& call_device(std::span<const Tensor> in, std::span<Tensor> out);

// Errors of the CUDA libraries as nn Errors naming what failed.
void check(cudaError_t e, const char* what);
void check(cublasStatus_t s, const char* what);
void check(cudnnStatus_t s, const char* what);
// After a kernel launch: a bad launch configuration is reported at once.
void check_launch(const char* op);

// A tensor's data on the device: a GPU tensor's own memory, or a copy on
// `dev` of a CPU tensor (a host number, or ids given from host memory).
Tensor on_device(const Tensor& t, CudaDevice& dev);

// Scratch memory from the device's pool for the length of a kernel call.
Tensor scratch(CudaDevice& dev, size_t bytes);

// Reads an error flag a kernel may have raised (an int in device memory):
// waits for the stream. Returns the flag's value.
int read_flag(CudaDevice& dev, const Tensor& flag);
// A zeroed int flag in device memory.
Tensor new_flag(CudaDevice& dev);

}  // namespace nn::backend::cuda
