// matmul_tn (a^T @ b) and matmul_nt (a @ b^T) on 2-d float matrices: a
// transpose read by the GEMM itself (BLAS's trans flags) instead of copied
// first. matmul's backward rule calls them, and graph mode's
// `transpose-into-matmul` pass makes them out of a permute feeding a matmul
// (Owl's pattern 006); scripts never call them, so they have no backward
// rule (rules run with grad mode off, and passes after autodiff).
#include <omp.h>

#include <algorithm>

#include "backend/interrupt.h"
#include "backend/op_registry.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/gemm.h"
#include "backend/ops/register.h"

namespace nn::backend {
namespace {

// Shapes: matmul_tn takes a [k, m] and b [k, n]; matmul_nt a [m, k] and b [n, k].
template <bool TA, bool TB>
OutTypes transposed_type(std::span<const TensorType> in, const Attrs&) {
  const TensorType &a = in[0], &b = in[1];
  const char* name = TA ? "matmul_tn" : "matmul_nt";
  if (!transposed_operands(a.shape.ndim(), a.dtype, b.shape.ndim(), b.dtype))
    throw Error(std::string(name) + " takes two 2-d float matrices of one dtype, got " + a.str() + " and " + b.str());
  const int64_t ka = TA ? a.shape[0] : a.shape[1], kb = TB ? b.shape[1] : b.shape[0];
  if (ka != kb)
    throw Error(std::string(name) + " shapes do not fit: " + a.str() + " and " + b.str() + " (" + std::to_string(ka) +
                " != " + std::to_string(kb) + ")");
  const int64_t m = TA ? a.shape[1] : a.shape[0], n = TB ? b.shape[0] : b.shape[1];
  return {TensorType{a.dtype, Shape({m, n}), a.device}};
}

// Rows of C split over the kernel threads, in slices Ctrl-C can stop between.
template <bool TA, bool TB>
void transposed_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor &a = in[0], &b = in[1];
  Tensor& c = out[0];
  const int64_t m = c.shape()[0], n = c.shape()[1], k = TA ? a.shape()[0] : a.shape()[1];
  const int64_t lda = a.shape()[1], ldb = b.shape()[1];
  visit_dtype(c.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T *pa = a.data<T>(), *pb = b.data<T>();
      T* pc = c.data<T>();
      if (k == 0) {
        std::fill(pc, pc + c.numel(), T(0));
        return;
      }
      const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
      const InterruptCheck interrupted;
      const int64_t per = std::max<int64_t>(16, ((m + threads - 1) / threads + 15) / 16 * 16);
      const int64_t blocks = (m + per - 1) / per;
#pragma omp parallel for num_threads(int(std::max<int64_t>(1, std::min<int64_t>(threads, blocks)))) schedule(static)
      for (int64_t i = 0; i < blocks; ++i) {
        if (interrupted()) continue;
        const int64_t lo = i * per, len = std::min(per, m - lo);
        // Row lo of op(A): column lo of a stored [k, m], or row lo of [m, k].
        gemm(TA, TB, len, n, k, TA ? pa + lo : pa + lo * lda, lda, pb, ldb, T(0), pc + lo * n, n);
      }
    }
  });
}

}  // namespace

void register_matmul_transposed_ops(Registry& r) {
  r.add(OpDef{.id = OpId::matmul_tn, .num_inputs = 2, .type_rule = transposed_type<true, false>,
              .cpu = transposed_kernel<true, false>});
  r.add(OpDef{.id = OpId::matmul_nt, .num_inputs = 2, .type_rule = transposed_type<false, true>,
              .cpu = transposed_kernel<false, true>});
}

}  // namespace nn::backend
