// The accumulation rules of the reductions, written once for the CPU
// kernels (ops/reduction.cpp) and the CUDA kernels (cuda/reduction.cu):
// how to start, fold in one element and merge two partial results, and the
// result's type. Floats accumulate in double (f32 sums keep their
// accuracy); integers and bools accumulate in i64 with wrapping arithmetic
// (signed overflow would be undefined behaviour); max and min propagate NaN,
// as NumPy: once the accumulator is NaN it stays. `better` is argmax's and
// argmin's comparison.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backend/ops/elementwise_math.h"  // NN_HD

namespace nn::backend::reduce {

template <class T>
using WideAcc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <class T>
NN_HD bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <class T>
struct SumRule {
  using Acc = WideAcc<T>;
  using Out = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  NN_HD static Acc init() { return 0; }
  NN_HD static Acc merge(Acc a, Acc b) {
    if constexpr (std::is_floating_point_v<T>) return a + b;
    else return Acc(uint64_t(a) + uint64_t(b));
  }
  NN_HD static Acc step(Acc a, T v) { return merge(a, Acc(v)); }
};

template <class T>
struct ProdRule {
  using Acc = WideAcc<T>;
  using Out = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  NN_HD static Acc init() { return 1; }
  NN_HD static Acc merge(Acc a, Acc b) {
    if constexpr (std::is_floating_point_v<T>) return a * b;
    else return Acc(uint64_t(a) * uint64_t(b));
  }
  NN_HD static Acc step(Acc a, T v) { return merge(a, Acc(v)); }
};

template <class T>
struct MaxRule {
  using Acc = T;
  using Out = T;
  NN_HD static Acc init() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  NN_HD static Acc step(Acc a, T v) { return (v > a || is_nan(v)) ? v : a; }
  NN_HD static Acc merge(Acc a, Acc b) { return step(a, b); }
};

template <class T>
struct MinRule {
  using Acc = T;
  using Out = T;
  NN_HD static Acc init() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  NN_HD static Acc step(Acc a, T v) { return (v < a || is_nan(v)) ? v : a; }
  NN_HD static Acc merge(Acc a, Acc b) { return step(a, b); }
};

// Is v a better candidate than best? NaN beats everything and the first NaN
// stays (NumPy); ties keep the earlier index.
template <bool kMax, class T>
NN_HD bool better(T v, T best) {
  if (is_nan(best)) return false;
  if (is_nan(v)) return true;
  if constexpr (kMax) return v > best;
  else return v < best;
}

}  // namespace nn::backend::reduce
