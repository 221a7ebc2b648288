// Tensors made from host data (literals, files, the data shipped with nn)
// are built in CPU memory, then moved to the default device (`--device`),
// where creation ops put theirs: a script reads the same on any device.
// Host code that reads a tensor's values (a shape or axes given as a
// tensor) copies them back.
#pragma once
#include "backend/dispatch.h"
#include "backend/ops.h"
#include "backend/untraced.h"

namespace nn::frontend {

// The host's own work on host data is not part of a graph even while one is
// traced (backend::Untraced): it happens now, and the trace captures the
// moved tensor (as it captures a CPU literal), rather than recording a move
// whose result would not be known until the graph runs (`mean(x, axis=[2,
// 3])` reads its literal while tracing).
using backend::Untraced;

inline backend::Tensor on_default_device(const backend::Tensor& host) {
  backend::Device* d = backend::default_device();
  if (host.device() == d) return host;
  Untraced untraced;
  return backend::to_device(host, d);
}

// x's contents in CPU memory, for host code that reads them.
inline backend::Tensor on_host(const backend::Tensor& x) {
  if (x.device()->type() == backend::DeviceType::cpu) return x;
  Untraced untraced;
  return backend::to_device(x, backend::cpu_device());
}

}  // namespace nn::frontend
