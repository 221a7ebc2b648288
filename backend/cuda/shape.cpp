// CUDA kernels of the shape ops (backend/ops/shape.cpp): permute and
// broadcast_to as strided copies, concat as one strided copy per operand
// (converted to the result's dtype first), and reshape's kernel for an
// executor that gave the result memory of its own.
#include "backend/cuda/elementwise_launch.h"
#include "backend/cuda/register.h"
#include "backend/cuda/strided_copy.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

void reshape(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  CudaDevice& dev = call_device(in, out);
  dev.copy(out[0].raw_data(), in[0].raw_data(), in[0].nbytes());
}

void permute(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor& x = in[0];
  const StridedCopy c = permute_copy(x.shape(), out[0].shape(), attrs.get<std::vector<int64_t>>("dims"));
  strided_copy(dev, x.raw_data(), out[0].raw_data(), dtype_size(x.dtype()), c);
}

void broadcast_to(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  CudaDevice& dev = call_device(in, out);
  const Tensor x = on_device(in[0], dev);
  strided_copy(dev, x.raw_data(), out[0].raw_data(), dtype_size(x.dtype()), broadcast_copy(x.shape(), out[0].shape()));
}

void concat(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const int axis = int(attrs.get<int64_t>("axis"));
  Tensor& y = out[0];
  int64_t outer = 1, after = 1;
  for (int d = 0; d < axis; ++d) outer *= y.shape()[d];
  for (int d = axis + 1; d < y.ndim(); ++d) after *= y.shape()[d];
  const int64_t width = y.shape()[axis] * after;
  const size_t esize = dtype_size(y.dtype());
  int64_t col = 0;
  for (const Tensor& t : in) {
    const int64_t w = t.shape()[axis] * after;
    Tensor src = on_device(t, dev);
    if (src.dtype() != y.dtype()) {
      Tensor converted = Tensor::empty(src.shape(), y.dtype(), &dev);
      run_elementwise("concat", OpId::cast, y.dtype(), converted, std::span<const Tensor>(&src, 1), {y.dtype()});
      src = converted;
    }
    StridedCopy c;
    c.push(outer, w, width);
    c.push(w, 1, 1);
    strided_copy(dev, src.raw_data(), static_cast<char*>(y.raw_data()) + size_t(col) * esize, esize, c);
    col += w;
  }
}

}  // namespace

void register_shape(Registry& r) {
  r.edit(OpId::reshape).cuda = reshape;
  r.edit(OpId::permute).cuda = permute;
  r.edit(OpId::broadcast_to).cuda = broadcast_to;
  r.edit(OpId::concat).cuda = concat;
}

}  // namespace nn::backend::cuda
