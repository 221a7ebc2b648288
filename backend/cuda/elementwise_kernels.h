// The launch interface of the elementwise kernels (elementwise.cu): every
// op of the elementwise tables (ops/elementwise_ops.h), where, casts, batch
// norm's two elementwise steps, and the fills of the creation and random ops. Plain data, so that the .cu file
// never sees the rest of nn's headers; the host side builds an EwLaunch from
// tensors (elementwise_launch.h).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/index_divider.h"
#include "backend/dtype.h"
#include "backend/op_id.h"
#include "backend/ops/elementwise_math.h"

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
  // The op's attribute values (slope, approximate, momentum, scale) and the
  // device int that integer pow/mod errors raise.
  math::EwParams params;
};

// Runs `op` computing in `compute`; the output has `out` dtype. Throws
// nothing: a combination the type rules never make is an internal error
// reported by the caller (returns false).
bool ew_launch(OpId op, DType compute, DType out, const EwLaunch& l, cudaStream_t stream);

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
