// Ctrl-C: a process-wide request to stop the code that runs. Set from a
// signal handler; the interpreter checks it at each statement, the graph
// executor between nodes, long kernels between chunks. Whoever sees it first
// takes it (clearing it) and stops with "interrupted".
#pragma once
#include <atomic>

namespace nn::backend {

inline std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the interrupt flag is set from a signal handler");

inline void request_interrupt() noexcept { g_interrupt.store(true, std::memory_order_relaxed); }
inline void clear_interrupt() noexcept { g_interrupt.store(false, std::memory_order_relaxed); }
// A long kernel stops its remaining chunks early when this is true; dispatch
// then reports "interrupted" (the output is not used).
inline bool interrupt_requested() noexcept { return g_interrupt.load(std::memory_order_relaxed); }
// True once per request: the caller then stops.
inline bool take_interrupt() noexcept {
  return g_interrupt.load(std::memory_order_relaxed) && g_interrupt.exchange(false);
}

}  // namespace nn::backend
