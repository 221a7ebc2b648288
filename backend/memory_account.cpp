// Per-interpreter memory accounts (backend/memory_account.h).
#include "backend/memory_account.h"

#include <fmt/format.h>

#include "backend/error.h"

namespace nn::backend {
void MemoryAccount::charge(size_t bytes, size_t asked) {
  size_t now = current_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (now > limit_) {
    current_.fetch_sub(bytes, std::memory_order_relaxed);
    throw OutOfMemory(fmt::format("out of memory on cpu: asked for {} ({} bytes) with {} in use, limit {}",
                                  format_bytes(asked), asked, format_bytes(now - bytes), format_bytes(limit_)),
                      asked);
  }
}

void AccountCharge::resize(size_t bytes) {
  if (bytes == bytes_) return;
  if (!account_) {
    MemoryAccount* current = current_account();
    if (!current || bytes == 0) return;
    account_ = Ref<MemoryAccount>(current);
  }
  if (bytes > bytes_) account_->charge(bytes - bytes_, bytes - bytes_);
  else account_->refund(bytes_ - bytes);
  bytes_ = bytes;
}

}  // namespace nn::backend
