// MemoryAccount: the CPU memory one interpreter holds (its tensors' blocks
// and its host values: strings, lists, tuples), checked against its own
// cap. The pools are shared by the process; an account is not: each block
// and host value remembers the account that paid for it and refunds it when
// freed, on whatever thread that happens and after the interpreter is gone.
#pragma once
#include <atomic>
#include <cstddef>

#include "backend/ref.h"

namespace nn::backend {

class MemoryAccount : public RefCounted {
 public:
  explicit MemoryAccount(size_t limit) : limit_(limit) {}
  // Adds `bytes` (what the pool hands out for a request of `asked`); over
  // the limit nothing is added and OutOfMemory says what was asked, what is
  // in use and the limit.
  void charge(size_t bytes, size_t asked);
  void refund(size_t bytes) { current_.fetch_sub(bytes, std::memory_order_relaxed); }

 private:
  std::atomic<size_t> current_{0};
  const size_t limit_;
};

// The account the calling thread charges (RunScope installs a capped
// interpreter's, backend/run_context.h); null outside any, where nothing is
// counted.
MemoryAccount* current_account();
void set_current_account(MemoryAccount* account);

// Nothing made on this thread while it lives is counted: what is shared by
// every interpreter (the stdlib's syntax tree and its literals).
class UncountedScope {
 public:
  UncountedScope() : saved_(current_account()) { set_current_account(nullptr); }
  ~UncountedScope() { set_current_account(saved_); }
  UncountedScope(const UncountedScope&) = delete;
  UncountedScope& operator=(const UncountedScope&) = delete;

 private:
  MemoryAccount* saved_;
};

// A charge held by a host value, resized as the value grows and refunded
// when it goes. Empty (and free) outside any account.
class AccountCharge {
 public:
  AccountCharge() = default;
  AccountCharge(const AccountCharge&) = delete;
  AccountCharge& operator=(const AccountCharge&) = delete;
  ~AccountCharge() {
    if (account_) account_->refund(bytes_);
  }
  // Makes the charge `bytes` against the current account (the first call
  // picks it); throws OutOfMemory, keeping the old charge, past the limit.
  void resize(size_t bytes);

 private:
  Ref<MemoryAccount> account_;
  size_t bytes_ = 0;
};

}  // namespace nn::backend
