// Requests to stop the code that runs: Ctrl-C (process-wide, set from a
// signal handler) and the running interpreter's own (an embedding host's
// interrupt() or time limit; RunScope installs it on the calling thread).
// The interpreter checks them at each statement, the graph executor between
// nodes, long kernels between chunks. Whoever sees a request first takes it
// (clearing it) and stops with "interrupted".
#pragma once
#include <atomic>

namespace nn::backend {

inline std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the interrupt flag is set from a signal handler");
// The stop request of the interpreter running on this thread (null: none;
// installed by RunScope, backend/run_context.h).
std::atomic<bool>* current_stop_request();

inline void request_interrupt() noexcept { g_interrupt.store(true, std::memory_order_relaxed); }
inline void clear_interrupt() noexcept { g_interrupt.store(false, std::memory_order_relaxed); }

// What a long kernel checks between chunks to stop its remaining ones early;
// dispatch then reports "interrupted" (the output is not used). Made on the
// calling thread, before a parallel region: its worker threads run no
// interpreter of their own.
class InterruptCheck {
 public:
  bool operator()() const noexcept {
    return g_interrupt.load(std::memory_order_relaxed) || (own_ && own_->load(std::memory_order_relaxed));
  }

 private:
  std::atomic<bool>* own_ = current_stop_request();
};

// True once per request: the caller then stops.
inline bool take_interrupt() noexcept {
  if (g_interrupt.load(std::memory_order_relaxed) && g_interrupt.exchange(false)) return true;
  std::atomic<bool>* own = current_stop_request();
  return own && own->load(std::memory_order_relaxed) && own->exchange(false);
}

}  // namespace nn::backend
