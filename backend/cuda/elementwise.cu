// The elementwise kernels (elementwise_kernels.h): each op's functor, with
// the semantics of the CPU kernels of backend/ops/unary.cpp, binary.cpp,
// compare.cpp and cast.cpp (integer wraparound, NaN rules, Python's %,
// round half to even), one grid-stride kernel per arity, and the creation
// fills with the CPU's Philox formulas, so that a seed draws the same
// numbers on either device.
#include <cstring>

#include "backend/cuda/device_math.cuh"
#include "backend/cuda/elementwise_kernels.h"
#include "backend/philox.h"

namespace nn::backend::cuda {
namespace {

template <class T>
__device__ inline T wrap_neg(T x) {
  using U = std::make_unsigned_t<T>;
  return T(U(0) - U(x));
}

// ---- binary arithmetic ----
struct Add {
  template <class T> __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (kIsInt<T>) return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
    else return a + b;
  }
};
struct Sub {
  template <class T> __device__ T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) return T(std::make_unsigned_t<T>(a) - std::make_unsigned_t<T>(b));
    else return a - b;
  }
};
struct Mul {
  template <class T> __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (kIsInt<T>) return T(std::make_unsigned_t<T>(a) * std::make_unsigned_t<T>(b));
    else return a * b;
  }
};
struct Div {
  template <class T> __device__ T operator()(T a, T b) const { return a / b; }
};
struct Pow {
  int* flag;
  template <class T> __device__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return pow(a, b);
    } else {
      if (b < 0) {
        *flag = 1;
        return 0;
      }
      std::make_unsigned_t<T> r = 1, x = std::make_unsigned_t<T>(a);
      for (T e = b; e; e >>= 1) {
        if (e & 1) r *= x;
        x *= x;
      }
      return T(r);
    }
  }
};
struct Mod {
  int* flag;
  template <class T> __device__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      T r = fmod(a, b);
      if (r != T(0)) {
        if ((r < T(0)) != (b < T(0))) r += b;
      } else {
        r = copysign(T(0), b);
      }
      return r;
    } else {
      if (b == 0) {
        *flag = 1;
        return 0;
      }
      if (b == -1) return 0;
      T r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};
struct Maximum {
  template <class T> __device__ T operator()(T a, T b) const { return (a > b || a != a) ? a : b; }
};
struct Minimum {
  template <class T> __device__ T operator()(T a, T b) const { return (a < b || a != a) ? a : b; }
};

// ---- comparisons and logic (bool results) ----
struct Eq { template <class T> __device__ bool operator()(T a, T b) const { return a == b; } };
struct Ne { template <class T> __device__ bool operator()(T a, T b) const { return a != b; } };
struct Lt { template <class T> __device__ bool operator()(T a, T b) const { return a < b; } };
struct Le { template <class T> __device__ bool operator()(T a, T b) const { return a <= b; } };
struct Gt { template <class T> __device__ bool operator()(T a, T b) const { return a > b; } };
struct Ge { template <class T> __device__ bool operator()(T a, T b) const { return a >= b; } };
struct And { template <class T> __device__ bool operator()(T a, T b) const { return a && b; } };
struct Or { template <class T> __device__ bool operator()(T a, T b) const { return a || b; } };

// ---- float functions ----
struct Exp { template <class T> __device__ T operator()(T x) const { return exp(x); } };
struct Log { template <class T> __device__ T operator()(T x) const { return log(x); } };
struct Sqrt { template <class T> __device__ T operator()(T x) const { return sqrt(x); } };
struct Rsqrt { template <class T> __device__ T operator()(T x) const { return T(1) / sqrt(x); } };
struct Sin { template <class T> __device__ T operator()(T x) const { return sin(x); } };
struct Cos { template <class T> __device__ T operator()(T x) const { return cos(x); } };
struct Tanh { template <class T> __device__ T operator()(T x) const { return tanh(x); } };
struct Sigmoid {
  template <class T> __device__ T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + exp(-x));
    T e = exp(x);
    return e / (T(1) + e);
  }
};
struct LeakyRelu {
  double slope;
  template <class T> __device__ T operator()(T x) const { return x < T(0) ? x * T(slope) : x; }
};
struct Gelu {
  bool approximate;
  template <class T> __device__ T operator()(T x) const {
    if (approximate) {
      const T k = T(0.7978845608028654);
      return T(0.5) * x * (T(1) + tanh(k * (x + T(0.044715) * x * x * x)));
    }
    return T(0.5) * x * (T(1) + erf(x * T(0.7071067811865476)));
  }
};
struct GeluGrad {
  bool approximate;
  template <class T> __device__ T operator()(T g, T x) const {
    if (approximate) {
      const T k = T(0.7978845608028654), c = T(0.044715);
      const T t = tanh(k * (x + c * x * x * x));
      return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3) * c * x * x));
    }
    const T cdf = T(0.5) * (T(1) + erf(x * T(0.7071067811865476)));
    const T pdf = T(0.3989422804014327) * exp(T(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
struct Softplus {
  template <class T> __device__ T operator()(T x) const { return (x > T(0) ? x : T(0)) + log1p(exp(-fabs(x))); }
};

// ---- dtype-keeping ----
struct Neg {
  template <class T> __device__ T operator()(T x) const {
    if constexpr (kIsInt<T>) return wrap_neg(x);
    else if constexpr (std::is_same_v<T, bool>) return x;
    else return -x;
  }
};
struct Abs {
  template <class T> __device__ T operator()(T x) const {
    if constexpr (kIsInt<T>) return x < 0 ? wrap_neg(x) : x;
    else if constexpr (std::is_same_v<T, bool>) return x;
    else return fabs(x);
  }
};
struct Sign {
  template <class T> __device__ T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return x;
    else if constexpr (kIsInt<T>) return T((x > 0) - (x < 0));
    else return x > T(0) ? T(1) : x < T(0) ? T(-1) : x;
  }
};
struct Relu {
  template <class T> __device__ T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return x;
    else return x < T(0) ? T(0) : x;
  }
};
struct Floor {
  template <class T> __device__ T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return floor(x);
    else return x;
  }
};
struct Ceil {
  template <class T> __device__ T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return ceil(x);
    else return x;
  }
};
struct Round {  // half to even, as the CPU's nearbyint
  template <class T> __device__ T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return nearbyint(x);
    else return x;
  }
};

// ---- predicates ----
struct LogicalNot { template <class T> __device__ bool operator()(T x) const { return x == T(0); } };
struct IsNan {
  template <class T> __device__ bool operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return x != x;
    else return false;
  }
};

struct Identity { template <class T> __device__ T operator()(T x) const { return x; } };

struct RunningUpdate {
  double momentum, scale;
  template <class T> __device__ T operator()(T r, T s) const {
    return T((1.0 - momentum) * double(r) + momentum * scale * double(s));
  }
};

// ---- loads ----
__device__ inline int64_t offset_of(const EwLaunch& l, const EwInput& in, int64_t i) {
  int64_t off = 0;
  for (int d = l.nd - 1; d >= 0; --d) {
    const int64_t q = i / l.size[d];
    off += (i - q * l.size[d]) * in.stride[d];
    i = q;
  }
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

template <class T, class R, class F>
__global__ void unary_kernel(EwLaunch l, F f) {
  R* out = static_cast<R*>(l.out);
  for (int64_t i = global_index(); i < l.n; i += grid_stride()) out[i] = R(f(load<T>(l, 0, i)));
}

template <class T, class R, class F>
__global__ void binary_kernel(EwLaunch l, F f) {
  R* out = static_cast<R*>(l.out);
  for (int64_t i = global_index(); i < l.n; i += grid_stride()) out[i] = R(f(load<T>(l, 0, i), load<T>(l, 1, i)));
}

template <class T>
__global__ void where_kernel(EwLaunch l) {
  T* out = static_cast<T*>(l.out);
  for (int64_t i = global_index(); i < l.n; i += grid_stride())
    out[i] = load<bool>(l, 0, i) ? load<T>(l, 1, i) : load<T>(l, 2, i);
}

template <class T, class R, class F>
void run1(const EwLaunch& l, cudaStream_t s, F f) {
  unary_kernel<T, R, F><<<blocks_for(l.n), kThreads, 0, s>>>(l, f);
}
template <class T, class R, class F>
void run2(const EwLaunch& l, cudaStream_t s, F f) {
  binary_kernel<T, R, F><<<blocks_for(l.n), kThreads, 0, s>>>(l, f);
}

// Calls fn.template operator()<T>() for the C++ type of dtype d among the
// five CPU dtypes (f16/bf16 have no CUDA kernels yet): false for others.
template <class Fn>
bool with_type(DType d, Fn&& fn) {
  switch (d) {
    case DType::f32: fn.template operator()<float>(); return true;
    case DType::f64: fn.template operator()<double>(); return true;
    case DType::i32: fn.template operator()<int32_t>(); return true;
    case DType::i64: fn.template operator()<int64_t>(); return true;
    case DType::boolean: fn.template operator()<bool>(); return true;
    default: return false;
  }
}
template <class Fn>
bool with_float(DType d, Fn&& fn) {
  if (d == DType::f32) fn.template operator()<float>();
  else if (d == DType::f64) fn.template operator()<double>();
  else return false;
  return true;
}

// BoolOk: the op is defined on bools (add, mul, maximum, minimum);
// FloatOnly: it only ever runs on floats (div: the type rule makes integer
// division f32).
template <bool BoolOk, bool FloatOnly = false, class F>
bool arith(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  bool ran = false;
  with_type(t, [&]<class T>() {
    constexpr bool ok = std::is_same_v<T, bool> ? BoolOk && !FloatOnly
                        : std::is_floating_point_v<T> ? true
                                                      : !FloatOnly;
    if constexpr (ok) {
      run2<T, T>(l, s, f);
      ran = true;
    }
  });
  return ran;
}

template <class F>
bool compare(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return with_type(t, [&]<class T>() { run2<T, bool>(l, s, f); });
}

template <class F>
bool float_fn(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return with_float(t, [&]<class T>() { run1<T, T>(l, s, f); });
}

template <class F>
bool keep_fn(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return with_type(t, [&]<class T>() { run1<T, T>(l, s, f); });
}

template <class F>
bool predicate(DType t, const EwLaunch& l, cudaStream_t s, F f) {
  return with_type(t, [&]<class T>() { run1<T, bool>(l, s, f); });
}

}  // namespace

bool ew_launch(EwOp op, DType t, DType out, const EwLaunch& l, cudaStream_t s) {
  if (l.n == 0) return true;
  switch (op) {
    case EwOp::add: return arith<true>(t, l, s, Add{});
    case EwOp::sub: return arith<false>(t, l, s, Sub{});
    case EwOp::mul: return arith<true>(t, l, s, Mul{});
    case EwOp::div: return arith<false, true>(t, l, s, Div{});
    case EwOp::pow: return arith<false>(t, l, s, Pow{l.flag});
    case EwOp::mod: return arith<false>(t, l, s, Mod{l.flag});
    case EwOp::maximum: return arith<true>(t, l, s, Maximum{});
    case EwOp::minimum: return arith<true>(t, l, s, Minimum{});
    case EwOp::eq: return compare(t, l, s, Eq{});
    case EwOp::ne: return compare(t, l, s, Ne{});
    case EwOp::lt: return compare(t, l, s, Lt{});
    case EwOp::le: return compare(t, l, s, Le{});
    case EwOp::gt: return compare(t, l, s, Gt{});
    case EwOp::ge: return compare(t, l, s, Ge{});
    case EwOp::logical_and: run2<bool, bool>(l, s, And{}); return true;
    case EwOp::logical_or: run2<bool, bool>(l, s, Or{}); return true;
    case EwOp::where:
      return with_type(t, [&]<class T>() { where_kernel<T><<<blocks_for(l.n), kThreads, 0, s>>>(l); });
    case EwOp::exp: return float_fn(t, l, s, Exp{});
    case EwOp::log: return float_fn(t, l, s, Log{});
    case EwOp::sqrt: return float_fn(t, l, s, Sqrt{});
    case EwOp::rsqrt: return float_fn(t, l, s, Rsqrt{});
    case EwOp::sin: return float_fn(t, l, s, Sin{});
    case EwOp::cos: return float_fn(t, l, s, Cos{});
    case EwOp::tanh: return float_fn(t, l, s, Tanh{});
    case EwOp::sigmoid: return float_fn(t, l, s, Sigmoid{});
    case EwOp::leaky_relu: return float_fn(t, l, s, LeakyRelu{l.p0});
    case EwOp::gelu: return float_fn(t, l, s, Gelu{l.p0 != 0});
    case EwOp::softplus: return float_fn(t, l, s, Softplus{});
    case EwOp::gelu_backward:
      return with_float(t, [&]<class T>() { run2<T, T>(l, s, GeluGrad{l.p0 != 0}); });
    case EwOp::neg: return keep_fn(t, l, s, Neg{});
    case EwOp::abs: return keep_fn(t, l, s, Abs{});
    case EwOp::sign: return keep_fn(t, l, s, Sign{});
    case EwOp::relu: return keep_fn(t, l, s, Relu{});
    case EwOp::floor: return keep_fn(t, l, s, Floor{});
    case EwOp::ceil: return keep_fn(t, l, s, Ceil{});
    case EwOp::round: return keep_fn(t, l, s, Round{});
    case EwOp::logical_not: return predicate(t, l, s, LogicalNot{});
    case EwOp::isnan: return predicate(t, l, s, IsNan{});
    case EwOp::cast: return with_type(out, [&]<class T>() { run1<T, T>(l, s, Identity{}); });
    case EwOp::running_stat_update:
      return with_float(t, [&]<class T>() { run2<T, T>(l, s, RunningUpdate{l.p0, l.p1}); });
  }
  return false;
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

template <class T>
__global__ void fill_kernel(FillOp op, FillLaunch l) {
  T* out = static_cast<T*>(l.out);
  for (int64_t i = global_index(); i < l.n; i += grid_stride()) {
    T v{};
    switch (op) {
      case FillOp::full: memcpy(&v, &l.bits, sizeof(T)); break;
      case FillOp::arange: v = cvt<T>(l.start + double(i) * l.step); break;
      case FillOp::linspace: {
        double x = i == l.n - 1 && l.n > 1 ? l.stop : l.start + double(i) * l.step;
        if constexpr (kIsInt<T>) x = floor(x);
        v = cvt<T>(x);
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
    out[i] = v;
  }
}

}  // namespace

bool fill_launch(FillOp op, const FillLaunch& l, cudaStream_t s) {
  if (l.n == 0) return true;
  return with_type(l.dtype, [&]<class T>() { fill_kernel<T><<<blocks_for(l.n), kThreads, 0, s>>>(op, l); });
}

}  // namespace nn::backend::cuda
