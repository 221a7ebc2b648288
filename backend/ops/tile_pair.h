// Two arithmetic steps of a fused program in one pass over a tile: a step
// add, sub, mul or div whose result only the next step reads, that next step
// being one of the four too. An optimizer's update is a chain of such pairs
// (SGD's `g + wd * p`, `m * momentum + g`, `p - lr * v`), and a fused
// program's speed is bounded by the tile each step stores: a pair stores
// one where the two steps alone store two. Each operation still rounds to
// T on its own (the build keeps FMA contraction off), so a pair computes
// exactly what its two steps compute.
#pragma once
#include <cstdint>
#include <optional>

#include "backend/op_registry.h"
#include "backend/ops/elementwise_math.h"
#include "backend/simd_clones.h"

namespace nn::backend::tile {

// out = second(first(a, b), c), or second(c, first(a, b)) when the first's
// result is the second's right operand. out may be any of a, b, c.
template <class T>
using PairKernel = void (*)(const T* a, const T* b, const T* c, T* out, int64_t n);

template <class First, class Second, bool Left, class T>
NN_SIMD_CLONES __attribute__((flatten)) void pair_map(const T* a, const T* b, const T* c, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T r = T(First{}(a[i], b[i]));
    out[i] = Left ? T(Second{}(r, c[i])) : T(Second{}(c[i], r));
  }
}

namespace detail {

// Calls f with the functor of an arithmetic op (as a value), or returns false.
template <class F>
bool with_functor(OpId id, F&& f) {
  switch (id) {
    case OpId::add: f(math::Add{}); return true;
    case OpId::sub: f(math::Sub{}); return true;
    case OpId::mul: f(math::Mul{}); return true;
    case OpId::div: f(math::Div{}); return true;
    default: return false;
  }
}

}  // namespace detail

// The kernel of the pair (first, second), empty where either is not one of
// the four ops.
template <class T>
std::optional<PairKernel<T>> pair_kernel(OpId first, OpId second, bool left) {
  std::optional<PairKernel<T>> k;
  detail::with_functor(first, [&](auto f1) {
    detail::with_functor(second, [&](auto f2) {
      using F1 = decltype(f1);
      using F2 = decltype(f2);
      k = left ? &pair_map<F1, F2, true, T> : &pair_map<F1, F2, false, T>;
    });
  });
  return k;
}

}  // namespace nn::backend::tile
