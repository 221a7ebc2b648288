// Linear algebra: the registry op matmul (NumPy semantics: 1-d operands,
// batches with broadcast batch dims) with its CPU kernel — f32/f64 through
// OpenBLAS gemm, integers and bools through a plain loop — and the composites
// dot and outer, and matmul's backward rule.
#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backend/interrupt.h"
#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/gemm.h"
#include "backend/ops/register.h"
#include "backend/ops/strided_copy.h"
#include "backend/parallel.h"

namespace nn::backend {
namespace {

// How a matmul call maps onto a batch of M×K @ K×N products.
struct MatmulGeometry {
  int64_t m = 1, k = 1, n = 1;
  Shape batch;                    // the broadcast batch dims
  Shape out;                      // result shape (1-d operands drop their dim)
  std::vector<int64_t> a_stride;  // per batch dim, in elements of a; 0 where broadcast
  std::vector<int64_t> b_stride;
  int64_t batch_count() const { return batch.numel(); }
};

// The single source of matmul's shape errors (SPEC §11).
MatmulGeometry matmul_geometry(const TensorType& a, const TensorType& b) {
  auto fail = [&](const std::string& why) {
    return Error("matmul shapes do not fit: " + a.str() + " @ " + b.str() + " (" + why + ")");
  };
  if (a.shape.ndim() == 0 || b.shape.ndim() == 0)
    throw Error("matmul: operands need at least one dimension, got " + a.str() + " @ " + b.str() +
                "; use * to multiply by a scalar");
  // A 1-d a is a row [1, K], a 1-d b a column [K, 1]; the same memory either way.
  Shape sa = a.shape, sb = b.shape;
  const bool a_vec = sa.ndim() == 1, b_vec = sb.ndim() == 1;
  if (a_vec) sa.insert(0, 1);
  if (b_vec) sb.push_back(1);
  MatmulGeometry g;
  g.m = sa[sa.ndim() - 2];
  g.k = sa[sa.ndim() - 1];
  const int64_t kb = sb[sb.ndim() - 2];
  g.n = sb[sb.ndim() - 1];
  if (g.k != kb) throw fail(std::to_string(g.k) + " != " + std::to_string(kb));

  Shape ba(sa.dims().subspan(0, size_t(sa.ndim() - 2))), bb(sb.dims().subspan(0, size_t(sb.ndim() - 2)));
  int bad = 0;
  if (!broadcast_shapes(ba, bb, g.batch, &bad)) {
    int64_t da = ba[ba.ndim() + bad], db = bb[bb.ndim() + bad];
    throw fail("batch dimension " + std::to_string(da) + " != " + std::to_string(db));
  }
  // Element strides of each operand's batch dims, aligned to the right of the
  // broadcast batch; a missing or extent-1 dim repeats the same matrix.
  const int nb = g.batch.ndim();
  g.a_stride.assign(size_t(nb), 0);
  g.b_stride.assign(size_t(nb), 0);
  int64_t step_a = g.m * g.k, step_b = g.k * g.n;
  for (int i = 1; i <= nb; ++i) {
    if (i <= ba.ndim()) {
      if (ba[ba.ndim() - i] != 1) g.a_stride[size_t(nb - i)] = step_a;
      step_a *= ba[ba.ndim() - i];
    }
    if (i <= bb.ndim()) {
      if (bb[bb.ndim() - i] != 1) g.b_stride[size_t(nb - i)] = step_b;
      step_b *= bb[bb.ndim() - i];
    }
  }
  g.out = g.batch;
  if (!a_vec) g.out.push_back(g.m);
  if (!b_vec) g.out.push_back(g.n);
  return g;
}

OutTypes matmul_type(std::span<const TensorType> in, const Attrs&) {
  MatmulGeometry g = matmul_geometry(in[0], in[1]);
  return {TensorType{promote(in[0].dtype, in[1].dtype), g.out, in[0].device}};
}

// Offsets of each batch's a and b matrices.
void batch_offsets(const MatmulGeometry& g, std::vector<int64_t>& a_off, std::vector<int64_t>& b_off) {
  const int64_t count = g.batch_count();
  a_off.resize(size_t(count));
  b_off.resize(size_t(count));
  const int nb = g.batch.ndim();
  int64_t idx[kMaxDims] = {};
  int64_t oa = 0, ob = 0;
  for (int64_t i = 0; i < count; ++i) {
    a_off[size_t(i)] = oa, b_off[size_t(i)] = ob;
    for (int d = nb - 1; d >= 0; --d) {
      oa += g.a_stride[size_t(d)], ob += g.b_stride[size_t(d)];
      if (++idx[d] < g.batch[d]) break;
      oa -= g.a_stride[size_t(d)] * g.batch[d], ob -= g.b_stride[size_t(d)] * g.batch[d];
      idx[d] = 0;
    }
  }
}

// C[m, n] = A[m, k] @ B[k, n], row-major with leading dimensions.
template <class T>
void gemm_nn(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, int64_t ldb, int64_t ldc) {
  gemm(false, false, m, n, k, a, k, b, ldb, T(0), c, ldc);
}

// Below about 64³ multiply-adds a product is not worth splitting.
constexpr int64_t kSmallGemm = 64 * 64 * 64;

// One product over the kernel threads. OpenBLAS runs single-threaded (see
// set_num_threads): its own pool and the OpenMP team would otherwise spin
// against each other on the same cores. Each thread takes a block of rows
// of C, or of columns when there are too few rows to share.
template <class T>
void parallel_gemm(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads <= 1 || m * n * k < 2 * kSmallGemm) {
    gemm_nn(a, b, c, m, n, k, n, n);
    return;
  }
  const bool by_rows = m >= 8 * int64_t(threads) || m >= n;
  const int64_t extent = by_rows ? m : n;
  // Blocks aligned to 16 keep the packed panels of each thread whole.
  const int64_t per = (extent + threads - 1) / threads;
  const int64_t block = std::max<int64_t>(16, (per + 15) / 16 * 16);
  const int64_t blocks = (extent + block - 1) / block;
  // A huge product goes in slices of about 2^28 multiply-adds (a few ms),
  // so that Ctrl-C stops it between slices.
  const int64_t other = by_rows ? n * k : m * k;
  const InterruptCheck interrupted;
  const int64_t slice = std::max<int64_t>(16, ((int64_t(1) << 28) / std::max<int64_t>(1, other) + 15) / 16 * 16);
#pragma omp parallel for num_threads(int(std::min<int64_t>(threads, blocks))) schedule(static)
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t end = std::min(extent, (i + 1) * block);
    for (int64_t lo = i * block; lo < end && !interrupted(); lo += slice) {
      const int64_t len = std::min(slice, end - lo);
      if (by_rows) gemm_nn(a + lo * k, b, c + lo * n, len, n, k, n, n);
      else gemm_nn(a, b + lo, c + lo, m, len, k, n, n);
    }
  }
}

template <class T>
void matmul_blas(const T* a, const T* b, T* c, const MatmulGeometry& g) {
  const int64_t count = g.batch_count(), m = g.m, n = g.n, k = g.k;
  // b shared by every batch and a dense: the batch folds into M, one gemm
  // ([B*M, K] @ [K, N]), which is how x[batch, seq, d] @ w usually looks.
  bool b_shared = std::all_of(g.b_stride.begin(), g.b_stride.end(), [](int64_t s) { return s == 0; });
  bool a_dense = true;
  for (int d = 0; d < g.batch.ndim(); ++d) a_dense = a_dense && (g.a_stride[size_t(d)] != 0 || g.batch[d] == 1);
  if (count == 1 || (b_shared && a_dense)) {
    parallel_gemm(a, b, c, m * count, n, k);
    return;
  }
  std::vector<int64_t> a_off, b_off;
  batch_offsets(g, a_off, b_off);
  auto one = [&](int64_t i) { gemm_nn(a + a_off[size_t(i)], b + b_off[size_t(i)], c + i * m * n, m, n, k, n, n); };
  if (count >= omp_get_max_threads() || m * n * k < kSmallGemm) {
    // Whole products per thread.
    parallel_for(count, std::max<int64_t>(1, kSmallGemm / std::max<int64_t>(1, m * n * k)), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < count; ++i)
      parallel_gemm(a + a_off[size_t(i)], b + b_off[size_t(i)], c + i * m * n, m, n, k);
  }
}

// Integers and bools: row times matrix, accumulated in i64 with wrapping
// arithmetic (bool: "any a and b", as NumPy).
template <class T>
void matmul_loop(const T* a, const T* b, T* c, const MatmulGeometry& g) {
  const int64_t count = g.batch_count(), m = g.m, n = g.n, k = g.k;
  std::vector<int64_t> a_off, b_off;
  batch_offsets(g, a_off, b_off);
  parallel_for(count * m, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n * k)), [&](int64_t lo, int64_t hi) {
    std::vector<uint64_t> acc(static_cast<size_t>(n));
    for (int64_t row = lo; row < hi; ++row) {
      const int64_t bi = row / m, i = row % m;
      const T* arow = a + a_off[size_t(bi)] + i * k;
      const T* bm = b + b_off[size_t(bi)];
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t p = 0; p < k; ++p) {
        const uint64_t av = uint64_t(int64_t(arow[p]));
        if (av == 0) continue;
        const T* brow = bm + p * n;
        for (int64_t j = 0; j < n; ++j) acc[size_t(j)] += av * uint64_t(int64_t(brow[j]));
      }
      T* crow = c + row * n;
      for (int64_t j = 0; j < n; ++j) {
        if constexpr (std::is_same_v<T, bool>) crow[j] = acc[size_t(j)] != 0;
        else crow[j] = T(int64_t(acc[size_t(j)]));
      }
    }
  });
}

void matmul_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  MatmulGeometry g = matmul_geometry(in[0].type(), in[1].type());
  Tensor& c = out[0];
  ew::check_cpu_dtype("matmul", c.dtype());
  // Operands of another dtype than the result are promoted into temporaries
  // (the ops.h function casts first, so this only serves direct op calls).
  Tensor a = ew::converted(in[0], c.dtype()), b = ew::converted(in[1], c.dtype());
  if (c.numel() == 0) return;
  visit_dtype(c.dtype(), [&]<class T>() {
    T* pc = c.data<T>();
    if (g.k == 0) {  // an empty sum: zeros (gemm would not be asked with K = 0)
      std::fill(pc, pc + c.numel(), T(0));
      return;
    }
    if constexpr (std::is_floating_point_v<T>) matmul_blas(a.data<T>(), b.data<T>(), pc, g);
    else matmul_loop(a.data<T>(), b.data<T>(), pc, g);
  });
}

// ---- backward ----------------------------------------------------------------------
// With 1-d operands made 2-d (a [K] is a row [1, K], b [K] a column [K, 1])
// and g given the matching [..., M, N] shape:
//   da = g @ b^T, summed over the batch dims a was broadcast along;
//   db = a^T @ g, likewise;
// then each is reshaped back to its operand's shape. The operands have one
// dtype (matmul() casts them first); integer products get no gradient.
// Products of 2-d float matrices read the transpose in place (matmul_tn,
// matmul_nt) instead of copying it first.

// x @ y^T, or x^T @ y (tn).
Tensor times_transposed(const Tensor& x, const Tensor& y, bool tn) {
  if (transposed_operands(x.ndim(), x.dtype(), y.ndim(), y.dtype()))
    return call(op(tn ? OpId::matmul_tn : OpId::matmul_nt), {x, y});
  return tn ? matmul(transpose(x), y) : matmul(x, transpose(y));
}

std::vector<Tensor> matmul_backward(const BackwardArgs& args) {
  const Tensor &a = args.inputs[0], &b = args.inputs[1];
  const bool want_a = bw::wants(a) && args.needs_grad(0), want_b = bw::wants(b) && args.needs_grad(1);
  if (!want_a && !want_b) return {Tensor(), Tensor()};
  const bool a_vec = a.ndim() == 1, b_vec = b.ndim() == 1;
  Tensor a2 = a_vec ? reshape(a, {1, a.shape()[0]}) : a;
  Tensor b2 = b_vec ? reshape(b, {b.shape()[0], 1}) : b;
  const int64_t k = a2.shape()[a2.ndim() - 1], n = b2.shape()[b2.ndim() - 1];
  // g as [batch..., M, N]: the dims 1-d operands dropped come back as 1.
  std::vector<int64_t> gshape = args.grads[0].shape().vec();
  if (a_vec) gshape.insert(gshape.end() - (b_vec ? 0 : 1), 1);
  if (b_vec) gshape.push_back(1);
  Tensor g = reshape(args.grads[0], gshape);

  Tensor ga, gb;
  if (want_a) ga = reshape(sum_to(times_transposed(g, b2, false), a2.shape()), a.shape().vec());
  if (want_b) {
    if (b2.ndim() == 2 && g.ndim() > 2) {
      // A matrix shared by a batch (x[batch, seq, d] @ w): the batch dims are
      // all a's, so they fold into one product [K, B*M] @ [B*M, N] instead
      // of B products summed afterwards.
      gb = times_transposed(reshape(a2, {-1, k}), reshape(g, {-1, n}), true);
    } else {
      gb = sum_to(times_transposed(a2, g, true), b2.shape());
    }
    gb = reshape(gb, b.shape().vec());
  }
  return {ga, gb};
}

}  // namespace

// ---- ops.h ---------------------------------------------------------------------
Tensor matmul(const Tensor& a, const Tensor& b) {
  // Promote in the open (astype ops) so a traced graph and autodiff see the casts.
  DType t = promote(a.dtype(), b.dtype());
  return call(op(OpId::matmul), {astype(a, t), astype(b, t)});
}

Tensor dot(const Tensor& a, const Tensor& b) {
  if (a.ndim() != 1 || b.ndim() != 1)
    throw Error("dot: expects two 1-d tensors, got " + a.type().str() + " and " + b.type().str() +
                "; use matmul (@) for matrices and batches");
  if (a.shape()[0] != b.shape()[0])
    throw Error("dot: shapes do not fit: " + a.type().str() + " and " + b.type().str() + " (" +
                std::to_string(a.shape()[0]) + " != " + std::to_string(b.shape()[0]) + ")");
  return matmul(a, b);  // 1-d @ 1-d is the 0-d inner product
}

Tensor outer(const Tensor& a, const Tensor& b) {
  if (a.ndim() != 1 || b.ndim() != 1)
    throw Error("outer: expects two 1-d tensors, got " + a.type().str() + " and " + b.type().str());
  // [N, 1] @ [1, M]: a product with K = 1, exact for every dtype.
  return matmul(reshape(a, {a.shape()[0], 1}), reshape(b, {1, b.shape()[0]}));
}

void register_matmul_ops(Registry& r) {
  r.add(OpDef{.id = OpId::matmul, .num_inputs = 2, .type_rule = matmul_type, .cpu = matmul_kernel,
              .backward = matmul_backward});
}

}  // namespace nn::backend
