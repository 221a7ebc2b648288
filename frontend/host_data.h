// Tensors made from host data (literals, files, the data shipped with nn)
// are built in CPU memory, then moved to the default device (`--device`),
// where creation ops put theirs: a script reads the same on any device.
// Host code that reads a tensor's values (a shape or axes given as a
// tensor) copies them back.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

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

// Whether a host number survives a cast to the integer dtype d (i32 or
// i64) unchanged but for truncation: floats truncate toward zero first
// (3.7 is 3); NaN and inf fit no integer. tensor(), full(), pad, x[i] = v
// and load_csv ask it, as PyTorch does ("cannot be converted ... without
// overflow").
inline int64_t int_min_of(backend::DType d) {
  return d == backend::DType::i32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
}
inline int64_t int_max_of(backend::DType d) {
  return d == backend::DType::i32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
}
inline bool fits_integer(int64_t v, backend::DType d) { return v >= int_min_of(d) && v <= int_max_of(d); }
inline bool fits_integer(double v, backend::DType d) {
  const double t = std::trunc(v), lo = double(int_min_of(d));  // -lo is 2^31 or 2^63, exact as a double
  return t >= lo && t < -lo;
}

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
