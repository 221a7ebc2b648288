// Reduction kernels (reduction_kernels.h). Floats accumulate in double and
// integers in wrapping i64, as the CPU kernels (backend/ops/reduction.cpp);
// f16 and bf16 fold as float (sums in double) and round the result once;
// max and min propagate NaN; argmax/argmin keep the first extreme and the
// first NaN. Each result is folded by a fixed tree of threads, so the
// result does not depend on timing.
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/reduction_kernels.h"
#include "backend/ops/reduce_rules.h"

namespace nn::backend::cuda {
namespace {

// The accumulation rules (backend/ops/reduce_rules.h), the CPU kernels' own.
using reduce::MaxRule, reduce::MinRule, reduce::ProdRule, reduce::SumRule, reduce::better, reduce::is_nan;

// Index i of a space of n dims (sizes, strides; dividers for the 32-bit
// path when `div`) as an offset.
__device__ inline int64_t offset_in(const int64_t* size, const int64_t* stride, const IndexDivider* div, int n,
                                    int64_t i) {
  int64_t off = 0;
  auto add = [&](int d, int64_t idx) { off += idx * stride[d]; };
  if (div) split_index32(div, n, uint32_t(i), add);
  else split_index(size, n, i, add);
  return off;
}

// A reduction of T with rule R writes Out: R's, or T itself for f16 and bf16.
template <class T, class R>
using out_t = std::conditional_t<kIsHalf<T>, T, typename R::Out>;

// Part c of result o: elements [c * len, (c + 1) * len) of its reduced space.
template <class T, class R>
__device__ inline typename R::Acc fold_part(const ReduceLaunch& l, int64_t o, int64_t c, int64_t first, int64_t step) {
  using Acc = typename R::Acc;
  const T* x = static_cast<const T*>(l.x);
  const int64_t base = offset_in(l.kept_size, l.kept_stride, l.index32 ? l.kept_div : nullptr, l.kept_n, o);
  const int64_t len = (l.work + l.chunks - 1) / l.chunks;
  const int64_t b = c * len, e = b + len < l.work ? b + len : l.work;
  Acc acc = R::init();
  for (int64_t r = b + first; r < e; r += step)
    acc = R::merge(acc, Acc(widen(x[base + offset_in(l.red_size, l.red_stride, l.index32 ? l.red_div : nullptr,
                                                     l.red_n, r)])));
  return acc;
}

template <class Acc, class R>
__device__ inline Acc block_fold(Acc v, Acc* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) shared[threadIdx.x] = R::merge(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  return shared[0];
}

// One block per (result, part): the threads stride over the reduced space
// (used when it includes x's innermost dim, so neighbours read neighbours).
template <class T, class R>
__global__ void reduce_by_block(ReduceLaunch l) {
  using Acc = typename R::Acc;
  __shared__ Acc shared[kThreads];
  const int64_t item = blockIdx.x, o = item / l.chunks, c = item % l.chunks;
  Acc acc = block_fold<Acc, R>(fold_part<T, R>(l, o, c, threadIdx.x, blockDim.x), shared);
  if (threadIdx.x == 0) {
    if (l.chunks == 1) static_cast<out_t<T, R>*>(l.out)[o] = narrow<out_t<T, R>>(acc);
    else static_cast<Acc*>(l.partial)[item] = acc;
  }
}

// One thread per (result, part): used when x's innermost dim is kept, so
// neighbouring threads read neighbouring elements.
template <class T, class R>
__global__ void reduce_by_thread(ReduceLaunch l) {
  using Acc = typename R::Acc;
  const int64_t items = l.out_count * l.chunks;
  for (int64_t item = global_index(); item < items; item += grid_stride()) {
    const int64_t c = item / l.out_count, o = item % l.out_count;
    Acc acc = fold_part<T, R>(l, o, c, 0, 1);
    if (l.chunks == 1) static_cast<out_t<T, R>*>(l.out)[o] = narrow<out_t<T, R>>(acc);
    else static_cast<Acc*>(l.partial)[o * l.chunks + c] = acc;
  }
}

template <class T, class R>
__global__ void merge_parts(ReduceLaunch l) {
  using Acc = typename R::Acc;
  const Acc* p = static_cast<const Acc*>(l.partial);
  for (int64_t o = global_index(); o < l.out_count; o += grid_stride()) {
    Acc acc = R::init();
    for (int64_t c = 0; c < l.chunks; ++c) acc = R::merge(acc, p[o * l.chunks + c]);
    static_cast<out_t<T, R>*>(l.out)[o] = narrow<out_t<T, R>>(acc);
  }
}

template <class T, class R>
__global__ void fill_identity(ReduceLaunch l) {
  for (int64_t o = global_index(); o < l.out_count; o += grid_stride())
    static_cast<out_t<T, R>*>(l.out)[o] = narrow<out_t<T, R>>(R::init());
}

template <template <class> class Rule, class T>
void run(const ReduceLaunch& l, cudaStream_t s) {
  using R = Rule<math_t<T>>;
  if (l.work == 0) {
    fill_identity<T, R><<<blocks_for(l.out_count), kThreads, 0, s>>>(l);
    return;
  }
  if (l.by_block) reduce_by_block<T, R><<<unsigned(l.out_count * l.chunks), kThreads, 0, s>>>(l);
  else reduce_by_thread<T, R><<<blocks_for(l.out_count * l.chunks), kThreads, 0, s>>>(l);
  if (l.chunks > 1) merge_parts<T, R><<<blocks_for(l.out_count), kThreads, 0, s>>>(l);
}

template <template <class> class Rule>
bool run_typed(const ReduceLaunch& l, cudaStream_t s) {
  return with_any_type(l.dtype, [&]<class T>() { run<Rule, T>(l, s); });
}

}  // namespace

// A block per result when each folds a long run of the innermost dim;
// enough parts to give every SM work when there are few results, each part
// long enough to be worth a thread (or a block).
void plan_reduce(ReduceLaunch& l) {
  l.by_block = l.inner_reduced && l.work >= 256;
  l.chunks = 1;
  if (l.work == 0 || l.out_count == 0) return;
  const int64_t min_part = l.by_block ? 4096 : 256;
  const int64_t wanted_items = l.by_block ? 512 : 65536;
  if (l.out_count >= wanted_items) return;
  int64_t c = (wanted_items + l.out_count - 1) / l.out_count;
  const int64_t most = (l.work + min_part - 1) / min_part;
  if (c > most) c = most;
  l.chunks = c < 1 ? 1 : c;
}

bool reduce_launch(OpId op, const ReduceLaunch& l, cudaStream_t s) {
  if (l.out_count == 0) return true;
  switch (op) {
#define NN_REDUCTION_CASE(id, Rule, ...) \
  case OpId::id: return run_typed<Rule>(l, s);
    NN_REDUCTION_OPS(NN_REDUCTION_CASE)
#undef NN_REDUCTION_CASE
    default: return false;
  }
}

// ---- argmax / argmin ----
namespace {

// One thread per (outer, inner) line, scanning it in order.
template <bool kMax, class T>
__global__ void arg_by_thread(ArgLaunch l) {
  const T* x = static_cast<const T*>(l.x);
  const int64_t lines = l.outer * l.inner;
  for (int64_t i = global_index(); i < lines; i += grid_stride()) {
    const int64_t o = i / l.inner, j = i % l.inner;
    const T* p = x + o * l.n * l.inner + j;
    int64_t best = 0;
    for (int64_t k = 1; k < l.n; ++k)
      if (better<kMax>(widen(p[k * l.inner]), widen(p[best * l.inner]))) best = k;
    l.out[i] = best;
  }
}

// One block per line (long lines with inner == 1): each thread keeps its
// best, then the block keeps the better, and the lower index on a tie.
template <bool kMax, class T>
__global__ void arg_by_block(ArgLaunch l) {
  using M = math_t<T>;
  __shared__ M vals[kThreads];
  __shared__ int64_t idx[kThreads];
  const T* p = static_cast<const T*>(l.x) + int64_t(blockIdx.x) * l.n;
  int64_t best = -1;
  for (int64_t k = threadIdx.x; k < l.n; k += blockDim.x)
    if (best < 0 || better<kMax>(widen(p[k]), widen(p[best]))) best = k;
  vals[threadIdx.x] = best >= 0 ? widen(p[best]) : M(0);
  idx[threadIdx.x] = best;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) {
      const int64_t a = idx[threadIdx.x], b = idx[threadIdx.x + s];
      bool take_b = false;
      if (b >= 0) {
        if (a < 0) take_b = true;
        else if (better<kMax>(vals[threadIdx.x + s], vals[threadIdx.x])) take_b = true;
        else if (!better<kMax>(vals[threadIdx.x], vals[threadIdx.x + s]) && b < a) take_b = true;
      }
      if (take_b) {
        vals[threadIdx.x] = vals[threadIdx.x + s];
        idx[threadIdx.x] = b;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) l.out[blockIdx.x] = idx[0];
}

template <bool kMax, class T>
void arg_run(const ArgLaunch& l, cudaStream_t s) {
  if (l.inner == 1 && l.n >= 2048 && l.outer <= 65535) arg_by_block<kMax, T><<<unsigned(l.outer), kThreads, 0, s>>>(l);
  else arg_by_thread<kMax, T><<<blocks_for(l.outer * l.inner), kThreads, 0, s>>>(l);
}

template <bool kMax>
bool arg_typed(const ArgLaunch& l, cudaStream_t s) {
  return with_any_type(l.dtype, [&]<class T>() { arg_run<kMax, T>(l, s); });
}

}  // namespace

bool arg_launch(const ArgLaunch& l, cudaStream_t s) {
  if (l.outer * l.inner == 0) return true;
  return l.max ? arg_typed<true>(l, s) : arg_typed<false>(l, s);
}

// ---- integer matrix product ----
namespace {

template <class T>
__global__ void int_matmul(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = global_index(); i < m * n; i += grid_stride()) {
    const int64_t r = i / n, col = i % n;
    uint64_t acc = 0;
    for (int64_t p = 0; p < k; ++p) acc += uint64_t(int64_t(a[r * k + p])) * uint64_t(int64_t(b[p * n + col]));
    if constexpr (std::is_same_v<T, bool>) c[i] = acc != 0;
    else c[i] = T(int64_t(acc));
  }
}

}  // namespace

bool int_matmul_launch(const void* a, const void* b, void* c, DType dtype, int64_t m, int64_t n, int64_t k,
                       cudaStream_t s) {
  if (m * n == 0) return true;
  const unsigned blocks = blocks_for(m * n);
  switch (dtype) {
    case DType::i32:
      int_matmul<<<blocks, kThreads, 0, s>>>(static_cast<const int32_t*>(a), static_cast<const int32_t*>(b),
                                             static_cast<int32_t*>(c), m, n, k);
      return true;
    case DType::i64:
      int_matmul<<<blocks, kThreads, 0, s>>>(static_cast<const int64_t*>(a), static_cast<const int64_t*>(b),
                                             static_cast<int64_t*>(c), m, n, k);
      return true;
    case DType::boolean:
      int_matmul<<<blocks, kThreads, 0, s>>>(static_cast<const bool*>(a), static_cast<const bool*>(b),
                                             static_cast<bool*>(c), m, n, k);
      return true;
    default: return false;
  }
}

}  // namespace nn::backend::cuda
