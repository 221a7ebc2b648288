// backend::Untraced: while it lives, op calls on this thread run now, even
// while a graph is traced. Host work on known values (a literal moved to the
// device, the constants of an ONNX model) then computes instead of being
// recorded; a tensor of the trace itself still cannot be read.
#pragma once
#include "backend/dispatch.h"

namespace nn::backend {

class Untraced {
 public:
  Untraced() { set_dispatch_hook(nullptr); }
  ~Untraced() { set_dispatch_hook(saved_); }
  Untraced(const Untraced&) = delete;
  Untraced& operator=(const Untraced&) = delete;

 private:
  DispatchHook* saved_ = dispatch_hook();
};

}  // namespace nn::backend
