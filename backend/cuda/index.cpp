// CUDA kernels of the indexing ops (backend/ops/index.cpp): slice,
// slice_backward and assign_slice as strided copies over the region the
// attributes describe, take as a row gather and take_backward as an atomic
// scatter-add; tril and triu (ops/triangle.cpp) as a masked copy.
// Out-of-range ids are raised in a device flag and reported as the CPU
// kernels word them (the check waits for the GPU).
#include <algorithm>

#include "backend/cuda/copy_kernels.h"
#include "backend/cuda/elementwise_launch.h"
#include "backend/cuda/register.h"
#include "backend/cuda/strided_copy.h"
#include "backend/op_registry.h"
#include "backend/ops/region.h"

namespace nn::backend::cuda {
namespace {

void slice(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor& x = in[0];
  Region r = region_of(attrs);
  int64_t base;
  const StridedCopy c = slice_copy(x.shape(), r, base);
  const size_t esize = dtype_size(x.dtype());
  strided_copy(dev, static_cast<const char*>(x.raw_data()) + size_t(base) * esize, out[0].raw_data(), esize, c);
}

void slice_backward(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor& g = in[0];
  Tensor& x = out[0];
  if (x.nbytes()) check(cudaMemsetAsync(x.raw_data(), 0, x.nbytes(), dev.stream()), "slice_backward");
  Region r = region_of(attrs);
  int64_t base;
  const StridedCopy c = slice_backward_copy(x.shape(), r, base);
  const size_t esize = dtype_size(x.dtype());
  strided_copy(dev, g.raw_data(), static_cast<char*>(x.raw_data()) + size_t(base) * esize, esize, c);
}

void assign_slice(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  Tensor& x = out[0];
  Region r = region_of(attrs);
  // v in x's dtype and memory of its own: a host number, another dtype, or
  // a view of x itself (x[1:] = x[:-1]) is copied first.
  Tensor v = in[1];
  if (v.device() != &dev || v.dtype() != x.dtype() || v.block() == x.block()) {
    Tensor copy = Tensor::empty(v.shape(), x.dtype(), &dev);
    run_elementwise("index assignment", OpId::cast, x.dtype(), copy, std::span<const Tensor>(&v, 1), {x.dtype()});
    v = copy;
  }
  int64_t base;
  const StridedCopy c = assign_copy(x.shape(), r, v.shape(), base);
  const size_t esize = dtype_size(x.dtype());
  strided_copy(dev, v.raw_data(), static_cast<char*>(x.raw_data()) + size_t(base) * esize, esize, c);
}

// The first id out of range, found on the host once the flag says there is
// one (the message names it, as the CPU's does).
[[noreturn]] void bad_id(CudaDevice& dev, const Tensor& ids, int64_t rows, const std::string& what) {
  Tensor host = Tensor::empty(ids.shape(), ids.dtype());
  dev.copy_to_host(host.raw_data(), ids.raw_data(), ids.nbytes());
  int64_t bad = 0;
  for (int64_t i = 0; i < host.numel(); ++i) {
    const int64_t id = ids.dtype() == DType::i32 ? int64_t(host.data<int32_t>()[i]) : host.data<int64_t>()[i];
    if (id < 0 || id >= rows) {
      bad = id;
      break;
    }
  }
  throw Error("take: id " + std::to_string(bad) + " is out of range for axis 0 of size " + std::to_string(rows) + what);
}

void take(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  CudaDevice& dev = call_device(in, out);
  const Tensor& x = in[0];
  const Tensor ids = on_device(in[1], dev);
  const int64_t rows = x.shape()[0];
  const int64_t row_bytes = x.numel() == 0 ? 0 : int64_t(x.nbytes()) / rows;
  Tensor flag = new_flag(dev);
  take_launch(x.raw_data(), ids.raw_data(), ids.dtype(), out[0].raw_data(), ids.numel(), rows, row_bytes,
              static_cast<int*>(flag.raw_data()), dev.stream());
  check_launch("take");
  if (read_flag(dev, flag)) bad_id(dev, ids, rows, " in " + x.type().str());
}

void take_backward(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  CudaDevice& dev = call_device(in, out);
  const Tensor& g = in[0];
  const Tensor ids = on_device(in[1], dev);
  Tensor& x = out[0];
  const int64_t rows = x.shape()[0];
  int64_t width = 1;
  for (int d = 1; d < x.ndim(); ++d) width *= x.shape()[d];
  Tensor flag = new_flag(dev);
  if (!take_backward_launch(g.raw_data(), ids.raw_data(), ids.dtype(), x.raw_data(), x.dtype(), ids.numel(), rows,
                            width, static_cast<int*>(flag.raw_data()), dev.stream()))
    throw Error("take_backward: no CUDA kernel for " + std::string(dtype_name(x.dtype())) + " tensors yet");
  check_launch("take_backward");
  if (read_flag(dev, flag)) bad_id(dev, ids, rows, "");
}

}  // namespace

namespace {
template <bool Lower>
void triangle(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor& x = in[0];
  const int nd = x.ndim();
  triangle_launch(x.raw_data(), out[0].raw_data(), int(dtype_size(x.dtype())), x.numel(), x.shape()[nd - 2],
                  x.shape()[nd - 1], attrs.get_or<int64_t>("k", 0), Lower, dev.stream());
  check_launch(Lower ? "tril" : "triu");
}
}  // namespace

void register_index(Registry& r) {
  r.edit(OpId::slice).cuda = slice;
  r.edit(OpId::slice_backward).cuda = slice_backward;
  r.edit(OpId::assign_slice).cuda = assign_slice;
  r.edit(OpId::take).cuda = take;
  r.edit(OpId::take_backward).cuda = take_backward;
  r.edit(OpId::tril).cuda = triangle<true>;
  r.edit(OpId::triu).cuda = triangle<false>;
}

}  // namespace nn::backend::cuda
