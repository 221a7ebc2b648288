// Devices: where memory lives and kernels run. The CPU device exists always;
// CUDA devices exist when the CUDA backend is built and a GPU is present
// (backend/cuda_backend.h).
#pragma once
#include <memory>
#include <string>

#include "backend/caching_pool.h"

namespace nn::backend {

enum class DeviceType : uint8_t { cpu, cuda };

class Device {
 public:
  virtual ~Device() = default;
  DeviceType type() const { return type_; }
  int index() const { return index_; }
  const std::string& name() const { return name_; }  // "cpu", "cuda:0"
  CachingPool& pool() { return *pool_; }
  MemoryStats stats() const { return pool_->stats(); }
  // Copies between this device's memory and host memory.
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* src, size_t bytes) = 0;
  // Copies within this device's memory.
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  // Waits until the work queued on the device is done (kernels on a GPU run
  // asynchronously); the CPU's is done when its calls return.
  virtual void synchronize() {}

 protected:
  Device(DeviceType t, int index, std::string name) : type_(t), index_(index), name_(std::move(name)) {}
  std::unique_ptr<CachingPool> pool_;

 private:
  DeviceType type_;
  int index_;
  std::string name_;
};

Device* cpu_device();
// "cpu", "cuda", "cuda:1"; null when no such device is available.
Device* find_device(const std::string& name);
// Why find_device(name) gave null, in words for a diagnostic: "this build of
// nn has no CUDA backend", "no CUDA GPU was found (...)", ...
std::string device_unavailable_reason(const std::string& name);

// The device that ops without tensor inputs (zeros, arange, rand, ...) make
// their results on, and where host data becomes tensors: the CPU unless
// `--device` or an interpreter's options say otherwise. Process-wide, like
// the seed; a DeviceScope overrides it for the calling thread.
Device* default_device();
void set_default_device(Device* d);  // null: the CPU

// Makes `d` the calling thread's default device until the scope ends
// (zeros_like(x) makes its zeros where x lives).
class DeviceScope {
 public:
  explicit DeviceScope(Device* d);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device* saved_;
};

// Threads used by CPU kernels and by OpenBLAS.
void set_num_threads(int n);
int num_threads();

}  // namespace nn::backend
