// Block: a chunk of device memory with an atomic reference count, taken from
// the device's pool on first use (lazy allocation) and returned to it when
// the last reference goes.
#pragma once
#include <cstddef>

#include "backend/device.h"
#include "backend/ref.h"

namespace nn::backend {

class Block : public RefCounted {
 public:
  Block(Device* device, size_t bytes) : device_(device), bytes_(bytes) {}
  // Memory owned by someone else (a host's buffer): never returned to the pool.
  Block(Device* device, void* external, size_t bytes)
      : device_(device), bytes_(bytes), ptr_(external), external_(true) {}
  ~Block() {
    if (ptr_ && !external_) device_->pool().release(ptr_, bytes_);
  }
  Device* device() const { return device_; }
  size_t bytes() const { return bytes_; }
  bool allocated() const { return ptr_ != nullptr; }
  void* data() {
    if (!ptr_) ptr_ = device_->pool().allocate(bytes_);
    return ptr_;
  }

 private:
  Device* device_;
  size_t bytes_;
  void* ptr_ = nullptr;
  bool external_ = false;
};

using BlockPtr = Ref<Block>;

}  // namespace nn::backend
