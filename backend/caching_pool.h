// A caching pool by size class (SINGA's CnMem, PyTorch's caching allocator):
// a freed block goes back to a free list of its class and is handed out again
// without a system allocation. Counts the bytes in use, their peak, the bytes
// cached, and enforces an optional limit.
#pragma once
#include <algorithm>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace nn::backend {

struct MemoryStats {
  size_t current = 0;  // bytes handed out and not yet returned
  size_t peak = 0;     // highest `current` since start or reset_peak()
  size_t window_peak = 0;  // highest `current` since begin_window()
  size_t cached = 0;   // bytes kept in free lists
  size_t limit = 0;    // 0: no limit
  size_t allocations = 0;  // system allocations made
  size_t reuses = 0;       // requests served from the free lists
};

class CachingPool {
 public:
  using RawAlloc = std::function<void*(size_t)>;
  using RawFree = std::function<void(void*, size_t)>;
  CachingPool(std::string device_name, RawAlloc alloc, RawFree free);
  ~CachingPool();

  // Returns memory for at least `bytes`; throws OutOfMemory with the bytes
  // asked, the device and what is in use when neither the cache nor the
  // system can give it. `exact`: rounded to 512 bytes only, not to a size
  // class, for a block that is asked for again at the same size (a graph's
  // arena) and would only waste the rest of a class. release() takes the
  // same `exact`.
  void* allocate(size_t bytes, bool exact = false);
  void release(void* p, size_t bytes, bool exact = false);
  void empty_cache();
  MemoryStats stats() const;
  void set_limit(size_t bytes);
  void reset_peak();
  // A window measures the peak of one piece of work (a graph run) without
  // disturbing an enclosing one: begin returns the enclosing window's peak,
  // which end takes back.
  size_t begin_window();
  void end_window(size_t enclosing);
  static size_t size_class(size_t bytes);
  static size_t size_of(size_t bytes, bool exact) {
    return exact ? (std::max<size_t>(bytes, 1) + 511) / 512 * 512 : size_class(bytes);
  }

 private:
  std::string device_;
  RawAlloc alloc_;
  RawFree free_;
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_lists_;
  MemoryStats st_;
  void empty_cache_locked();
};

}  // namespace nn::backend
