// Tensors made from host data (literals, files, the data shipped with nn)
// are built in CPU memory, then moved to the default device (`--device`),
// where creation ops put theirs: a script reads the same on any device.
#pragma once
#include "backend/ops.h"

namespace nn::frontend {

inline backend::Tensor on_default_device(const backend::Tensor& host) {
  return backend::to_device(host, backend::default_device());
}

// x's contents in CPU memory, for host code that reads them.
inline backend::Tensor on_host(const backend::Tensor& x) {
  return x.device()->type() == backend::DeviceType::cpu ? x : backend::to_device(x, backend::cpu_device());
}

}  // namespace nn::frontend
