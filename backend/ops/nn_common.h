// Pieces shared by the neural-network op files (nn_conv, nn_pool, nn_norm,
// nn_softmax, nn_misc): (h, w) pair attributes, dtype checks for float-only
// ops, BLAS calls by element type, and the batch splitter that runs one
// sample per thread with single-threaded BLAS calls inside.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backend/nn_ops.h"
#include "backend/op_registry.h"
#include "backend/ops/gemm.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/type_rules.h"

namespace nn::backend::nnops {

// ---- attributes ----
inline AttrValue pair_attr(Pair p) { return std::vector<int64_t>{p[0], p[1]}; }
inline Pair get_pair(const Attrs& a, std::string_view key) {
  const auto& v = a.get<std::vector<int64_t>>(key);
  if (v.size() != 2) throw Error("internal: attribute `" + std::string(key) + "` is not a pair");
  return {v[0], v[1]};
}
inline std::string pair_str(Pair p) {
  std::string s = "(";  // appended, not `"(" + ...`: GCC 12's -Wrestrict misfires on that
  s += std::to_string(p[0]);
  s += ", ";
  s += std::to_string(p[1]);
  s += ')';
  return s;
}

// Window attributes (kernel, stride, padding, dilation) past int's range are
// refused: no library takes them (cuDNN's are int), and below it the
// geometry's sums and products stay within int64.
constexpr int64_t kMaxWindowAttr = 0x7fffffff;
inline void require_window_attr(std::string_view op, std::string_view what, Pair p) {
  if (p[0] > kMaxWindowAttr || p[1] > kMaxWindowAttr)
    throw Error(std::string(op) + ": " + std::string(what) + " " + pair_str(p) + " is too large (at most " +
                std::to_string(kMaxWindowAttr) + ")");
}

// ---- dtypes ----
// Float ops compute in f32 or f64; f16 and bf16 are widened to f32 by the
// kernels (on a GPU) or by dispatch (on the CPU, backend/dispatch.h). Inputs of
// other dtypes are converted by the ops.h-level functions before dispatch
// (so a trace shows the cast), and a direct op call with them is refused.
inline void require_float(std::string_view op, std::span<const TensorType> in, std::span<const int> which) {
  DType first = in[size_t(which[0])].dtype;
  for (int i : which) {
    const TensorType& t = in[size_t(i)];
    if (!is_floating(t.dtype) || t.dtype != first) throw_dtype_error(op, "expects float tensors of one dtype", in);
  }
}
// The float dtype an integer or bool tensor computes in.
inline Tensor as_float(const Tensor& x) { return is_floating(x.dtype()) ? x : astype(x, DType::f32); }

// Threads for a loop over n samples that each do a gemm of their own: one a
// thread, at most one thread a sample; 1 inside an enclosing team.
inline int batch_threads(int64_t n) {
  if (omp_in_parallel()) return 1;
  return int(std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), n)));
}

// Runs f(thread, begin, end) over [0, n) split into `threads` contiguous,
// balanced, non-empty ranges (n >= threads). With one thread, f runs inline.
// OpenBLAS itself is single-threaded (backend::set_num_threads), so each
// thread's gemms stay on that thread. f must not throw.
template <class F>
void split_batch(int threads, int64_t n, F&& f) {
  if (n <= 0) return;
  if (threads <= 1) {
    f(0, int64_t(0), n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), k = omp_get_num_threads();
    const int64_t b = n * t / k, e = n * (t + 1) / k;
    if (b < e) f(int(t), b, e);
  }
}

// A scratch tensor from the device pool, its memory taken now (outside any
// parallel region, so that running out of memory is an Error naming the op).
inline Tensor scratch(int64_t elems, DType dtype) {
  Tensor t = Tensor::empty(Shape{std::max<int64_t>(elems, 0)}, dtype);
  t.raw_data();
  return t;
}

// Runs f(); an Error whose message starts with `from` (say "take: ") is
// rethrown starting with `to` instead ("embedding: "), so that a composite
// reports under the name the user called. Eager calls only: under a tracer
// the inner op's kernel reports at replay, under its own name.
template <class F>
Tensor renaming_errors(std::string_view from, std::string_view to, F&& f) {
  try {
    return f();
  } catch (const OutOfMemory&) {
    throw;
  } catch (const Error& e) {
    std::string_view m = e.what();
    if (m.substr(0, from.size()) != from) throw;
    throw Error(std::string(to) + std::string(m.substr(from.size())));
  }
}

}  // namespace nn::backend::nnops
