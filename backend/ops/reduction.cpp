// Reductions: the registry entries, CPU kernels and C++ functions of the
// table NN_REDUCTION_OPS (ops/reduction_ops.h: sum, prod, max, min over a
// set of axes), the ops argmax and argmin (over one axis or the flattened
// tensor) with their CPU kernels, and the composites mean, var, std, logsumexp and norm, written
// with ops.h calls so that autodiff gets them from the primitives. The
// backward rules of sum, prod, max and min are in ops/reduction_backward.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "backend/autocast.h"
#include "backend/half.h"
#include "backend/ops.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/reduce_geometry.h"
#include "backend/ops/reduce_rules.h"
#include "backend/ops/register.h"
#include "backend/parallel.h"
#include "backend/simd_clones.h"

namespace nn::backend {
namespace detail {  // ops/reduction_backward.cpp
std::vector<Tensor> sum_backward(const BackwardArgs& a);
std::vector<Tensor> prod_backward(const BackwardArgs& a);
std::vector<Tensor> max_backward(const BackwardArgs& a);
std::vector<Tensor> min_backward(const BackwardArgs& a);
}  // namespace detail

namespace {

// The accumulation rules (ops/reduce_rules.h), shared with the CUDA kernels.
using reduce::MaxRule, reduce::MinRule, reduce::ProdRule, reduce::SumRule, reduce::better;

// Folds n contiguous elements. Eight independent lanes let the compiler
// vectorise without reassociating, and blocks of 1024 bound the rounding
// error of long float sums (a two-level, pairwise-like sum).
template <class Rule, class T>
typename Rule::Acc fold_contiguous(const T* p, int64_t n) {
  using Acc = typename Rule::Acc;
  constexpr int kLanes = 8;
  constexpr int64_t kBlock = 1024;
  Acc total = Rule::init();
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    Acc lanes[kLanes];
    for (auto& l : lanes) l = Rule::init();
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int j = 0; j < kLanes; ++j) lanes[j] = Rule::step(lanes[j], p[i + j]);
    Acc block = Rule::init();
    for (auto l : lanes) block = Rule::merge(block, l);
    for (; i < e; ++i) block = Rule::step(block, p[i]);
    total = Rule::merge(total, block);
  }
  return total;
}

// Calls f(offset) for each point of an index space (once for an empty list).
template <class F>
void for_each_offset(const DimList& dims, F&& f) {
  int64_t idx[kMaxDims] = {};
  int64_t off = 0;
  while (true) {
    f(off);
    int k = dims.n - 1;
    for (; k >= 0; --k) {
      off += dims.stride[k];
      if (++idx[k] < dims.size[k]) break;
      off -= dims.stride[k] * dims.size[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

// acc[j] = the fold of row[j] over the rows r0 <= r < r1 of `rows` (offsets
// from base), w wide, at the CPU's widest vectors (backend/simd_clones.h).
// Four rows go into each pass over acc, in order: the same sums, but acc is
// loaded and stored once per four rows, so a narrow block (w = 16: a bias's
// gradient in nChw16c) is not bound by storing and reloading it every row.
template <class Rule, class T>
NN_SIMD_CLONES NN_FLATTEN void fold_rows(const T* base, const DimList& rows, int64_t r0, int64_t r1,
                                         typename Rule::Acc* acc, int64_t w) {
  for (int64_t j = 0; j < w; ++j) acc[j] = Rule::init();
  int64_t idx[kMaxDims], off = 0;  // row r0's index and offset
  for (int64_t k = rows.n - 1, i = r0; k >= 0; --k, i /= rows.size[k + 1]) {
    idx[k] = i % rows.size[k];
    off += idx[k] * rows.stride[k];
  }
  auto next_row = [&] {
    const T* row = base + off;
    for (int k = rows.n - 1; k >= 0; --k) {
      off += rows.stride[k];
      if (++idx[k] < rows.size[k]) break;
      off -= rows.stride[k] * rows.size[k];
      idx[k] = 0;
    }
    return row;
  };
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) {
    const T *a = next_row(), *b = next_row(), *c = next_row(), *d = next_row();
    for (int64_t j = 0; j < w; ++j)
      acc[j] = Rule::step(Rule::step(Rule::step(Rule::step(acc[j], a[j]), b[j]), c[j]), d[j]);
  }
  for (; r < r1; ++r) {
    const T* row = next_row();
    for (int64_t j = 0; j < w; ++j) acc[j] = Rule::step(acc[j], row[j]);
  }
}

// Width of the column blocks that the kept-innermost loops fold row by row:
// wide, so that each row segment is a long sequential read (a narrow block
// over many rows touches a new page per row), yet split enough to give every
// thread a share when there are few outer rows.
int64_t column_block(int64_t outer, int64_t inner) {
  const int64_t wanted = 2 * int64_t(std::max(1, omp_get_max_threads()));
  const int64_t splits = outer >= wanted ? 1 : (wanted + outer - 1) / outer;
  int64_t w = std::clamp<int64_t>((inner + splits - 1) / splits, 64, 4096);
  w = (w + 15) / 16 * 16;
  return std::min(w, inner);
}

template <class Rule, class T>
void reduce_typed(const T* x, typename Rule::Out* out, const Shape& shape, const std::vector<int64_t>& axes,
                  int64_t out_count) {
  using Acc = typename Rule::Acc;
  using Out = typename Rule::Out;
  if (shape.numel() == 0) {  // nothing to fold: every result is the identity
    std::fill(out, out + out_count, Out(Rule::init()));
    return;
  }
  ReduceGeometry g = reduce_geometry(shape, axes);
  const int64_t work = g.reduced.count();  // elements folded into each result

  if (g.inner_reduced) {
    // Each result folds contiguous runs of the innermost reduced dim.
    const int64_t run = g.reduced.size[g.reduced.n - 1];
    DimList outer_reduced = g.reduced;
    --outer_reduced.n;
    if (g.kept.n == 0 && outer_reduced.n == 0 && run >= 2 * kParallelGrain) {
      // A full reduction of a large tensor: fixed-size chunks in parallel, then
      // merged in order, so the result does not depend on the thread count.
      constexpr int64_t kChunk = 65536;
      const int64_t chunks = (run + kChunk - 1) / kChunk;
      std::vector<Acc> partial(size_t(chunks), Rule::init());
      parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
          partial[size_t(c)] = fold_contiguous<Rule>(x + c * kChunk, std::min(kChunk, run - c * kChunk));
      });
      Acc acc = Rule::init();
      for (Acc p : partial) acc = Rule::merge(acc, p);
      out[0] = Out(acc);
      return;
    }
    parallel_for(out_count, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* base = x + g.kept.offset_of(o);
        Acc acc = Rule::init();
        for_each_offset(outer_reduced, [&](int64_t off) { acc = Rule::merge(acc, fold_contiguous<Rule>(base + off, run)); });
        out[o] = Out(acc);
      }
    });
    return;
  }

  // The innermost dim is kept: fold whole rows into a block of accumulators,
  // which reads memory in order and vectorises. Many rows (a bias's
  // gradient: [N, C/16, H, W, 16] over N, H and W) are split into chunks of
  // fixed size, folded in parallel and merged in order, so that the threads
  // share them and the result does not depend on their number.
  const int64_t inner = g.kept.n ? g.kept.size[g.kept.n - 1] : 1;
  DimList outer_kept = g.kept;
  if (outer_kept.n) --outer_kept.n;
  const int64_t width = column_block(outer_kept.count(), inner);
  const int64_t blocks = (inner + width - 1) / width;
  const int64_t chunk_rows = std::max<int64_t>(1, kParallelGrain / 2 / width);
  const int64_t chunks = (work + chunk_rows - 1) / chunk_rows;
  const int64_t items = outer_kept.count() * blocks;
  std::unique_ptr<Acc[]> partial(new Acc[size_t(chunks > 1 ? items * chunks * width : 0)]);
  parallel_for(items * chunks, std::max<int64_t>(1, kParallelGrain / (std::min(work, chunk_rows) * width)),
               [&](int64_t b, int64_t e) {
                 // (not std::vector: vector<bool> would pack bits)
                 std::unique_ptr<Acc[]> acc(new Acc[size_t(width)]);
                 for (int64_t task = b; task < e; ++task) {
                   const int64_t item = task / chunks, chunk = task % chunks;
                   const int64_t o = item / blocks, j0 = (item % blocks) * width;
                   const int64_t w = std::min(width, inner - j0);
                   const int64_t r0 = chunk * chunk_rows, r1 = std::min(work, r0 + chunk_rows);
                   Acc* dst = chunks > 1 ? partial.get() + task * width : acc.get();
                   fold_rows<Rule>(x + outer_kept.offset_of(o) + j0, g.reduced, r0, r1, dst, w);
                   if (chunks == 1)
                     for (int64_t j = 0; j < w; ++j) out[o * inner + j0 + j] = Out(dst[j]);
                 }
               });
  if (chunks == 1) return;
  parallel_for(items, std::max<int64_t>(1, kParallelGrain / (chunks * width)), [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / blocks, j0 = (item % blocks) * width, w = std::min(width, inner - j0);
      Acc* first = partial.get() + item * chunks * width;
      for (int64_t c = 1; c < chunks; ++c)
        for (int64_t j = 0; j < w; ++j) first[j] = Rule::merge(first[j], first[c * width + j]);
      for (int64_t j = 0; j < w; ++j) out[o * inner + j0 + j] = Out(first[j]);
    }
  });
}

template <template <class> class Rule>
void reduce_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const auto& axes = attrs.get<std::vector<int64_t>>("axes");
  const Tensor& x = in[0];
  ew::check_cpu_dtype("reduction", x.dtype());
  visit_dtype(x.dtype(), [&]<class T>() {
    using R = Rule<T>;
    reduce_typed<R>(x.data<T>(), out[0].data<typename R::Out>(), x.shape(), axes, out[0].numel());
  });
}

// ---- type rules -----------------------------------------------------------------
std::string axes_str(const std::vector<int64_t>& axes) { return Shape::of(axes).str(); }

Shape reduced_shape(const Shape& s, const std::vector<int64_t>& axes, bool keepdims) {
  Shape r;
  for (int d = 0; d < s.ndim(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced) r.push_back(s[d]);
    else if (keepdims) r.push_back(1);
  }
  return r;
}

void check_axes_attr(const std::string& op, const TensorType& x, const std::vector<int64_t>& axes) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= x.shape.ndim() || (i && axes[i] <= axes[i - 1]))
      throw Error("internal: " + op + " got axes " + axes_str(axes) + " for " + x.str() +
                  " (expected sorted, distinct, non-negative axes)");
}

template <bool kNeedsElements>
OutTypes reduce_type(const std::string& op, std::span<const TensorType> in, const Attrs& attrs, bool widen_ints) {
  const TensorType& x = in[0];
  const auto& axes = attrs.get<std::vector<int64_t>>("axes");
  check_axes_attr(op, x, axes);
  if constexpr (kNeedsElements) {
    // max and min have no identity, so an empty slice has no answer.
    for (int64_t a : axes)
      if (x.shape[int(a)] == 0)
        throw Error(op + ": cannot reduce over axis " + std::to_string(a) + " of size 0 in " + x.str() + " (" + op +
                    " of no elements is undefined)");
  }
  TensorType out;
  out.dtype = widen_ints && !is_floating(x.dtype) ? DType::i64 : x.dtype;
  out.shape = reduced_shape(x.shape, axes, attrs.get_or<bool>("keepdims", false));
  out.device = x.device;
  return {out};
}

template <OpId Id, bool kEmptyOk, bool kWidensInts>
OutTypes table_type(std::span<const TensorType> in, const Attrs& a) {
  return reduce_type<!kEmptyOk>(op_name(Id), in, a, kWidensInts);
}

// ---- argmax / argmin ------------------------------------------------------------
// Attrs: `axis` (absent: the flattened tensor), keepdims. The result is i64.
template <bool kMax>
OutTypes arg_type(std::span<const TensorType> in, const Attrs& attrs) {
  const char* op = kMax ? "argmax" : "argmin";
  const TensorType& x = in[0];
  const bool keepdims = attrs.get_or<bool>("keepdims", false);
  TensorType out{DType::i64, {}, x.device};
  if (attrs.has("axis")) {
    int64_t axis = attrs.get<int64_t>("axis");
    if (axis < 0 || axis >= x.shape.ndim())
      throw Error(std::string("internal: ") + op + " got axis " + std::to_string(axis) + " for " + x.str());
    if (x.shape[int(axis)] == 0)
      throw Error(std::string(op) + ": cannot take the " + op + " over axis " + std::to_string(axis) +
                  " of size 0 in " + x.str());
    out.shape = reduced_shape(x.shape, {axis}, keepdims);
  } else {
    if (x.shape.numel() == 0) throw Error(std::string(op) + ": cannot take the " + op + " of an empty tensor " + x.str());
    if (keepdims)
      for (int d = 0; d < x.shape.ndim(); ++d) out.shape.push_back(1);
  }
  return {out};
}

template <bool kMax>
void arg_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& x = in[0];
  int64_t outer = 1, n = x.numel(), inner = 1;
  if (attrs.has("axis")) {
    int axis = int(attrs.get<int64_t>("axis"));
    n = x.shape()[axis];
    for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
    for (int d = axis + 1; d < x.ndim(); ++d) inner *= x.shape()[d];
  }
  int64_t* result = out[0].data<int64_t>();
  if (outer * inner == 0) return;
  ew::check_cpu_dtype(kMax ? "argmax" : "argmin", x.dtype());
  visit_dtype(x.dtype(), [&]<class T>() {
    const T* px = x.data<T>();
    if (inner == 1) {
      parallel_for(outer, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          const T* row = px + o * n;
          int64_t best = 0;
          for (int64_t i = 1; i < n; ++i)
            if (better<kMax>(row[i], row[best])) best = i;
          result[o] = best;
        }
      });
      return;
    }
    // Walk the reduced axis row by row, keeping a block of candidates.
    const int64_t width = column_block(outer, inner);
    const int64_t blocks = (inner + width - 1) / width;
    parallel_for(outer * blocks, std::max<int64_t>(1, kParallelGrain / (n * width)),
                 [&](int64_t b, int64_t e) {
                   std::unique_ptr<T[]> best(new T[size_t(width)]);
                   for (int64_t item = b; item < e; ++item) {
                     const int64_t o = item / blocks, j0 = (item % blocks) * width;
                     const int64_t w = std::min(width, inner - j0);
                     const T* base = px + o * n * inner + j0;
                     int64_t* dst = result + o * inner + j0;
                     for (int64_t j = 0; j < w; ++j) best[j] = base[j], dst[j] = 0;
                     for (int64_t i = 1; i < n; ++i) {
                       const T* row = base + i * inner;
                       for (int64_t j = 0; j < w; ++j)
                         if (better<kMax>(row[j], best[j])) best[j] = row[j], dst[j] = i;
                     }
                   }
                 });
  });
}

// ---- axis normalisation for the ops.h functions ------------------------------------
std::string axis_range(int ndim) {
  return ndim == 0 ? " (it has no axes)"
                   : " (valid axes are " + std::to_string(-ndim) + ".." + std::to_string(ndim - 1) + ")";
}

std::vector<int64_t> normalize_axes(const char* op, const Tensor& x, const Axes& axes) {
  std::vector<int64_t> r;
  if (!axes) {
    for (int d = 0; d < x.ndim(); ++d) r.push_back(d);
    return r;
  }
  for (int64_t a : *axes) {
    int norm;
    if (!normalize_axis(a, x.ndim(), norm))
      throw Error(std::string(op) + ": axis " + std::to_string(a) + " is out of range for " + x.type().str() +
                  axis_range(x.ndim()));
    if (std::find(r.begin(), r.end(), norm) != r.end())
      throw Error(std::string(op) + ": axis " + std::to_string(a) + " appears twice in axes " + axes_str(*axes) +
                  " for " + x.type().str());
    r.push_back(norm);
  }
  std::sort(r.begin(), r.end());
  return r;
}

int64_t reduced_count(const Tensor& x, const std::vector<int64_t>& axes) {
  int64_t c = 1;
  for (int64_t a : axes) c *= x.shape()[int(a)];
  return c;
}

Tensor reduce_call(OpId id, const Tensor& x, const Axes& axes, bool keepdims) {
  Attrs attrs{{"axes", normalize_axes(op_name(id), x, axes)}, {"keepdims", keepdims}};
  return call(op(id), {x}, attrs);
}

Tensor arg_call(OpId id, const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  if (!axis) return call(op(id), {x}, Attrs{{"keepdims", keepdims}});
  int norm;
  if (!normalize_axis(*axis, x.ndim(), norm))
    throw Error(std::string(op_name(id)) + ": axis " + std::to_string(*axis) + " is out of range for " +
                x.type().str() + axis_range(x.ndim()));
  return call(op(id), {x}, Attrs{{"axis", int64_t(norm)}, {"keepdims", keepdims}});
}

// Composites that divide or take roots work on floats: integers and bools
// become f32 first, as mean does (SPEC §7).
Tensor as_float(const Tensor& x) { return is_floating(x.dtype()) ? x : astype(x, DType::f32); }

// A host number: weak, so it never widens the tensor it meets.
Tensor host_number(double v) { return scalar(v, DType::f64, /*weak=*/true); }

}  // namespace

// ---- ops.h ---------------------------------------------------------------------
#define NN_REDUCTION_FUNCTION(id, ...) \
  Tensor id(const Tensor& x, const Axes& axes, bool keepdims) { return reduce_call(OpId::id, x, axes, keepdims); }
NN_REDUCTION_OPS(NN_REDUCTION_FUNCTION)
#undef NN_REDUCTION_FUNCTION

Tensor argmax(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_call(OpId::argmax, x, axis, keepdims);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_call(OpId::argmin, x, axis, keepdims);
}

// sum(x, ax) / denom. An f16 or bf16 x is summed in f32 and rounded to its
// dtype once, after the division: rounded first, the sum of 66 f16 values
// of 1000 would be inf. Under autocast, where the reductions give f32
// (SPEC §15), the result stays f32, as sum's does.
static Tensor sum_divided(const Tensor& x, const std::vector<int64_t>& ax, bool keepdims, double denom) {
  if (!is_half_float(x.dtype())) return div(sum(x, ax, keepdims), host_number(denom));
  Tensor r = div(sum(astype(x, DType::f32), ax, keepdims), host_number(denom));
  return autocast_on() ? r : astype(r, x.dtype());
}

Tensor mean(const Tensor& x, const Axes& axes, bool keepdims) {
  auto ax = normalize_axes("mean", x, axes);
  // sum of an integer tensor is i64; true division by the count gives f32.
  return sum_divided(x, ax, keepdims, double(reduced_count(x, ax)));
}

// norm of an f16 or bf16 x: f applied to x in f32, its result rounded to
// x's dtype once, as mean's is (300 squared overflowed f16). Under autocast
// the result stays f32.
template <class F>
static Tensor in_f32_when_half(const Tensor& x, F f) {
  if (!is_half_float(x.dtype())) return f(as_float(x));
  Tensor r = f(astype(x, DType::f32));
  return autocast_on() ? r : astype(r, x.dtype());
}

static Tensor variance(const Tensor& xf, const std::vector<int64_t>& ax, bool keepdims, int64_t correction) {
  // Two passes (subtract the mean first): no cancellation of large squares.
  Tensor d = sub(xf, mean(xf, ax, /*keepdims=*/true));
  double denom = std::max(double(reduced_count(xf, ax)) - double(correction), 0.0);  // no int64 overflow
  return sum_divided(mul(d, d), ax, keepdims, denom);
}

// var and std of floats narrower than f64: computed in f64 and rounded to
// x's dtype once, as PyTorch's CPU kernels accumulate. In f32 the squared
// deviations overflow (1e20) or underflow (1e-25) where the result fits,
// which gave inf or 0, and a zero gradient. Under autocast a 16-bit x's
// result stays f32.
template <class F>
static Tensor in_f64(const Tensor& x, F f) {
  const Tensor xf = as_float(x);
  if (xf.dtype() == DType::f64) return f(xf);
  return astype(f(astype(xf, DType::f64)), autocast_on() && is_half_float(xf.dtype()) ? DType::f32 : xf.dtype());
}

Tensor var(const Tensor& x, const Axes& axes, bool keepdims, int64_t correction) {
  auto ax = normalize_axes("var", x, axes);
  return in_f64(x, [&](const Tensor& xd) { return variance(xd, ax, keepdims, correction); });
}

// sqrt(s) for s >= 0 (a variance, a sum of squares) whose gradient at s = 0
// is 0, as PyTorch's std and norm have it at a constant or all-zero input:
// sqrt's own is inf there, and inf times the zero gradient of s is NaN. The
// inner where gives sqrt a finite gradient; the outer routes none into it.
static Tensor sqrt_zero_gradient_at_0(const Tensor& s) {
  const Tensor zero = eq(s, scalar(0.0, s.dtype()));
  return where(zero, scalar(0.0, s.dtype()), sqrt(where(zero, scalar(1.0, s.dtype()), s)));
}

Tensor std(const Tensor& x, const Axes& axes, bool keepdims, int64_t correction) {
  auto ax = normalize_axes("std", x, axes);
  return in_f64(x, [&](const Tensor& xd) { return sqrt_zero_gradient_at_0(variance(xd, ax, keepdims, correction)); });
}

Tensor logsumexp(const Tensor& x, const Axes& axes, bool keepdims) {
  auto ax = normalize_axes("logsumexp", x, axes);
  Tensor xf = as_float(x);
  // Nothing to sum: log(0) = -inf, as NumPy; there is no max to shift by.
  if (reduced_count(x, ax) == 0) return log(sum(exp(xf), ax, keepdims));
  Tensor m = max(xf, ax, /*keepdims=*/true);
  // Shift by the max so exp never overflows. Where the max is not finite
  // (all -inf, or an inf) the shift would give inf - inf = NaN: shift by 0
  // there instead, as SciPy does. m - m is NaN exactly where m is not finite.
  m = where(isnan(sub(m, m)), scalar(0.0, m.dtype()), m);
  Tensor r = add(log(sum(exp(sub(xf, m)), ax, /*keepdims=*/true)), m);
  return keepdims ? r : reshape(r, reduced_shape(x.shape(), ax, false).vec());
}

// Counts of the true elements, compared with 0: an empty reduction counts
// none (all true, any false, as NumPy and PyTorch), where min and max of
// nothing are errors.
Tensor any(const Tensor& x, const Axes& axes, bool keepdims) {
  return gt(sum(astype(x, DType::boolean), axes, keepdims), scalar_int(0, DType::i64, /*weak=*/true));
}

Tensor all(const Tensor& x, const Axes& axes, bool keepdims) {
  return eq(sum(logical_not(astype(x, DType::boolean)), axes, keepdims), scalar_int(0, DType::i64, /*weak=*/true));
}

Tensor norm(const Tensor& x, const Axes& axes, bool keepdims) {
  // In f32 under autocast (SPEC §15): the squares too, not only their sum.
  auto ax = normalize_axes("norm", x, axes);
  return in_f32_when_half(autocast_f32(x),
                          [&](const Tensor& xf) { return sqrt_zero_gradient_at_0(sum(mul(xf, xf), ax, keepdims)); });
}

void register_reduction_ops(Registry& r) {
#define NN_REDUCTION_ENTRY(op, Rule, empty_ok, widens_ints, gradient)                                    \
  r.add(OpDef{.id = OpId::op, .num_inputs = 1, .type_rule = table_type<OpId::op, empty_ok, widens_ints>, \
              .cpu = reduce_kernel<Rule>, .backward = gradient});
  NN_REDUCTION_OPS(NN_REDUCTION_ENTRY)
#undef NN_REDUCTION_ENTRY
  r.add(OpDef{.id = OpId::argmax, .num_inputs = 1, .type_rule = arg_type<true>, .cpu = arg_kernel<true>});
  r.add(OpDef{.id = OpId::argmin, .num_inputs = 1, .type_rule = arg_type<false>, .cpu = arg_kernel<false>});
}

}  // namespace nn::backend
