// The stack's extent, read once per thread (stack_guard.h).
#include "frontend/stack_guard.h"

#include <pthread.h>

#include <algorithm>

namespace nn::frontend {
namespace {

struct StackExtent {
  char* base = nullptr;  // the stack's highest address: it grows down from there
  size_t limit = 0;      // the bytes that may be used
};

const StackExtent& this_thread_stack() {
  thread_local const StackExtent extent = [] {
    pthread_attr_t attr;
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &addr, &size);
      pthread_attr_destroy(&attr);
    }
    char here;
    StackExtent e;
    if (!addr || size == 0) size = size_t(8) << 20, addr = nullptr;
    e.base = addr ? static_cast<char*>(addr) + size : &here;
    e.limit = size - std::min(size / 4, size_t(2) << 20);
    return e;
  }();
  return extent;
}

}  // namespace

bool stack_nearly_full() {
  const StackExtent& e = this_thread_stack();
  char here;
  return size_t(e.base - &here) >= e.limit;
}

}  // namespace nn::frontend
