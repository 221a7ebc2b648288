// The reduction table: one line an op reduced over a set of axes. Its OpId
// (backend/op_id.h), registry entry and CPU kernel (ops/reduction.cpp), C++
// function (backend/ops.h: `sum(x, axes = all, keepdims = false)`), built-in
// (frontend/builtins/math.cpp: `sum(x, axis=none, keepdims=false)`) and CUDA
// kernel (cuda/reduction.cu, cuda/reduction.cpp) are made from it. Plain
// macros, so that nvcc reads the same list.
#pragma once

// X(id, Rule, empty_ok, widens_ints, backward)
//   Rule:        the accumulation rule of ops/reduce_rules.h (CPU and CUDA)
//   empty_ok:    false where a reduction of no elements has no answer (max)
//   widens_ints: integer and bool inputs give i64 (sum, prod), else keep
//   backward:    the rule of ops/reduction_backward.cpp
#define NN_REDUCTION_OPS(X)                                \
  X(sum, SumRule, true, true, detail::sum_backward)         \
  X(prod, ProdRule, true, true, detail::prod_backward)      \
  X(max, MaxRule, false, false, detail::max_backward)       \
  X(min, MinRule, false, false, detail::min_backward)
