// CUDA kernels of cast (astype) and to_device (backend/ops/cast.cpp). A
// move between the CPU and a GPU is one copy on the GPU's stream; reading
// back to the CPU waits for it.
#include "backend/cuda/elementwise_launch.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

void cast(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const DType t = out[0].dtype();
  run_elementwise("cast", OpId::cast, t, out[0], in, {t});
}

void to_device(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor& x = in[0];
  Tensor& y = out[0];
  const size_t n = x.nbytes();
  if (!n) return;
  Device* from = x.device();
  Device* to = y.device();
  if (from->type() == DeviceType::cpu) {
    to->copy_from_host(y.raw_data(), x.raw_data(), n);
  } else if (to->type() == DeviceType::cpu) {
    from->copy_to_host(y.raw_data(), x.raw_data(), n);
  } else if (from == to) {
    to->copy(y.raw_data(), x.raw_data(), n);
  } else {
    // Between two GPUs: the source's work must be done first.
    from->synchronize();
    auto& dst = static_cast<CudaDevice&>(*to);
    dst.activate();
    check(cudaMemcpyPeerAsync(y.raw_data(), dst.index(), x.raw_data(), from->index(), n, dst.stream()),
          "to: copying between GPUs");
  }
}

}  // namespace

void register_cast(Registry& r) {
  r.edit(OpId::cast).cuda = cast;
  r.edit(OpId::to_device).cuda = to_device;
}

}  // namespace nn::backend::cuda
