// Per-interpreter memory accounts (backend/memory_account.h).
#include "backend/memory_account.h"

#include <fmt/format.h>

#include "backend/error.h"

namespace nn::backend {
namespace {
thread_local MemoryAccount* t_account = nullptr;
}  // namespace

MemoryAccount* current_account() { return t_account; }
void set_current_account(MemoryAccount* account) { t_account = account; }

void MemoryAccount::charge(size_t bytes, size_t asked) {
  size_t now = current_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (limit_ && now > limit_) {
    current_.fetch_sub(bytes, std::memory_order_relaxed);
    throw OutOfMemory(fmt::format("out of memory on cpu: asked for {} ({} bytes) with {} in use, limit {}",
                                  format_bytes(asked), asked, format_bytes(now - bytes), format_bytes(limit_)),
                      asked);
  }
  for (size_t p = peak_.load(std::memory_order_relaxed);
       now > p && !peak_.compare_exchange_weak(p, now, std::memory_order_relaxed);) {
  }
}

void AccountCharge::resize(size_t bytes) {
  if (bytes == bytes_) return;
  if (!account_) {
    if (!t_account || bytes == 0) return;
    account_ = Ref<MemoryAccount>(t_account);
  }
  if (bytes > bytes_) account_->charge(bytes - bytes_, bytes - bytes_);
  else account_->refund(bytes_ - bytes);
  bytes_ = bytes;
}

}  // namespace nn::backend
