// Pointwise convolutions as cuBLAS products (conv_pointwise.h).
#include "backend/cuda/conv_pointwise.h"

#include "backend/cuda/gemm.h"
#include "backend/cuda/strided_copy.h"

namespace nn::backend::cuda {
namespace {

// N, the channels in and out, and the pixels of one image.
struct Pointwise {
  int64_t n, c, o, hw;
};

Pointwise geometry(const Shape& x, const Shape& w) {
  const Pointwise p{x[0], x[1], w[0], x[2] * x[3]};
  const int64_t limit = 0x7fffffff;
  if (p.c > limit || p.o > limit || p.hw > limit || p.n > limit)
    throw Error("conv2d: a dimension beyond 2^31 - 1 is not supported on the GPU");
  return p;
}

}  // namespace

bool is_pointwise(const Shape& w, const Attrs& attrs) {
  auto all = [&](const char* key, int64_t v) {
    for (int64_t e : attrs.get<std::vector<int64_t>>(key))
      if (e != v) return false;
    return true;
  };
  return w[2] == 1 && w[3] == 1 && all("stride", 1) && all("padding", 0) && attrs.get<int64_t>("groups") == 1;
}

void pointwise_forward(CudaDevice& dev, const Tensor& x, const Tensor& w, Tensor& y) {
  const Pointwise p = geometry(x.shape(), w.shape());
  with_blas_type(y.dtype(), [&]<class T>() {
    // y[n] [O, HW] = w [O, C] @ x[n] [C, HW], w shared by every image.
    gemm<T>(dev.cublas(), false, false, p.o, p.hw, p.c, static_cast<const T*>(w.raw_data()), p.c, 0,
            static_cast<const T*>(x.raw_data()), p.hw, p.c * p.hw, static_cast<T*>(y.raw_data()), p.o * p.hw, p.n);
  });
}

void pointwise_backward_input(CudaDevice& dev, const Tensor& dy, const Tensor& w, Tensor& dx) {
  const Pointwise p = geometry(dx.shape(), w.shape());
  with_blas_type(dx.dtype(), [&]<class T>() {
    // dx[n] [C, HW] = w^T [C, O] @ dy[n] [O, HW].
    gemm<T>(dev.cublas(), true, false, p.c, p.hw, p.o, static_cast<const T*>(w.raw_data()), p.c, 0,
            static_cast<const T*>(dy.raw_data()), p.hw, p.o * p.hw, static_cast<T*>(dx.raw_data()), p.c * p.hw, p.n);
  });
}

void pointwise_backward_weight(CudaDevice& dev, const Tensor& dy, const Tensor& x, Tensor& dw) {
  const Pointwise p = geometry(x.shape(), dw.shape());
  const int64_t k = p.n * p.hw;
  if (k > 0x7fffffff) throw Error("conv2d_backward_weight: a dimension beyond 2^31 - 1 is not supported on the GPU");
  // dw [O, C] = sum over n of dy[n] [O, HW] @ x[n]^T [HW, C]: one product
  // over k = N * HW once dy and x are laid out [O, N, HW] and [C, N, HW]
  // (a single image already is).
  const size_t es = dtype_size(dw.dtype());
  auto images_inner = [&](const Tensor& t, int64_t channels, Tensor& store) -> const void* {
    if (p.n == 1) return t.raw_data();
    store = scratch(dev, size_t(channels * k) * es);
    strided_copy(dev, t.raw_data(), store.raw_data(), es,
                 permute_copy(Shape{p.n, channels, p.hw}, Shape{channels, p.n, p.hw}, {1, 0, 2}));
    return store.raw_data();
  };
  Tensor dy_store, x_store;
  const void* pdy = images_inner(dy, p.o, dy_store);
  const void* px = images_inner(x, p.c, x_store);
  with_blas_type(dw.dtype(), [&]<class T>() {
    gemm<T>(dev.cublas(), false, true, p.o, p.c, k, static_cast<const T*>(pdy), k, 0, static_cast<const T*>(px), k, 0,
            static_cast<T*>(dw.raw_data()), 0, 1);
  });
}

}  // namespace nn::backend::cuda
