// The launch interface of the elementwise kernels (elementwise.cu): every
// unary, binary and ternary op of the registry, casts, and the fills of the
// creation and random ops. Plain data, so that the .cu file
// never sees the rest of nn's headers; the host side builds an EwLaunch from
// tensors (elementwise_launch.h).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/index_divider.h"
#include "backend/dtype.h"

namespace nn::backend::cuda {

constexpr int kDims = 8;  // kMaxDims of backend/shape.h

// One input of an elementwise kernel.
struct EwInput {
  const void* data = nullptr;  // device memory; null: a host number, in `bits`
  DType dtype = DType::f32;
  bool flat = false;           // it has the output's shape: element i is at i
  uint64_t bits = 0;           // a host number, already converted to the type the kernel reads it as
  int64_t stride[kDims] = {};  // otherwise: per dim of the launch, in elements (0: broadcast)
};

struct EwLaunch {
  void* out = nullptr;  // of the output dtype
  int64_t n = 0;        // output elements
  int nd = 0;           // dims of the launch (the output's, merged where possible)
  int64_t size[kDims] = {};
  bool index32 = false;        // n < 2^31: broadcast offsets divide by `div`
  IndexDivider div[kDims] = {};
  int count = 0;        // inputs
  EwInput in[3];
  double p0 = 0, p1 = 0;  // op parameters: slope, approximate, momentum, scale
  int* flag = nullptr;    // device int raised by integer pow/mod errors
};

enum class EwOp : uint8_t {
  // binary arithmetic: computes in the output dtype
  add, sub, mul, div, pow, mod, maximum, minimum,
  // comparisons: compute in the given dtype, bool results
  eq, ne, lt, le, gt, ge,
  // bool inputs, bool result
  logical_and, logical_or,
  // where(cond, a, b): cond read as bool, a and b in the output dtype
  where,
  // float functions (f32, f64)
  exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid, leaky_relu, gelu, softplus, gelu_backward,
  // dtype-keeping
  neg, abs, sign, relu, floor, ceil, round,
  // predicates: compute in the input's dtype, bool results
  logical_not, isnan,
  // conversion to the output dtype
  cast,
  // running = (1 - p0) running + p0 * p1 * stat (batch norm's running statistics)
  running_stat_update,
  // gamma / sqrt(var + p0) (batch norm's per-channel scale)
  batch_norm_scale,
};

// Runs `op` computing in `compute`; the output has `out` dtype. Throws
// nothing: a combination the type rules never make is an internal error
// reported by the caller (returns false).
bool ew_launch(EwOp op, DType compute, DType out, const EwLaunch& l, cudaStream_t stream);

// The fills of the creation ops. Values are computed per element from the
// index alone, so the thread count never changes them.
enum class FillOp : uint8_t { full, arange, linspace, eye, rand, randn, randint };
struct FillLaunch {
  void* out = nullptr;
  DType dtype = DType::f32;
  int64_t n = 0;
  uint64_t bits = 0;         // full: the value, converted to dtype
  double start = 0, step = 0, stop = 0;  // arange, linspace
  int64_t cols = 0;          // eye
  int64_t lo = 0;            // randint: [lo, lo + range)
  uint64_t range = 0;
  uint64_t seed = 0, offset = 0;  // the random ops' Philox draw
};
bool fill_launch(FillOp op, const FillLaunch& l, cudaStream_t stream);

}  // namespace nn::backend::cuda
