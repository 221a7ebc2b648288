// Devices: where memory lives and kernels run. The CPU device exists always;
// CUDA devices register themselves when that backend is built.
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

// Threads used by CPU kernels and by OpenBLAS.
void set_num_threads(int n);
int num_threads();

}  // namespace nn::backend
