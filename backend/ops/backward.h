// Helpers shared by the backward rules of the op families (the `backward`
// of each OpDef). Rules are written with the ops.h functions only, so that
// they compute now in eager mode and record IR nodes under a tracer; these
// helpers are built the same way.
#pragma once
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "backend/autograd.h"
#include "backend/ops.h"

namespace nn::backend::bw {

// Does input x get a gradient? Floats do. Integer and bool tensors do not,
// and neither do host numbers (weak 0-d tensors): nothing can ask for their
// gradient, so a rule need not spend a reduction on it (the 2.0 of x * 2.0).
inline bool wants(const Tensor& x) { return is_floating(x.dtype()) && !x.weak(); }

// A host number for a rule's arithmetic: weak, so it keeps the other
// operand's dtype (an f64 gradient stays f64, an f32 one f32). Each number
// is made once per thread (the few the rules use: 0, 1, 2, 1/2, an op's
// slope) and never written: a trace then captures one constant for every
// rule that reads it, not one per call (an unrolled LSTM's backward read
// 2,550 ones).
inline Tensor num(double v) {
  constexpr size_t kKept = 16;
  thread_local std::vector<std::pair<uint64_t, Tensor>> made;  // (the number's bits, it), at most kKept
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  for (const auto& [b, t] : made)
    if (b == bits) return t;
  Tensor t = scalar(v, DType::f64, /*weak=*/true);
  if (made.size() < kKept) made.emplace_back(bits, t);
  return t;
}

inline Tensor zeros_like(const Tensor& x) { return to_device(zeros(x.shape(), x.dtype()), x.device()); }

// The gradient of a broadcast (and possibly promoted) result, brought back
// to input x: summed over the broadcast dims and cast to x's dtype; undefined
// when x gets none.
inline Tensor fit(const Tensor& g, const Tensor& x) {
  if (!wants(x)) return Tensor();
  return astype(sum_to(g, x.shape()), x.dtype());
}

// x's shape with the reduced axes (sorted, non-negative) kept as 1: the shape
// a reduction's gradient takes before it is broadcast back to x.
inline std::vector<int64_t> kept_shape(const Shape& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> s = x.vec();
  for (int64_t a : axes) s[size_t(a)] = 1;
  return s;
}

}  // namespace nn::backend::bw
