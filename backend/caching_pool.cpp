// The caching pool: free lists keyed by size class.
#include "backend/caching_pool.h"

#include <fmt/format.h>

#include "backend/error.h"

namespace nn::backend {

std::string format_bytes(size_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  if (b < (size_t(1) << 20)) return fmt::format("{:.1f} KB", b / 1024.0);
  if (b < (size_t(1) << 30)) return fmt::format("{:.1f} MB", b / 1048576.0);
  return fmt::format("{:.2f} GB", b / 1073741824.0);
}

CachingPool::CachingPool(std::string device_name, RawAlloc alloc, RawFree free)
    : device_(std::move(device_name)), alloc_(std::move(alloc)), free_(std::move(free)) {}

CachingPool::~CachingPool() { empty_cache_locked(); }

// Small requests round up to 512 bytes, large ones to 1 MiB, so that blocks
// of nearly the same size share a class and get reused.
size_t CachingPool::size_class(size_t bytes) {
  if (bytes == 0) bytes = 1;
  const size_t small = 512, large = size_t(1) << 20;
  if (bytes < large) return (bytes + small - 1) / small * small;
  return (bytes + large - 1) / large * large;
}

void* CachingPool::allocate(size_t bytes, bool exact) {
  size_t sz = size_of(bytes, exact);
  std::lock_guard lock(mu_);
  auto it = free_lists_.find(sz);
  if (it != free_lists_.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    st_.cached -= sz;
    st_.current += sz;
    st_.peak = std::max(st_.peak, st_.current);
    st_.window_peak = std::max(st_.window_peak, st_.current);
    ++st_.reuses;
    return p;
  }
  auto over_limit = [&] { return st_.limit && st_.current + st_.cached + sz > st_.limit; };
  if (over_limit()) empty_cache_locked();
  if (over_limit())
    throw OutOfMemory(fmt::format("out of memory on {}: asked for {} ({} bytes) with {} in use, limit {}",
                                  device_, format_bytes(bytes), bytes, format_bytes(st_.current),
                                  format_bytes(st_.limit)),
                      bytes);
  void* p = alloc_(sz);
  if (!p) {
    empty_cache_locked();
    p = alloc_(sz);
  }
  if (!p)
    throw OutOfMemory(fmt::format("out of memory on {}: asked for {} ({} bytes) with {} in use",
                                  device_, format_bytes(bytes), bytes, format_bytes(st_.current)),
                      bytes);
  st_.current += sz;
  st_.peak = std::max(st_.peak, st_.current);
  st_.window_peak = std::max(st_.window_peak, st_.current);
  ++st_.allocations;
  return p;
}

void CachingPool::release(void* p, size_t bytes, bool exact) {
  size_t sz = size_of(bytes, exact);
  std::lock_guard lock(mu_);
  free_lists_[sz].push_back(p);
  st_.current -= sz;
  st_.cached += sz;
}

void CachingPool::empty_cache_locked() {
  for (auto& [sz, list] : free_lists_)
    for (void* p : list) free_(p, sz);
  free_lists_.clear();
  st_.cached = 0;
}

void CachingPool::empty_cache() {
  std::lock_guard lock(mu_);
  empty_cache_locked();
}

MemoryStats CachingPool::stats() const {
  std::lock_guard lock(mu_);
  return st_;
}

void CachingPool::set_limit(size_t bytes) {
  std::lock_guard lock(mu_);
  st_.limit = bytes;
}

size_t CachingPool::begin_window() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t enclosing = st_.window_peak;
  st_.window_peak = st_.current;
  return enclosing;
}

void CachingPool::end_window(size_t enclosing) {
  std::lock_guard<std::mutex> lock(mu_);
  st_.window_peak = std::max(st_.window_peak, enclosing);
}

void CachingPool::reset_peak() {
  std::lock_guard lock(mu_);
  st_.peak = st_.current;
}

}  // namespace nn::backend
