// Scratch memory for kernels out of a graph run's arena. While a
// ScratchScope is open on a thread, a block made on that thread for the
// scope's device (a kernel's temporary: an im2col buffer, a converted
// operand) takes its memory from the scope's range when it has room, rather
// than from the pool. The executor opens one around each kernel call, over
// the part of the arena no value uses at that step, so the temporaries cost
// nothing on top of the arena. The memory is never returned to the pool;
// the range is free again once the kernel returns and its temporaries are
// gone. Blocks made on other threads (a kernel's workers) use the pool.
#pragma once
#include <cstddef>

#include "backend/block.h"

namespace nn::backend {

class ScratchScope {
 public:
  // [offset, offset + bytes) of `arena`; the arena's memory is taken when
  // the first temporary asks.
  ScratchScope(BlockPtr arena, size_t offset, size_t bytes);
  ~ScratchScope();
  ScratchScope(const ScratchScope&) = delete;
  ScratchScope& operator=(const ScratchScope&) = delete;

  // The innermost scope for `device` on this thread, or null.
  static ScratchScope* open_for(Device* device);
  // Memory for `bytes` (64-byte aligned) from the rest of the range, or null.
  void* take(size_t bytes);

 private:
  BlockPtr arena_;
  size_t next_, end_;
  ScratchScope* outer_;
};

}  // namespace nn::backend
