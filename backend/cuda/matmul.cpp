// CUDA kernels of matmul (NumPy semantics, batched with broadcast batch
// dims), matmul_tn and matmul_nt (backend/ops/matmul.cpp and
// matmul_transposed.cpp) through cuBLAS for f32 and f64, in full precision
// (no TF32: f32 means f32, as the CPU computes it); f16 and bf16 through
// cublasGemmEx, accumulating in f32 (on Tensor Cores). Integer and bool
// products run a plain kernel. The products themselves are gemm.h's.
#include <vector>

#include "backend/cuda/cuda_device.h"
#include "backend/cuda/gemm.h"
#include "backend/cuda/reduction_kernels.h"
#include "backend/cuda/register.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

// The batch of a matmul call: M×K @ K×N products and each one's offsets.
struct Batch {
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> a_off, b_off;
};

Batch batch_of(const Shape& a_in, const Shape& b_in) {
  Shape sa = a_in, sb = b_in;
  if (sa.ndim() == 1) sa.insert(0, 1);
  if (sb.ndim() == 1) sb.push_back(1);
  Batch g;
  g.m = sa[sa.ndim() - 2], g.k = sa[sa.ndim() - 1], g.n = sb[sb.ndim() - 1];
  Shape ba(sa.dims().subspan(0, size_t(sa.ndim() - 2))), bb(sb.dims().subspan(0, size_t(sb.ndim() - 2)));
  Shape batch;
  if (!broadcast_shapes(ba, bb, batch)) throw Error("internal: matmul batch dims do not broadcast");
  const int nb = batch.ndim();
  std::vector<int64_t> as(size_t(nb), 0), bs(size_t(nb), 0);
  int64_t step_a = g.m * g.k, step_b = g.k * g.n;
  for (int i = 1; i <= nb; ++i) {
    if (i <= ba.ndim()) {
      if (ba[ba.ndim() - i] != 1) as[size_t(nb - i)] = step_a;
      step_a *= ba[ba.ndim() - i];
    }
    if (i <= bb.ndim()) {
      if (bb[bb.ndim() - i] != 1) bs[size_t(nb - i)] = step_b;
      step_b *= bb[bb.ndim() - i];
    }
  }
  const int64_t count = batch.numel();
  int64_t idx[kMaxDims] = {};
  int64_t oa = 0, ob = 0;
  for (int64_t i = 0; i < count; ++i) {
    g.a_off.push_back(oa);
    g.b_off.push_back(ob);
    for (int d = nb - 1; d >= 0; --d) {
      oa += as[size_t(d)], ob += bs[size_t(d)];
      if (++idx[d] < batch[d]) break;
      oa -= as[size_t(d)] * batch[d], ob -= bs[size_t(d)] * batch[d];
      idx[d] = 0;
    }
  }
  return g;
}

// Offsets that step by one stride (0 included) fit a strided batched gemm.
bool arithmetic(const std::vector<int64_t>& v, int64_t& stride) {
  stride = v.size() > 1 ? v[1] - v[0] : 0;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] - v[i - 1] != stride) return false;
  return true;
}

void require_int_sizes(const char* op, int64_t m, int64_t n, int64_t k) {
  const int64_t limit = 0x7fffffff;
  if (m > limit || n > limit || k > limit)
    throw Error(std::string(op) + ": a matrix dimension beyond 2^31 - 1 is not supported on the GPU");
}

void matmul(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  CudaDevice& dev = call_device(in, out);
  const Tensor &a = in[0], &b = in[1];
  Tensor& c = out[0];
  if (a.dtype() != c.dtype() || b.dtype() != c.dtype())
    throw Error("internal: matmul operands of " + a.type().str() + " and " + b.type().str() + " on the GPU");
  if (c.numel() == 0) return;
  Batch g = batch_of(a.shape(), b.shape());
  const int64_t count = int64_t(g.a_off.size());
  if (g.k == 0) {  // an empty sum: zeros
    check(cudaMemsetAsync(c.raw_data(), 0, c.nbytes(), dev.stream()), "matmul");
    return;
  }
  require_int_sizes("matmul", g.m * count, g.n, g.k);
  const DType t = c.dtype();
  if (!is_floating(t)) {
    const size_t es = dtype_size(t);
    for (int64_t i = 0; i < count; ++i) {
      const char* pa = static_cast<const char*>(a.raw_data()) + size_t(g.a_off[size_t(i)]) * es;
      const char* pb = static_cast<const char*>(b.raw_data()) + size_t(g.b_off[size_t(i)]) * es;
      char* pc = static_cast<char*>(c.raw_data()) + size_t(i * g.m * g.n) * es;
      if (!int_matmul_launch(pa, pb, pc, t, g.m, g.n, g.k, dev.stream()))
        throw Error("matmul: no CUDA kernel for " + std::string(dtype_name(t)) + " tensors yet");
    }
    check_launch("matmul");
    return;
  }
  with_blas_type(t, [&]<class T>() {
    const T *pa = static_cast<const T*>(a.raw_data()), *pb = static_cast<const T*>(b.raw_data());
    T* pc = static_cast<T*>(c.raw_data());
    int64_t sa = 0, sb = 0;
    const bool a_steps = arithmetic(g.a_off, sa), b_steps = arithmetic(g.b_off, sb);
    if (count == 1 || (sb == 0 && b_steps && sa == g.m * g.k && a_steps)) {
      // One product, or b shared by a dense batch of a: the batch folds into M.
      gemm<T>(dev.cublas(), false, false, g.m * count, g.n, g.k, pa, g.k, 0, pb, g.n, 0, pc, 0, 1);
    } else if (a_steps && b_steps) {
      gemm<T>(dev.cublas(), false, false, g.m, g.n, g.k, pa + g.a_off[0], g.k, sa, pb + g.b_off[0], g.n, sb, pc,
              g.m * g.n, count);
    } else {
      for (int64_t i = 0; i < count; ++i)
        gemm<T>(dev.cublas(), false, false, g.m, g.n, g.k, pa + g.a_off[size_t(i)], g.k, 0, pb + g.b_off[size_t(i)],
                g.n, 0, pc + i * g.m * g.n, 0, 1);
    }
  });
}

// matmul_tn: a [k, m], b [k, n]; matmul_nt: a [m, k], b [n, k].
template <bool TA, bool TB>
void transposed(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  CudaDevice& dev = call_device(in, out);
  const Tensor &a = in[0], &b = in[1];
  Tensor& c = out[0];
  const int64_t m = c.shape()[0], n = c.shape()[1], k = TA ? a.shape()[0] : a.shape()[1];
  if (c.numel() == 0) return;
  if (k == 0) {
    check(cudaMemsetAsync(c.raw_data(), 0, c.nbytes(), dev.stream()), TA ? "matmul_tn" : "matmul_nt");
    return;
  }
  require_int_sizes(TA ? "matmul_tn" : "matmul_nt", m, n, k);
  const int64_t lda = a.shape()[1], ldb = b.shape()[1];
  with_blas_type(c.dtype(), [&]<class T>() {
    gemm<T>(dev.cublas(), TA, TB, m, n, k, static_cast<const T*>(a.raw_data()), lda, 0,
            static_cast<const T*>(b.raw_data()), ldb, 0, static_cast<T*>(c.raw_data()), 0, 1);
  });
}

}  // namespace

void register_matmul(Registry& r) {
  r.edit(OpId::matmul).cuda = matmul;
  r.edit(OpId::matmul_tn).cuda = transposed<true, false>;
  r.edit(OpId::matmul_nt).cuda = transposed<false, true>;
}

}  // namespace nn::backend::cuda
