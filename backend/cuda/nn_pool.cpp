// CUDA kernels of max_pool2d, avg_pool2d and their backward ops
// (backend/ops/nn_pool.cpp): the window geometry from the attributes and
// the input's shape, as the CPU kernels read them.
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/pool_kernels.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

std::array<int64_t, 2> pair_of(const Attrs& a, const char* key) {
  const auto& v = a.get<std::vector<int64_t>>(key);
  return {v.at(0), v.at(1)};
}

// x the pooled input's shape, y the output's.
PoolLaunch pool_of(const Shape& x, const Shape& y, DType dtype, const Attrs& attrs) {
  PoolLaunch g;
  g.planes = x[0] * x[1];
  g.h = x[2], g.w = x[3], g.oh = y[2], g.ow = y[3];
  auto k = pair_of(attrs, "kernel"), s = pair_of(attrs, "stride"), p = pair_of(attrs, "padding");
  g.kh = k[0], g.kw = k[1], g.sh = s[0], g.sw = s[1], g.ph = p[0], g.pw = p[1];
  g.dtype = dtype;
  return with_pool_dividers(g);
}

void max_pool(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  PoolLaunch g = pool_of(in[0].shape(), out[0].shape(), in[0].dtype(), attrs);
  g.wide_index = out[1].dtype() == DType::i64;
  max_pool_launch(g, in[0].raw_data(), out[0].raw_data(), out[1].raw_data(), dev.stream());
  check_launch("max_pool2d");
}

void max_pool_backward(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  PoolLaunch g = pool_of(out[0].shape(), in[0].shape(), out[0].dtype(), attrs);
  g.wide_index = in[1].dtype() == DType::i64;
  max_pool_backward_launch(g, in[0].raw_data(), in[1].raw_data(), out[0].raw_data(), dev.stream());
  check_launch("max_pool2d_backward");
}

void avg_pool(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  avg_pool_launch(pool_of(in[0].shape(), out[0].shape(), in[0].dtype(), attrs), in[0].raw_data(), out[0].raw_data(),
                  dev.stream());
  check_launch("avg_pool2d");
}

void avg_pool_backward(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  avg_pool_backward_launch(pool_of(out[0].shape(), in[0].shape(), out[0].dtype(), attrs), in[0].raw_data(),
                           out[0].raw_data(), dev.stream());
  check_launch("avg_pool2d_backward");
}

}  // namespace

void register_nn_pool(Registry& r) {
  r.edit(OpId::max_pool2d).cuda = max_pool;
  r.edit(OpId::max_pool2d_backward).cuda = max_pool_backward;
  r.edit(OpId::avg_pool2d).cuda = avg_pool;
  r.edit(OpId::avg_pool2d_backward).cuda = avg_pool_backward;
}

}  // namespace nn::backend::cuda
