// The strided copy on a GPU (strided_copy.h).
#include "backend/cuda/strided_copy.h"

#include "backend/cuda/copy_kernels.h"

namespace nn::backend::cuda {

void strided_copy(CudaDevice& dev, const void* src, void* dst, size_t elem_size, StridedCopy c) {
  if (!strided_detail::simplify(c)) return;
  CopyLaunch l;
  l.src = src;
  l.dst = dst;
  l.elem = int(elem_size);
  l.nd = c.ndim;
  l.n = 1;
  for (int d = 0; d < c.ndim; ++d) {
    l.size[d] = c.shape[size_t(d)];
    l.src_stride[d] = c.src_strides[size_t(d)];
    l.dst_stride[d] = c.dst_strides[size_t(d)];
    l.n *= l.size[d];
  }
  l.index32 = make_dividers(l.nd, l.size, l.n, l.div);
  // A copy that is one contiguous run is a plain device copy.
  if (l.nd == 1 && l.src_stride[0] == 1 && l.dst_stride[0] == 1) {
    dev.copy(dst, src, size_t(l.n) * elem_size);
    return;
  }
  strided_copy_launch(l, dev.stream());
  check_launch("copy");
}

}  // namespace nn::backend::cuda
