// The elementwise kernels (elementwise_kernels.h): each op's functor from
// backend/ops/elementwise_math.h, the one the CPU kernels use (integer
// wraparound, NaN rules, Python's %, round half to even), one grid-stride
// kernel per arity, and the creation fills with the CPU's Philox formulas,
// so that a seed draws the same numbers on either device. A kernel computes
// in T and stores R: f16 and bf16 compute in float (math_t) and round on
// store.
#include <cstring>

#include "backend/cuda/device_math.cuh"
#include "backend/cuda/elementwise_kernels.h"
#include "backend/ops/elementwise_math.h"
#include "backend/philox.h"

namespace nn::backend::cuda {
namespace {

// The ops' maths: backend/ops/elementwise_math.h, as the CPU kernels have it.
using namespace math;

struct Identity { template <class T> __device__ T operator()(T x) const { return x; } };

// ---- loads ----
// Element i's offset in a broadcast input.
__device__ inline int64_t offset_of(const EwLaunch& l, const EwInput& in, int64_t i) {
  int64_t off = 0;
  auto add = [&](int d, int64_t idx) { off += idx * in.stride[d]; };
  if (l.index32) split_index32(l.div, l.nd, uint32_t(i), add);
  else split_index(l.size, l.nd, i, add);
  return off;
}

template <class T>
__device__ inline T load(const EwLaunch& l, int k, int64_t i) {
  const EwInput& in = l.in[k];
  if (!in.data) {
    T v;
    memcpy(&v, &in.bits, sizeof(T));
    return v;
  }
  const int64_t off = in.flat ? i : offset_of(l, in, i);
  if (in.dtype == dtype_of<T>()) return static_cast<const T*>(in.data)[off];
  return load_any<T>(in.data, in.dtype, off);
}

// A double as the float from which f16 and bf16 round as from the double
// itself: toward zero, the last bit set when inexact (backend/half.h).
struct RoundedToOddFloat {
  __device__ float operator()(double v) const {
    const float f = __double2float_rz(v);
    return double(f) == v || v != v ? f : __uint_as_float(__float_as_uint(f) | 1u);
  }
};

template <class T, class R, class F>
__global__ void unary_kernel(EwLaunch l, F f) {
  R* out = static_cast<R*>(l.out);
  for (int64_t i = global_index(); i < l.n; i += grid_stride()) out[i] = narrow<R>(f(load<T>(l, 0, i)));
}

template <class T, class R, class F>
__global__ void binary_kernel(EwLaunch l, F f) {
  R* out = static_cast<R*>(l.out);
  for (int64_t i = global_index(); i < l.n; i += grid_stride())
    out[i] = narrow<R>(f(load<T>(l, 0, i), load<T>(l, 1, i)));
}

template <class R>
__global__ void where_kernel(EwLaunch l) {
  using T = math_t<R>;
  R* out = static_cast<R*>(l.out);
  for (int64_t i = global_index(); i < l.n; i += grid_stride())
    out[i] = narrow<R>(load<bool>(l, 0, i) ? load<T>(l, 1, i) : load<T>(l, 2, i));
}

template <class T, class R, class F>
void run1(const EwLaunch& l, cudaStream_t s, F f) {
  unary_kernel<T, R, F><<<blocks_for(l.n), kThreads, 0, s>>>(l, f);
}
template <class T, class R, class F>
void run2(const EwLaunch& l, cudaStream_t s, F f) {
  binary_kernel<T, R, F><<<blocks_for(l.n), kThreads, 0, s>>>(l, f);
}

// BoolOk: the op is defined on bools (add, mul, maximum, minimum);
// FloatOnly: it only ever runs on floats (div: the type rule makes integer
// division f32).
template <bool BoolOk, bool FloatOnly = false, class F>
bool arith(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  bool ran = false;
  with_any_type(t, [&]<class R>() {
    constexpr bool ok = std::is_same_v<R, bool> ? BoolOk && !FloatOnly : kIsFloat<R> ? true : !FloatOnly;
    if constexpr (ok) {
      run2<math_t<R>, R>(l, s, f);
      ran = true;
    }
  });
  return ran;
}

template <class F>
bool compare(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return with_any_type(t, [&]<class R>() { run2<math_t<R>, bool>(l, s, f); });
}

// One launcher per kind of the tables (ops/elementwise_ops.h).
template <class F>
bool unary_floating(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return with_float_type(t, [&]<class R>() { run1<math_t<R>, R>(l, s, f); });
}
template <class F>
bool unary_keeping(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return with_any_type(t, [&]<class R>() { run1<math_t<R>, R>(l, s, f); });
}
template <class F>
bool unary_negation(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return unary_keeping(t, l, s, f);
}
template <class F>
bool unary_predicate(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return with_any_type(t, [&]<class R>() { run1<math_t<R>, bool>(l, s, f); });
}
template <class F>
bool binary_arith(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return arith<true>(t, l, s, f);
}
template <class F>
bool binary_arith_no_bool(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return arith<false>(t, l, s, f);
}
template <class F>
bool binary_true_div(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return arith<false, true>(t, l, s, f);
}
template <class F>
bool binary_compare(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return compare(t, l, s, f);
}
template <class F>
bool binary_logical(DType, const EwLaunch& l, cudaStream_t s, F f) {
  run2<bool, bool>(l, s, f);
  return true;
}
template <class F>
bool binary_floating(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return with_float_type(t, [&]<class R>() { run2<math_t<R>, R>(l, s, f); });
}

}  // namespace

bool ew_launch(OpId op, DType t, DType out, const EwLaunch& l, cudaStream_t s) {
  switch (op) {
#define NN_UNARY_CASE(id, F, kind, ...) \
  case OpId::id: return unary_##kind(t, l, s, make_functor<F>(l.params));
    NN_UNARY_OPS(NN_UNARY_CASE)
#undef NN_UNARY_CASE
#define NN_BINARY_CASE(id, F, kind, ...) \
  case OpId::id: return binary_##kind(t, l, s, make_functor<F>(l.params));
    NN_BINARY_OPS(NN_BINARY_CASE)
#undef NN_BINARY_CASE
    case OpId::where:
      return with_any_type(t, [&]<class R>() { where_kernel<R><<<blocks_for(l.n), kThreads, 0, s>>>(l); });
    case OpId::cast:
      return with_any_type(out, [&]<class R>() {
        // f64 to f16 or bf16 rounds once, as on the CPU (backend/half.h): through
        // the float rounded to odd, not the nearest float.
        if constexpr (!std::is_same_v<math_t<R>, R>)
          if (l.in[0].data && l.in[0].dtype == DType::f64) return run1<double, R>(l, s, RoundedToOddFloat{});
        run1<math_t<R>, R>(l, s, Identity{});
      });
    case OpId::running_stat_update:
      return with_float_type(t, [&]<class R>() { run2<math_t<R>, R>(l, s, RunningUpdate{l.params[0], l.params[1]}); });
    case OpId::batch_norm_scale:
      return with_float_type(t, [&]<class R>() { run2<math_t<R>, R>(l, s, BatchNormScale{l.params[0]}); });
    default: return false;
  }
}

// ---- fills ----
namespace {

// The formulas of ops/creation.cpp (philox_uniform_*, normal_from), on the device.
__device__ inline float uniform_f32(const Philox4x32::Block& b) { return float(b[0] >> 8) * 0x1.0p-24f; }
__device__ inline double uniform_f64(const Philox4x32::Block& b) {
  uint64_t bits = (uint64_t(b[0]) << 21) ^ (uint64_t(b[1]) >> 11);
  return double(bits) * 0x1.0p-53;
}
__device__ inline double normal(const Philox4x32::Block& b) {
  double u1 = double(((uint64_t(b[0]) << 21) ^ (uint64_t(b[1]) >> 11)) + 1) * 0x1.0p-53;
  double u2 = double((uint64_t(b[2]) << 21) ^ (uint64_t(b[3]) >> 11)) * 0x1.0p-53;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

// Each value is made as T (float for f16 and bf16) and stored as R.
template <class R>
__global__ void fill_kernel(FillOp op, FillLaunch l) {
  using T = math_t<R>;
  R* out = static_cast<R*>(l.out);
  for (int64_t i = global_index(); i < l.n; i += grid_stride()) {
    T v{};
    switch (op) {
      case FillOp::full: {
        R bits;
        memcpy(&bits, &l.bits, sizeof(R));
        v = widen(bits);
        break;
      }
      case FillOp::arange: v = convert_value<T>(l.start + double(i) * l.step); break;
      case FillOp::linspace: {
        double x = i == l.n - 1 && l.n > 1 ? l.stop : l.start + double(i) * l.step;
        if constexpr (kIsInt<T>) x = floor(x);
        v = convert_value<T>(x);
        break;
      }
      case FillOp::eye: v = T(i / l.cols == i % l.cols); break;
      case FillOp::rand: {
        const auto b = Philox4x32::at(l.seed, l.offset + uint64_t(i));
        if constexpr (std::is_same_v<T, double>) v = uniform_f64(b);
        else v = T(uniform_f32(b));
        break;
      }
      case FillOp::randn: v = T(normal(Philox4x32::at(l.seed, l.offset + uint64_t(i)))); break;
      case FillOp::randint: {
        const auto b = Philox4x32::at(l.seed, l.offset + uint64_t(i));
        const uint64_t bits = uint64_t(b[0]) | (uint64_t(b[1]) << 32);
        v = T(int64_t(uint64_t(l.lo) + __umul64hi(bits, l.range)));
        break;
      }
    }
    out[i] = narrow<R>(v);
  }
}

}  // namespace

bool fill_launch(FillOp op, const FillLaunch& l, cudaStream_t s) {
  if (l.n == 0) return true;
  return with_any_type(l.dtype, [&]<class R>() { fill_kernel<R><<<blocks_for(l.n), kThreads, 0, s>>>(op, l); });
}

}  // namespace nn::backend::cuda
