// Import entries of the window functions (import_table.h): HannWindow,
// HammingWindow and BlackmanWindow, worked out on the host from their
// cosine sums.
#include <cmath>
#include <numbers>

#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"
#include "onnx/tensor_proto.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

// w[i] = a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N), N the size when
// periodic, else the size - 1.
template <int Kind>  // 0 Hann, 1 Hamming, 2 Blackman
Outs window(const NodeContext& n) {
  const int64_t size = one_int(n, 0);
  if (size < 0) n.fail("size must not be negative");
  const auto dt = dtype_of(int(n.attr_int("output_datatype", onnx::TensorProto::FLOAT)));
  if (!dt) n.fail("attribute output_datatype names a type nn has no dtype for");
  const bool periodic = n.attr_int("periodic", 1) != 0;
  const double a0 = Kind == 0 ? 0.5 : Kind == 1 ? 25.0 / 46 : 0.42;
  const double a1 = Kind == 0 ? 0.5 : Kind == 1 ? 21.0 / 46 : 0.5;
  const double a2 = Kind == 2 ? 0.08 : 0;
  const double N = double(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const double t = N > 0 ? 2 * std::numbers::pi * double(i) / N : 0;
    w[size_t(i)] = a0 - a1 * std::cos(t) + a2 * std::cos(2 * t);
  }
  return {from_doubles(w, Shape{size}, *dt)};
}

const ImportEntry entries[] = {
    {"HannWindow", window<0>},
    {"HammingWindow", window<1>},
    {"BlackmanWindow", window<2>},
};

}  // namespace

std::span<const ImportEntry> signal_imports() { return entries; }

}  // namespace nn::onnx_io
