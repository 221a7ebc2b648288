// The elementwise engine shared by the CPU kernels of unary, binary and
// ternary ops (and by anyone else writing one): `ew::map` writes
// out[i] = f(in0[i'], in1[i''], ...) where each input broadcasts to the
// output's shape (NumPy rules; the type rule has already checked them).
//
// How it runs, cheapest case first:
//  1. every input has the output's shape: one flat loop the compiler vectorises;
//  2. every input has the output's shape or is a single element: one flat loop
//     with the single elements held in registers;
//  3. otherwise: dims are merged where every operand is contiguous across them,
//     and the loop runs row by row over the innermost dim, each operand read
//     with stride 1 or held (stride 0, broadcast) for the row.
// Loops of at least twice `grain` elements split over the kernel threads
// (parallel_for), each thread taking a contiguous range of the output.
//
// Inputs whose dtype is not the one the kernel computes in are converted
// first, inside the kernel, so that an op with mixed dtypes stays one node: a
// single element into a local, a larger tensor into a temporary from the pool.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "backend/error.h"
#include "backend/half.h"
#include "backend/ops/elementwise_math.h"
#include "backend/parallel.h"
#include "backend/simd_clones.h"
#include "backend/tensor.h"

namespace nn::backend::ew {

// On the loops below: every call inside is inlined, the functor's maths
// included (gelu's erf form is large enough that GCC would otherwise call
// it), so that the loops vectorise.
#define NN_FLATTEN __attribute__((flatten))

// Grains for parallel_for: cheap ops (add, compare) only pay for threads on
// long loops; costly ones (exp, tanh, pow) on shorter ones.
constexpr int64_t kCheapGrain = kParallelGrain;
constexpr int64_t kCostlyGrain = 4096;

// One element converted between dtypes (ops/elementwise_math.h).
using math::convert_value;

// The one element of a single-element tensor as T (f16 and bf16 through float).
template <class T>
inline T read_as(const Tensor& t) {
  if (is_half_float(t.dtype())) return convert_value<T>(load_half_float(t.dtype(), t.raw_data(), 0));
  return visit_dtype(t.dtype(), [&]<class S>() { return convert_value<T>(*t.data<S>()); });
}

// Writes src's elements into dst (same element count), converting each.
// Defined in ops/cast.cpp.
void convert_into(const Tensor& src, Tensor& dst);
// src as a new tensor of dtype `to`; src itself when it already has it.
Tensor converted(const Tensor& src, DType to);

// Throws for dtypes with no CPU kernels (f16, bf16), naming the op.
inline void check_cpu_dtype(const char* op, DType t) {
  if (is_half_float(t))
    throw Error(std::string(op) + ": " + std::string(dtype_name(t)) +
                " tensors have no CPU kernels (compute on a GPU, or astype to f32 first)");
}

namespace detail {

// An operand of a row loop: contiguous (read p[i]) or broadcast (one value).
template <bool Contiguous, class T>
struct Src;
template <class T>
struct Src<true, T> {
  const T* p;
  T operator()(int64_t i) const { return p[i]; }
};
template <class T>
struct Src<false, T> {
  T v;
  T operator()(int64_t) const { return v; }
};
template <bool C, class T>
inline Src<C, T> make_src(const T* p) {
  if constexpr (C) return {p};
  else return {*p};
}

// The one loop every case below runs: o[i] = f(s(i)...) over a row. Its
// arguments are locals, not a caller's tuple, so the compiler keeps the
// pointers in registers; and f is a local copy, whose attributes (gelu's
// `approximate`) no store to o can change, so that a branch on them leaves
// the loop and the loop vectorises, at the CPU's widest vectors
// (backend/simd_clones.h).
template <class O, class F, class... S>
NN_SIMD_CLONES NN_FLATTEN inline void row(O* o, int64_t len, const F f, const S... s) {
  for (int64_t i = 0; i < len; ++i) o[i] = f(s(i)...);
}

// Calls fn.template operator()<f[0], f[1], ...>(): runtime flags to template
// arguments, so that each combination gets its own vectorised loop.
template <size_t N, bool... B, class Fn>
inline void with_flags(const std::array<bool, N>& f, Fn&& fn) {
  if constexpr (sizeof...(B) == N) {
    fn.template operator()<B...>();
  } else {
    if (f[sizeof...(B)]) with_flags<N, B..., true>(f, fn);
    else with_flags<N, B..., false>(f, fn);
  }
}

// An input ready for the loops: its data as the compute type.
template <class T>
struct Operand {
  const T* p = nullptr;
  T local{};    // a converted single element
  Tensor temp;  // a converted copy of a larger tensor
  void init(const Tensor& t) {
    if (t.dtype() == dtype_of<T>()) {
      p = t.data<T>();
    } else if (t.numel() == 1) {
      local = read_as<T>(t);
      p = &local;
    } else {
      temp = converted(t, dtype_of<T>());
      p = temp.data<T>();
    }
  }
};

// The iteration space after merging dims: nd extents (outermost first) and
// each operand's strides in elements (0 where it broadcasts).
template <size_t N>
struct Layout {
  int nd = 0;
  int64_t size[kMaxDims];
  int64_t stride[N][kMaxDims];
};

template <size_t N>
inline Layout<N> make_layout(const Shape& out, const std::array<const Shape*, N>& in) {
  // Aligned strides per operand, before merging.
  int64_t st[N][kMaxDims];
  const int od = out.ndim();
  for (size_t k = 0; k < N; ++k) {
    const Shape& s = *in[k];
    int64_t acc = 1;
    for (int d = od - 1; d >= 0; --d) {
      int sd = d - (od - s.ndim());
      int64_t e = sd >= 0 ? s[sd] : 1;
      st[k][d] = e == 1 ? 0 : acc;
      acc *= e;
    }
  }
  // Keep dims of extent > 1; merge a dim into the one inside it when every
  // operand steps across the boundary as if they were one dim.
  Layout<N> L;
  for (int d = 0; d < od; ++d) {
    if (out[d] == 1) continue;
    if (L.nd > 0) {
      int in_ = L.nd - 1;
      bool merge = true;
      for (size_t k = 0; k < N && merge; ++k) merge = L.stride[k][in_] == st[k][d] * out[d];
      if (merge) {
        L.size[in_] *= out[d];
        for (size_t k = 0; k < N; ++k) L.stride[k][in_] = st[k][d];
        continue;
      }
    }
    L.size[L.nd] = out[d];
    for (size_t k = 0; k < N; ++k) L.stride[k][L.nd] = st[k][d];
    ++L.nd;
  }
  if (L.nd == 0) {  // a single element
    L.nd = 1;
    L.size[0] = 1;
    for (size_t k = 0; k < N; ++k) L.stride[k][0] = 0;
  }
  return L;
}

template <class O, class... I, class F, size_t... K, class... Ts>
inline void map_impl(Tensor& out, int64_t grain, F f, std::index_sequence<K...>, const Ts&... in) {
  constexpr size_t N = sizeof...(I);
  const int64_t n = out.numel();
  if (n == 0) return;
  std::tuple<Operand<I>...> ops;
  (std::get<K>(ops).init(in), ...);
  const std::tuple<const I*...> ptrs{std::get<K>(ops).p...};
  O* const o = out.data<O>();
  const Shape& os = out.shape();

  // 1. Same shapes: one flat loop.
  if (((in.shape() == os) && ...)) {
    parallel_for(n, grain, [&](int64_t b, int64_t e) {
      row(o + b, e - b, f, Src<true, I>{std::get<K>(ptrs) + b}...);
    });
    return;
  }
  // 2. Same shapes or single elements: a flat loop with held values.
  if (((in.shape() == os || in.numel() == 1) && ...)) {
    std::array<bool, N> contiguous{(in.numel() != 1)...};
    with_flags<N>(contiguous, [&]<bool... C>() {
      parallel_for(n, grain, [&](int64_t b, int64_t e) {
        row(o + b, e - b, f, make_src<C>(std::get<K>(ptrs) + (C ? b : 0))...);
      });
    });
    return;
  }
  // 3. General broadcasting, row by row over the innermost merged dim.
  const Layout<N> L = make_layout<N>(os, {&in.shape()...});
  const int nd = L.nd, inner = nd - 1;
  std::array<bool, N> contiguous{};
  for (size_t k = 0; k < N; ++k) contiguous[k] = L.stride[k][inner] != 0;
  with_flags<N>(contiguous, [&]<bool... C>() {
    parallel_for(n, grain, [&](int64_t b, int64_t e) {
      int64_t idx[kMaxDims];
      int64_t rem = b;
      for (int d = nd - 1; d >= 0; --d) {
        idx[d] = rem % L.size[d];
        rem /= L.size[d];
      }
      int64_t pos = b;
      while (pos < e) {
        int64_t off[N] = {};
        for (int d = 0; d < nd; ++d)
          for (size_t k = 0; k < N; ++k) off[k] += idx[d] * L.stride[k][d];
        const int64_t len = std::min(L.size[inner] - idx[inner], e - pos);
        row(o + pos, len, f, make_src<C>(std::get<K>(ptrs) + off[K])...);
        pos += len;
        idx[inner] += len;
        for (int d = inner; d > 0 && idx[d] == L.size[d]; --d) {
          idx[d] = 0;
          ++idx[d - 1];
        }
      }
    });
  });
}

}  // namespace detail

// out[i] = f(in...[i]) with NumPy broadcasting of every input to out's shape.
// Each input is read as its I (converted first when its dtype differs); f
// takes the I values and returns something convertible to O. f must not
// throw (it may run inside a parallel region): record errors in a flag and
// throw after map returns. out may be one of the inputs (in place) when that
// input has out's shape and dtype.
template <class O, class... I, class F, class... Ts>
inline void map(Tensor& out, int64_t grain, F f, const Ts&... in) {
  static_assert(sizeof...(I) == sizeof...(in), "one compute type per input");
  static_assert((std::is_same_v<Ts, Tensor> && ...), "inputs are tensors");
  detail::map_impl<O, I...>(out, grain, f, std::index_sequence_for<I...>{}, in...);
}

}  // namespace nn::backend::ew
