// The maths of the elementwise ops, one functor each, and the conversion of
// one element between dtypes, written once for the CPU kernels
// (ops/unary.cpp, binary.cpp, nn_norm.cpp), their tile kernels
// (graph fusion) and the CUDA kernels (cuda/elementwise.cu):
// integer wraparound, the NaN rules, Python's %, round half to even. g++
// reads it as plain C++, nvcc as __host__ __device__ code, and NVRTC as
// the prelude of the GPU's fused kernels (cuda/fused_source.cpp), where
// there is no standard library: a few type traits stand in for it, and the
// math functions are built in. The math functions are called unqualified;
// on the host `using std::...` makes that the float overloads
// (std::exp(float)), and under nvcc the same device functions as expf and
// friends.
#pragma once
#if defined(__CUDACC_RTC__)
namespace std {
template <class A, class B> constexpr bool is_same_v = false;
template <class A> constexpr bool is_same_v<A, A> = true;
template <class T> constexpr bool is_floating_point_v = is_same_v<T, float> || is_same_v<T, double>;
template <class T>
constexpr bool is_integral_v = is_same_v<T, bool> || is_same_v<T, int> || is_same_v<T, long> || is_same_v<T, long long>;
template <class T> struct make_unsigned { using type = T; };
template <> struct make_unsigned<int> { using type = unsigned; };
template <> struct make_unsigned<long> { using type = unsigned long; };
template <> struct make_unsigned<long long> { using type = unsigned long long; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;
}  // namespace std
#else
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/ops/float_math.h"
#endif

#if defined(__CUDACC__)
#define NN_HD __host__ __device__
#else
#define NN_HD
#endif

namespace nn::backend::math {

#if !defined(__CUDACC_RTC__)
using std::abs, std::ceil, std::copysign, std::cos, std::erf, std::erfc, std::exp, std::expm1, std::floor,
    std::fmod, std::log, std::log1p, std::nearbyint, std::pow, std::sin, std::sqrt, std::tanh;
#endif

template <class T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
using Unsigned = std::make_unsigned_t<T>;

// Integer negation without signed-overflow UB: -INT_MIN wraps to INT_MIN, as
// in NumPy and PyTorch.
template <class T>
NN_HD T wrap_neg(T x) {
  return T(Unsigned<T>(0) - Unsigned<T>(x));
}

#if !defined(__CUDACC_RTC__)
// One element converted between dtypes. Float to integer truncates toward
// zero and saturates (NaN gives 0), so that it is defined for every input;
// anything to bool is `!= 0` (NaN is true, as in NumPy). (Not under NVRTC:
// a fused kernel converts between float, double and bool alone.)
template <class To, class From>
NN_HD To convert_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    constexpr From lo = From(std::numeric_limits<To>::min());  // -2^31 or -2^63: exact in float and double
    if (!(v == v)) return To(0);
    if (v >= -lo) return std::numeric_limits<To>::max();
    if (v < lo) return std::numeric_limits<To>::min();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}
#endif

// An integer error found inside a kernel (a negative exponent, % by zero)
// raises a flag the caller reads afterwards: an int in host memory written
// atomically by the CPU's threads, or in device memory on the GPU.
NN_HD inline void raise_flag(int* flag) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
  *flag = 1;
#else
  __atomic_store_n(flag, 1, __ATOMIC_RELAXED);
#endif
}

// What a functor is made from: the values of the op's attributes in the
// order of its table line (ops/elementwise_ops.h), and the error flag of
// integer pow and mod. A functor that reads them has a static from(); the
// others are made empty.
struct EwParams {
  double v[2] = {0, 0};
  int* flag = nullptr;
  NN_HD double operator[](int i) const { return v[i]; }
};
template <class F>
NN_HD F make_functor(const EwParams& p) {
  if constexpr (requires { F::from(p); }) return F::from(p);
  else return F{};
}

// ---- arithmetic: computes in its result dtype. Integer +, -, * wrap around
// (two's complement) instead of being undefined on overflow. ----
struct Add {
  template <class T> NN_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;  // logical or (NumPy, PyTorch)
    else if constexpr (kIsInt<T>) return T(Unsigned<T>(a) + Unsigned<T>(b));
    else return a + b;
  }
};
struct Sub {
  template <class T> NN_HD T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) return T(Unsigned<T>(a) - Unsigned<T>(b));
    else return a - b;
  }
};
struct Mul {
  template <class T> NN_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;  // logical and
    else if constexpr (kIsInt<T>) return T(Unsigned<T>(a) * Unsigned<T>(b));
    else return a * b;
  }
};
// Only ever runs on floats: the type rule makes integer division f32.
struct Div {
  template <class T> NN_HD T operator()(T a, T b) const { return a / b; }
};
struct Pow {
  int* negative_exponent;
  NN_HD static Pow from(const EwParams& p) { return {p.flag}; }
  template <class T> NN_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      // x ** 2 is x * x, as in PyTorch: exact to the last bit (libm's pow
      // is within an ulp) and several times faster.
      return b == T(2) ? a * a : pow(a, b);
    } else {
      if (b < 0) {
        raise_flag(negative_exponent);
        return 0;
      }
      // Squaring in unsigned arithmetic: wraps on overflow like the other ops.
      Unsigned<T> r = 1, x = Unsigned<T>(a);
      for (T e = b; e; e >>= 1) {
        if (e & 1) r *= x;
        x *= x;
      }
      return T(r);
    }
  }
};
// Python's %: the result has the sign of the divisor.
struct Mod {
  int* by_zero;
  NN_HD static Mod from(const EwParams& p) { return {p.flag}; }
  template <class T> NN_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      T r = fmod(a, b);  // exact; NaN when b is 0, as NumPy
      if (r != T(0)) {
        if ((r < T(0)) != (b < T(0))) r += b;
      } else {
        r = copysign(T(0), b);
      }
      return r;
    } else {
      if (b == 0) {
        raise_flag(by_zero);
        return 0;
      }
      if (b == -1) return 0;  // INT_MIN % -1 traps on x86
      T r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};
// Python's //: the quotient rounded toward -inf. Floats as CPython and
// PyTorch compute it (from fmod, so that 7.0 // 0.1 is 69, the quotient the
// remainder % gives); a float divisor of 0 gives a / b (inf or NaN), an
// integer one raises the flag.
struct FloorDiv {
  int* by_zero;
  NN_HD static FloorDiv from(const EwParams& p) { return {p.flag}; }
  template <class T> NN_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b == T(0)) return a / b;
      const T m = fmod(a, b);
      T q = (a - m) / b;
      if (m != T(0) && ((b < T(0)) != (m < T(0)))) q -= T(1);
      if (q == T(0)) return copysign(T(0), a / b);
      T f = floor(q);
      if (q - f > T(0.5)) f += T(1);  // (a - m) / b is an integer up to rounding
      return f;
    } else {
      if (b == 0) {
        if (by_zero) raise_flag(by_zero);
        return 0;
      }
      if (b == -1) return T(Unsigned<T>(0) - Unsigned<T>(a));  // INT_MIN / -1 traps on x86; wraps here
      T q = a / b;
      if (q * b != a && ((a < 0) != (b < 0))) --q;
      return q;
    }
  }
};
// NaN in either operand gives NaN, as NumPy's maximum/minimum: `a != a`
// catches a NaN a; a NaN b fails the comparison and is returned.
struct Maximum {
  template <class T> NN_HD T operator()(T a, T b) const { return (a > b || a != a) ? a : b; }
};
struct Minimum {
  template <class T> NN_HD T operator()(T a, T b) const { return (a < b || a != a) ? a : b; }
};

// ---- comparisons and logic: bool results. NaN compares unequal to
// everything, itself included: only `ne` is true. ----
struct Eq { template <class T> NN_HD bool operator()(T a, T b) const { return a == b; } };
struct Ne { template <class T> NN_HD bool operator()(T a, T b) const { return a != b; } };
struct Lt { template <class T> NN_HD bool operator()(T a, T b) const { return a < b; } };
struct Le { template <class T> NN_HD bool operator()(T a, T b) const { return a <= b; } };
struct Gt { template <class T> NN_HD bool operator()(T a, T b) const { return a > b; } };
struct Ge { template <class T> NN_HD bool operator()(T a, T b) const { return a >= b; } };
struct And { template <class T> NN_HD bool operator()(T a, T b) const { return a && b; } };
struct Or { template <class T> NN_HD bool operator()(T a, T b) const { return a || b; } };

// e^x, tanh x and erf x. On the CPU a float goes through the branch-free
// forms of ops/float_math.h, which the compiler vectorises; doubles, and
// the GPU, use the library's.
template <class T>
NN_HD T exp_vec(T x) {
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
  if constexpr (std::is_same_v<T, float>) return float_math::exp(x);
#endif
  return exp(x);
}
template <class T>
NN_HD T tanh_vec(T x) {
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
  if constexpr (std::is_same_v<T, float>) return float_math::tanh(x);
#endif
  return tanh(x);
}
template <class T>
NN_HD T erf_vec(T x) {
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
  if constexpr (std::is_same_v<T, float>) return float_math::erf(x);
#endif
  return erf(x);
}

// ---- float functions: T is float or double ----
struct Exp { template <class T> NN_HD T operator()(T x) const { return exp_vec(x); } };
// e^x - 1, exact where e^x is too close to 1 to hold the difference.
struct Expm1 { template <class T> NN_HD T operator()(T x) const { return expm1(x); } };
struct Log { template <class T> NN_HD T operator()(T x) const { return log(x); } };
// log(1 + x), exact where x is too small for 1 + x to hold it.
struct Log1p { template <class T> NN_HD T operator()(T x) const { return log1p(x); } };
struct Sqrt { template <class T> NN_HD T operator()(T x) const { return sqrt(x); } };
struct Rsqrt { template <class T> NN_HD T operator()(T x) const { return T(1) / sqrt(x); } };
struct Sin { template <class T> NN_HD T operator()(T x) const { return sin(x); } };
struct Cos { template <class T> NN_HD T operator()(T x) const { return cos(x); } };
struct Tanh { template <class T> NN_HD T operator()(T x) const { return tanh_vec(x); } };
// exp of a non-positive number only, so large |x| neither overflows nor
// loses the small side to 1 - 1.
struct Sigmoid {
  template <class T> NN_HD T operator()(T x) const {
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
    if constexpr (std::is_same_v<T, float>) return float_math::sigmoid(x);
#endif
    if (x >= T(0)) return T(1) / (T(1) + exp(-x));
    T e = exp(x);
    return e / (T(1) + e);
  }
};
// x sigmoid(x), with sigmoid's care at the extremes.
struct Silu { template <class T> NN_HD T operator()(T x) const { return x * Sigmoid{}(x); } };
struct LeakyRelu {
  double slope;
  NN_HD static LeakyRelu from(const EwParams& p) { return {p[0]}; }
  template <class T> NN_HD T operator()(T x) const { return x < T(0) ? x * T(slope) : x; }
};
struct Gelu {
  bool approximate;
  NN_HD static Gelu from(const EwParams& p) { return {p[0] != 0}; }
  template <class T> NN_HD T operator()(T x) const {
    if (approximate) {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      const T k = T(0.7978845608028654);
      return T(0.5) * x * (T(1) + tanh_vec(k * (x + T(0.044715) * x * x * x)));
    }
    return T(0.5) * x * (T(1) + erf_vec(x * T(0.7071067811865476)));  // exact: x Phi(x)
  }
};
// g * d gelu(x) / dx: inputs (g, x).
// 0 where relu's output y is at most 0, else g (a NaN y passes g on, as
// PyTorch's threshold_backward does): relu's backward in one pass, without a mask.
struct ReluGrad {
  template <class T> NN_HD T operator()(T g, T y) const { return y <= T(0) ? T(0) : g; }
};
struct GeluGrad {
  bool approximate;
  NN_HD static GeluGrad from(const EwParams& p) { return {p[0] != 0}; }
  template <class T> NN_HD T operator()(T g, T x) const {
    if (approximate) {
      // With u = k (x + c x^3), t = tanh(u): 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2).
      const T k = T(0.7978845608028654), c = T(0.044715);
      const T t = tanh_vec(k * (x + c * x * x * x));
      return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3) * c * x * x));
    }
    // Phi(x) + x phi(x), phi the standard normal density.
    const T cdf = T(0.5) * (T(1) + erf_vec(x * T(0.7071067811865476)));
    const T pdf = T(0.3989422804014327) * exp_vec(T(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
struct Erf { template <class T> NN_HD T operator()(T x) const { return erf_vec(x); } };
// 1 - erf(x), without losing the small tail to 1 - 1.
struct Erfc { template <class T> NN_HD T operator()(T x) const { return erfc(x); } };
// log(1 + e^x) = max(x, 0) + log1p(e^-|x|): never overflows, and keeps
// precision where e^x is tiny.
struct Softplus {
  template <class T> NN_HD T operator()(T x) const { return (x > T(0) ? x : T(0)) + log1p(exp_vec(-abs(x))); }
};

// ---- dtype-keeping ops: T is any of the five CPU dtypes ----
struct Neg {  // bool is rejected by the type rule
  template <class T> NN_HD T operator()(T x) const {
    if constexpr (kIsInt<T>) return wrap_neg(x);
    else if constexpr (std::is_same_v<T, bool>) return x;
    else return -x;
  }
};
struct Copy {
  template <class T> NN_HD T operator()(T x) const { return x; }
};
struct Abs {
  template <class T> NN_HD T operator()(T x) const {
    if constexpr (kIsInt<T>) return x < 0 ? wrap_neg(x) : x;
    else if constexpr (std::is_same_v<T, bool>) return x;
    else return abs(x);
  }
};
// -1, 0 or 1; NaN stays NaN as in NumPy.
struct Sign {
  template <class T> NN_HD T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return x;
    else if constexpr (kIsInt<T>) return T((x > 0) - (x < 0));
    else return x > T(0) ? T(1) : x < T(0) ? T(-1) : x;  // 0, -0 and NaN pass through
  }
};
// `x < 0 ? 0 : x` rather than `x > 0 ? x : 0`, so NaN propagates as in PyTorch.
struct Relu {
  template <class T> NN_HD T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return x;
    else return x < T(0) ? T(0) : x;
  }
};
struct Floor {
  template <class T> NN_HD T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return floor(x);
    else return x;
  }
};
struct Ceil {
  template <class T> NN_HD T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return ceil(x);
    else return x;
  }
};
// nearbyint rounds in the current mode, which is round-half-to-even by
// default: round(0.5) = 0, round(1.5) = 2, round(2.5) = 2, as in NumPy.
struct Round {
  template <class T> NN_HD T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return nearbyint(x);
    else return x;
  }
};

// ---- predicates: any input dtype, bool result ----
struct LogicalNot { template <class T> NN_HD bool operator()(T x) const { return x == T(0); } };
struct IsNan {
  template <class T> NN_HD bool operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return x != x;
    else return false;
  }
};

// Batch norm's per-channel scale gamma / sqrt(var + eps), in double and
// rounded once: batch_norm_train, batch_norm_apply and batch_norm_scale all
// take it from var as stored, so y made again from the saved statistics is
// the forward's bit for bit.
struct BatchNormScale {
  double eps;
  template <class T> NN_HD T operator()(T gamma, T var) const { return T(double(gamma) / sqrt(double(var) + eps)); }
};

// Batch norm's running statistics: running = (1 - m) running + m * scale * stat.
struct RunningUpdate {
  double momentum, scale;
  template <class T> NN_HD T operator()(T r, T s) const {
    return T((1.0 - momentum) * double(r) + momentum * scale * double(s));
  }
};

}  // namespace nn::backend::math
