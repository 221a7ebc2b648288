// Device-side helpers shared by the .cu files: element conversion with the
// CPU's rules (float to integer truncates and saturates, NaN gives 0; to
// bool is `!= 0`), f16 and bf16 as storage types that compute in float,
// loads of any dtype, the dispatch from a dtype to its device type, launch
// sizes, and block reductions.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "backend/dtype.h"
#include "backend/ops/elementwise_math.h"

namespace nn::backend::cuda {

using math::kIsInt;

// The CPU's conversion of one element, on the device too (ops/elementwise_math.h).
using math::convert_value;

// f16 and bf16 hold values; kernels compute with them in float (math_t),
// widening each load exactly and rounding each store once (to nearest,
// ties to even, as backend/half.h on the host). Other types compute as
// themselves.
template <class T> constexpr bool kIsHalf = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T> using math_t = std::conditional_t<kIsHalf<T>, float, T>;
template <class T> constexpr bool kIsFloat = std::is_floating_point_v<math_t<T>>;

template <class T>
__device__ inline math_t<T> widen(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
  else return v;
}

// v stored as T; a double bound for f16 or bf16 rounds to float first, as
// the CPU's cast does.
template <class T, class V>
__device__ inline T narrow(V v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(float(v));
  else return T(v);
}

// Element `i` of memory of dtype `d`, as T.
template <class T>
__device__ inline T load_any(const void* p, DType d, int64_t i) {
  switch (d) {
    case DType::f32: return convert_value<T>(static_cast<const float*>(p)[i]);
    case DType::f64: return convert_value<T>(static_cast<const double*>(p)[i]);
    case DType::i32: return convert_value<T>(static_cast<const int32_t*>(p)[i]);
    case DType::i64: return convert_value<T>(static_cast<const int64_t*>(p)[i]);
    case DType::boolean: return convert_value<T>(static_cast<const bool*>(p)[i]);
    case DType::f16: return convert_value<T>(__half2float(static_cast<const __half*>(p)[i]));
    case DType::bf16: return convert_value<T>(__bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]));
  }
  return T(0);
}

// Calls fn.template operator()<T>() with T the device type of dtype d:
// false for none. with_float_type: the four float dtypes only.
template <class Fn>
bool with_any_type(DType d, Fn&& fn) {
  switch (d) {
    case DType::f32: fn.template operator()<float>(); return true;
    case DType::f64: fn.template operator()<double>(); return true;
    case DType::i32: fn.template operator()<int32_t>(); return true;
    case DType::i64: fn.template operator()<int64_t>(); return true;
    case DType::boolean: fn.template operator()<bool>(); return true;
    case DType::f16: fn.template operator()<__half>(); return true;
    case DType::bf16: fn.template operator()<__nv_bfloat16>(); return true;
  }
  return false;
}
template <class Fn>
bool with_float_type(DType d, Fn&& fn) {
  return is_floating(d) && with_any_type(d, [&]<class T>() {
           if constexpr (kIsFloat<T>) fn.template operator()<T>();
         });
}

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items.
inline unsigned blocks_for(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  return unsigned(b > 65536 ? 65536 : b);
}

__device__ inline int64_t global_index() { return int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline int64_t grid_stride() { return int64_t(gridDim.x) * blockDim.x; }

// Sum of v over the block (blockDim.x a multiple of 32, at most 1024); every
// thread gets the result. `shared` holds 32 values. The tree is fixed, so
// the result does not depend on timing.
template <class T>
__device__ inline T block_sum(T v, T* shared) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = int(blockDim.x + 31) >> 5;
  T r = T(0);
  if (warp == 0) {
    r = lane < warps ? shared[lane] : T(0);
    for (int o = 16; o > 0; o >>= 1) r += __shfl_down_sync(0xffffffffu, r, o);
    if (lane == 0) shared[0] = r;
  }
  __syncthreads();
  r = shared[0];
  __syncthreads();
  return r;
}

// Max over the block with NaN winning (a NaN anywhere gives NaN).
__device__ inline double nan_max(double a, double b) { return (b > a || b != b || a != a) ? (a != a ? a : b) : a; }

__device__ inline double block_max(double v, double* shared) {
  for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = int(blockDim.x + 31) >> 5;
  if (warp == 0) {
    double r = lane < warps ? shared[lane] : -std::numeric_limits<double>::infinity();
    for (int o = 16; o > 0; o >>= 1) r = nan_max(r, __shfl_down_sync(0xffffffffu, r, o));
    if (lane == 0) shared[0] = r;
  }
  __syncthreads();
  double r = shared[0];
  __syncthreads();
  return r;
}

}  // namespace nn::backend::cuda
