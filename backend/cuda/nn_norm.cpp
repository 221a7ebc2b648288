// CUDA kernels of batch norm (training forward, backward and apply, the
// per-channel scale, and the in-place running-statistics update) and layer norm (forward and
// backward) (backend/ops/nn_norm.cpp).
#include "backend/cuda/elementwise_launch.h"
#include "backend/cuda/nn_kernels.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

BnLaunch bn_of(const Tensor& x, const Attrs& attrs) {
  BnLaunch g;
  g.n = x.shape()[0];
  g.c = x.shape()[1];
  for (int d = 2; d < x.ndim(); ++d) g.s *= x.shape()[d];
  g.eps = attrs.get<double>("eps");
  g.dtype = x.dtype();
  return g;
}

void bn_train(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const BnLaunch g = bn_of(in[0], attrs);
  Tensor work = scratch(dev, bn_scratch_bytes(g));
  bn_train_launch(g, in[0].raw_data(), in[1].raw_data(), in[2].raw_data(), out[0].raw_data(), out[1].raw_data(),
                  out[2].raw_data(), work.raw_data(), dev.stream());
  check_launch("batch_norm");
}

void bn_apply(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const BnLaunch g = bn_of(in[0], attrs);
  // The affine map per channel, in the type the kernel computes in (f32 for f16 and bf16).
  Tensor work = scratch(dev, size_t(g.c * 3) * (g.dtype == DType::f64 ? 8 : 4));
  bn_apply_launch(g, in[0].raw_data(), in[1].raw_data(), in[2].raw_data(), in[3].raw_data(), in[4].raw_data(),
                  out[0].raw_data(), work.raw_data(), dev.stream());
  check_launch("batch_norm_apply");
}

void bn_backward(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const BnLaunch g = bn_of(in[1], attrs);
  Tensor work = scratch(dev, bn_scratch_bytes(g));
  bn_backward_launch(g, in[0].raw_data(), in[1].raw_data(), in[2].raw_data(), in[3].raw_data(), in[4].raw_data(),
                     out[0].raw_data(), out[1].raw_data(), out[2].raw_data(), work.raw_data(), dev.stream());
  check_launch("batch_norm_backward");
}

// Stateful: out[0] is in[0] itself.
void running_update(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const DType t = out[0].dtype();
  run_elementwise("batch_norm", OpId::running_stat_update, t, out[0], in, {t, t},
                  {{attrs.get<double>("momentum"), attrs.get<double>("scale")}});
}

void bn_scale(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const DType t = out[0].dtype();
  run_elementwise("batch_norm_scale", OpId::batch_norm_scale, t, out[0], in, {t, t}, {{attrs.get<double>("eps")}});
}

LnLaunch ln_of(const Tensor& x, const Tensor& gamma, const Attrs& attrs) {
  LnLaunch g;
  g.d = gamma.numel();
  g.rows = g.d ? x.numel() / g.d : 0;
  if (!g.d) {
    g.rows = 1;
    for (int i = 0; i < x.ndim() - gamma.ndim(); ++i) g.rows *= x.shape()[i];
  }
  g.eps = attrs.get_or<double>("eps", 1e-5);
  g.dtype = x.dtype();
  return g;
}

void ln(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  ln_launch(ln_of(in[0], in[1], attrs), in[0].raw_data(), in[1].raw_data(), in[2].raw_data(), out[0].raw_data(),
            out[1].raw_data(), out[2].raw_data(), dev.stream());
  check_launch("layer_norm");
}

void ln_backward(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  ln_backward_launch(ln_of(in[1], in[2], attrs), in[0].raw_data(), in[1].raw_data(), in[2].raw_data(),
                     in[3].raw_data(), in[4].raw_data(), out[0].raw_data(), out[1].raw_data(), out[2].raw_data(),
                     dev.stream());
  check_launch("layer_norm_backward");
}

}  // namespace

void register_nn_norm(Registry& r) {
  r.edit(OpId::batch_norm_train).cuda = bn_train;
  r.edit(OpId::batch_norm_backward).cuda = bn_backward;
  r.edit(OpId::batch_norm_apply).cuda = bn_apply;
  r.edit(OpId::batch_norm_scale).cuda = bn_scale;
  r.edit(OpId::running_stat_update).cuda = running_update;
  r.edit(OpId::layer_norm).cuda = ln;
  r.edit(OpId::layer_norm_backward).cuda = ln_backward;
}

}  // namespace nn::backend::cuda
