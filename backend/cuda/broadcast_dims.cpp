// The merged dims of an elementwise launch (broadcast_dims.h).
#include "backend/cuda/broadcast_dims.h"

namespace nn::backend::cuda {

BroadcastDims broadcast_dims(const Shape& out, std::span<const Tensor> in) {
  const int od = out.ndim();
  std::vector<std::array<int64_t, kMaxDims>> st(in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    const Shape& s = in[k].shape();
    int64_t acc = 1;
    for (int d = od - 1; d >= 0; --d) {
      const int sd = d - (od - s.ndim());
      const int64_t e = sd >= 0 ? s[sd] : 1;
      st[k][size_t(d)] = e == 1 ? 0 : acc;
      acc *= e;
    }
  }
  BroadcastDims b;
  b.stride.assign(in.size(), {});
  for (int d = 0; d < od; ++d) {
    if (out[d] == 1) continue;
    if (b.nd > 0) {
      const size_t inner = size_t(b.nd - 1);
      bool merge = true;
      for (size_t k = 0; k < in.size() && merge; ++k) merge = b.stride[k][inner] == st[k][size_t(d)] * out[d];
      if (merge) {
        b.size[inner] *= out[d];
        for (size_t k = 0; k < in.size(); ++k) b.stride[k][inner] = st[k][size_t(d)];
        continue;
      }
    }
    b.size[b.nd] = out[d];
    for (size_t k = 0; k < in.size(); ++k) b.stride[k][size_t(b.nd)] = st[k][size_t(d)];
    ++b.nd;
  }
  if (b.nd == 0) {  // one element: strides 0
    b.nd = 1;
    b.size[0] = 1;
  }
  return b;
}

}  // namespace nn::backend::cuda
