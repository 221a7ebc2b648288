// Tile kernels (OpDef::tile): an elementwise op over n contiguous elements
// already in the compute type T, one step of a fused kernel. Each op family
// builds its own from the functor its CPU kernel uses, so a fused step
// computes exactly what the op computes alone: out[i] = f(in0[i], ...)
// converted to T, so that a functor giving bool yields 0 or 1.
#pragma once
#include <cstddef>
#include <cstdint>

#include "backend/op_registry.h"
#include "backend/simd_clones.h"

namespace nn::backend::tile {

// f by value: a local, which no store to out can change, so that a branch
// on its attributes leaves the loop; flatten inlines the functor's maths, so
// that the loop vectorises (ops/elementwise.h does the same), at the CPU's
// widest vectors (backend/simd_clones.h).
template <size_t N, class F, class T>
NN_SIMD_CLONES __attribute__((flatten)) inline void map(const F f, const T* const* in, T* out, int64_t n) {
  static_assert(N >= 1 && N <= 3, "tile kernels take one to three operands");
  const T* a = in[0];
  if constexpr (N == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = T(f(a[i]));
  } else if constexpr (N == 2) {
    const T* b = in[1];
    for (int64_t i = 0; i < n; ++i) out[i] = T(f(a[i], b[i]));
  } else {
    const T *b = in[1], *c = in[2];
    for (int64_t i = 0; i < n; ++i) out[i] = T(f(a[i], b[i], c[i]));
  }
}

// The tile kernels of a functor F taking N operands, built from the op's
// attributes by Make (for functors such as leaky_relu's that read them).
template <class F, size_t N, F (*Make)(const Attrs&)>
TileKernels kernels() {
  return {[](const float* const* in, float* out, int64_t n, const Attrs& a) { map<N>(Make(a), in, out, n); },
          [](const double* const* in, double* out, int64_t n, const Attrs& a) { map<N>(Make(a), in, out, n); }};
}

template <class F>
F plain(const Attrs&) {
  return F{};
}

// For functors that need nothing from the attributes.
template <class F, size_t N>
TileKernels kernels() {
  return kernels<F, N, plain<F>>();
}

}  // namespace nn::backend::tile
