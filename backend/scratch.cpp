// Scratch scopes (backend/scratch.h): a thread's chain of open scopes, each
// handing out its range from the bottom up.
#include "backend/scratch.h"

namespace nn::backend {
namespace {
thread_local ScratchScope* t_innermost = nullptr;
}

ScratchScope::ScratchScope(BlockPtr arena, size_t offset, size_t bytes)
    : arena_(std::move(arena)), next_(offset), end_(offset + bytes), outer_(t_innermost) {
  t_innermost = this;
}

ScratchScope::~ScratchScope() { t_innermost = outer_; }

ScratchScope* ScratchScope::open_for(Device* device) {
  for (ScratchScope* s = t_innermost; s; s = s->outer_)
    if (s->arena_->device() == device) return s;
  return nullptr;
}

void* ScratchScope::take(size_t bytes) {
  const size_t start = (next_ + 63) / 64 * 64;
  if (bytes == 0 || start > end_ || bytes > end_ - start) return nullptr;
  next_ = start + bytes;
  return static_cast<char*>(arena_->data()) + start;
}

bool scratch_open(Device* device) { return t_innermost && ScratchScope::open_for(device); }

void* take_scratch(Device* device, size_t bytes) {
  ScratchScope* s = ScratchScope::open_for(device);
  return s ? s->take(bytes) : nullptr;
}

}  // namespace nn::backend
