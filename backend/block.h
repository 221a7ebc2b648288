// Block: a chunk of device memory with an atomic reference count, taken from
// the device's pool on first use (lazy allocation) and returned to it when
// the last reference goes.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "backend/device.h"
#include "backend/memory_account.h"
#include "backend/ref.h"
#include "backend/source_loc.h"

namespace nn::backend {

// The mark of the blocks of one graph trace: such a block stands for a
// value that exists only when the graph runs (Block::trace_value), so it
// never gets memory, and reading it is an error the mark words (ir/tracer.h).
struct TraceMark : RefCounted {
  virtual ~TraceMark() = default;
  virtual std::string misuse(uint32_t value) const = 0;
};

// Who gives back a block's memory taken elsewhere than the pool, when it
// goes (after the last block holding it).
struct MemoryOwner : RefCounted {
  virtual ~MemoryOwner() = default;
};

// Scratch memory (backend/scratch.h): whether a scratch scope for `device`
// is open on this thread, and memory from it.
bool scratch_open(Device* device);
void* take_scratch(Device* device, size_t bytes);

// In-place writes into any block so far (Block::note_write), on every
// thread: an autodiff node that saw the same count when its op ran knows
// that none of its inputs has changed since, without reading their blocks.
namespace detail {
inline std::atomic<uint64_t> g_writes{0};
}  // namespace detail
inline uint64_t writes_so_far() { return detail::g_writes.load(std::memory_order_relaxed); }

class Block : public RefCounted {
 public:
  // Made while a scratch scope is open (a kernel's temporary in a graph
  // run), the block takes its memory from the scope when it has room.
  Block(Device* device, size_t bytes) : device_(device), bytes_(bytes), scratch_(scratch_open(device)) {}
  // Memory owned by someone else (a host's buffer): never returned to the pool.
  Block(Device* device, void* external, size_t bytes, Ref<MemoryOwner> owner = {})
      : device_(device), bytes_(bytes), ptr_(external), external_(true), owner_(std::move(owner)) {}
  Block(Device* device, size_t bytes, Ref<TraceMark> mark, uint32_t value)
      : device_(device), bytes_(bytes), trace_value_(value), mark_(std::move(mark)) {}
  ~Block() {
    if (ptr_ && !external_) device_->pool().release(ptr_, bytes_, exact_);
    if (account_) account_->refund(CachingPool::size_of(bytes_, exact_));
  }
  // Before its memory is taken: ask the pool for exactly these bytes, not
  // a size class (CachingPool::allocate).
  void set_exact() { exact_ = true; }
  Device* device() const { return device_; }
  size_t bytes() const { return bytes_; }
  bool allocated() const { return ptr_ != nullptr; }
  TraceMark* trace_mark() const { return mark_.get(); }
  // The value of its trace a marked block stands for now; an in-place op
  // in the trace moves it on.
  uint32_t trace_value() const { return trace_value_; }
  void set_trace_value(uint32_t v) { trace_value_ = v; }
  void* data() {
    if (!ptr_) allocate();
    return ptr_;
  }
  // In-place writes into memory that already held a value (`x -= v`,
  // `x[i] = v`, a graph's state update): how many, and the script location
  // of the last. Autodiff compares the count with the one it saw when an op
  // saved the tensor for its backward (SPEC §17). Views share the block, and
  // so the count.
  uint32_t version() const { return version_; }
  const SourceLoc& written_at() const { return written_at_; }
  void note_write() {
    ++version_;
    written_at_ = script_loc();
    detail::g_writes.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  Device* device_;
  size_t bytes_;
  void* ptr_ = nullptr;
  bool external_ = false;
  bool scratch_ = false;
  bool exact_ = false;
  uint32_t version_ = 0;
  uint32_t trace_value_ = 0;
  SourceLoc written_at_;
  Ref<TraceMark> mark_;
  Ref<MemoryOwner> owner_;
  Ref<MemoryAccount> account_;  // what paid for CPU memory from the pool
  void allocate();  // from the pool; a traced block throws its mark's error
};

using BlockPtr = Ref<Block>;

}  // namespace nn::backend
