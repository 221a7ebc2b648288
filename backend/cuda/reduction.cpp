// CUDA kernels of the reductions sum, prod, max, min, argmax and argmin
// (backend/ops/reduction.cpp; mean, var, std, logsumexp and norm are
// composites of these and of elementwise ops).
#include <algorithm>

#include "backend/cuda/cuda_device.h"
#include "backend/cuda/reduction_kernels.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"
#include "backend/ops/reduce_geometry.h"

namespace nn::backend::cuda {
namespace {

// The CPU kernels' geometry (backend/ops/reduce_geometry.h) in the launch.
void geometry(const Shape& shape, const std::vector<int64_t>& axes, ReduceLaunch& l) {
  const ReduceGeometry g = reduce_geometry(shape, axes);
  l.inner_reduced = g.inner_reduced;
  l.kept_n = g.kept.n, l.red_n = g.reduced.n;
  for (int i = 0; i < g.kept.n; ++i) l.kept_size[i] = g.kept.size[i], l.kept_stride[i] = g.kept.stride[i];
  for (int i = 0; i < g.reduced.n; ++i) l.red_size[i] = g.reduced.size[i], l.red_stride[i] = g.reduced.stride[i];
  l.work = shape.numel() == 0 ? 0 : g.reduced.count();
  l.index32 = make_dividers(l.kept_n, l.kept_size, shape.numel(), l.kept_div) &&
              make_dividers(l.red_n, l.red_size, shape.numel(), l.red_div);
}

template <OpId Op>
void reduce(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor& x = in[0];
  ReduceLaunch l;
  l.x = x.raw_data();
  l.out = out[0].raw_data();
  l.dtype = x.dtype();
  l.out_count = out[0].numel();
  geometry(x.shape(), attrs.get<std::vector<int64_t>>("axes"), l);
  plan_reduce(l);
  Tensor partial;
  if (l.chunks > 1) {
    partial = scratch(dev, size_t(l.out_count * l.chunks) * 8);
    l.partial = partial.raw_data();
  }
  if (!reduce_launch(Op, l, dev.stream()))
    throw Error("reduction: no CUDA kernel for " + std::string(dtype_name(x.dtype())) + " tensors yet");
  check_launch("reduction");
}

template <bool kMax>
void arg(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor& x = in[0];
  ArgLaunch l;
  l.x = x.raw_data();
  l.out = out[0].data<int64_t>();
  l.dtype = x.dtype();
  l.max = kMax;
  l.n = x.numel();
  if (attrs.has("axis")) {
    const int axis = int(attrs.get<int64_t>("axis"));
    l.n = x.shape()[axis];
    for (int d = 0; d < axis; ++d) l.outer *= x.shape()[d];
    for (int d = axis + 1; d < x.ndim(); ++d) l.inner *= x.shape()[d];
  }
  if (!arg_launch(l, dev.stream()))
    throw Error(std::string(kMax ? "argmax" : "argmin") + ": no CUDA kernel for " +
                std::string(dtype_name(x.dtype())) + " tensors yet");
  check_launch(kMax ? "argmax" : "argmin");
}

}  // namespace

void register_reduction(Registry& r) {
#define NN_CUDA_REDUCTION(id, ...) r.edit(OpId::id).cuda = reduce<OpId::id>;
  NN_REDUCTION_OPS(NN_CUDA_REDUCTION)
#undef NN_CUDA_REDUCTION
  r.edit(OpId::argmax).cuda = arg<true>;
  r.edit(OpId::argmin).cuda = arg<false>;
}

}  // namespace nn::backend::cuda
