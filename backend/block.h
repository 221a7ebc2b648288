// Block: a chunk of device memory with an atomic reference count, taken from
// the device's pool on first use (lazy allocation) and returned to it when
// the last reference goes.
#pragma once
#include <cstddef>
#include <string>

#include "backend/device.h"
#include "backend/ref.h"

namespace nn::backend {

// The mark of a block that belongs to a graph trace: such a block stands for
// a value that exists only when the graph runs, so it never gets memory, and
// reading it is an error the mark words (ir/tracer.h).
struct TraceMark : RefCounted {
  virtual ~TraceMark() = default;
  virtual std::string misuse() const = 0;
};

// Scratch memory (backend/scratch.h): whether a scratch scope for `device`
// is open on this thread, and memory from it.
bool scratch_open(Device* device);
void* take_scratch(Device* device, size_t bytes);

class Block : public RefCounted {
 public:
  // Made while a scratch scope is open (a kernel's temporary in a graph
  // run), the block takes its memory from the scope when it has room.
  Block(Device* device, size_t bytes) : device_(device), bytes_(bytes), scratch_(scratch_open(device)) {}
  // Memory owned by someone else (a host's buffer): never returned to the pool.
  Block(Device* device, void* external, size_t bytes)
      : device_(device), bytes_(bytes), ptr_(external), external_(true) {}
  Block(Device* device, size_t bytes, Ref<TraceMark> mark) : device_(device), bytes_(bytes), mark_(std::move(mark)) {}
  ~Block() {
    if (ptr_ && !external_) device_->pool().release(ptr_, bytes_, exact_);
  }
  // Before its memory is taken: ask the pool for exactly these bytes, not
  // a size class (CachingPool::allocate).
  void set_exact() { exact_ = true; }
  Device* device() const { return device_; }
  size_t bytes() const { return bytes_; }
  bool allocated() const { return ptr_ != nullptr; }
  TraceMark* trace_mark() const { return mark_.get(); }
  void* data() {
    if (!ptr_) allocate();
    return ptr_;
  }

 private:
  Device* device_;
  size_t bytes_;
  void* ptr_ = nullptr;
  bool external_ = false;
  bool scratch_ = false;
  bool exact_ = false;
  Ref<TraceMark> mark_;
  void allocate();  // from the pool; a traced block throws its mark's error
};

using BlockPtr = Ref<Block>;

}  // namespace nn::backend
