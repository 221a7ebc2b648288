// Creation ops: full (zeros, ones), arange, linspace, eye, and the random ops
// rand, randn, randint drawing from one global counter-based Philox generator
// (backend/philox.h). These ops take no tensor inputs: their type rules read
// the attributes (shape, dtype) and place the result on the CPU device.
//
// scalar, scalar_int, from_doubles and from_ints wrap host values directly
// (no registry op): they are constants, as a host number or literal is, and
// the hot path of `x * 2.5` should not pay for a dispatch to make its 2.5.
#include <atomic>
#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "backend/ops.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/register.h"
#include "backend/ops/type_rules.h"
#include "backend/philox.h"
#include "backend/run_context.h"

namespace nn::backend {

// ---- the generator ----
// The calling thread's (backend/run_context.h): each interpreter installs its
// own while it runs. A fixed default seed (PyTorch's), so that runs without
// seed() repeat too.
PhiloxDraw philox_reserve(uint64_t n) {
  Generator& g = current_generator();
  return {g.seed.load(std::memory_order_relaxed), g.offset.fetch_add(n, std::memory_order_relaxed)};
}

void manual_seed(uint64_t seed) { set_rng_state({seed, 0}); }

RngState rng_state() {
  Generator& g = current_generator();
  return {g.seed.load(std::memory_order_relaxed), g.offset.load(std::memory_order_relaxed)};
}

void set_rng_state(RngState s) {
  Generator& g = current_generator();
  g.seed.store(s.seed, std::memory_order_relaxed);
  g.offset.store(s.offset, std::memory_order_relaxed);
}

namespace {

void check_shape(const char* op, const Shape& s) {
  for (int64_t d : s)
    if (d < 0) throw Error(std::string(op) + ": negative dimension " + std::to_string(d) + " in shape " + s.str());
}

TensorType creation_type(const Shape& shape, DType dtype) { return {dtype, shape, cpu_device(), false}; }

// Fills out[i] = f(i) over the kernel threads.
template <class T, class F>
void fill_indexed(Tensor& out, int64_t grain, F f) {
  T* o = out.data<T>();
  parallel_for(out.numel(), grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = f(i);
  });
}

// ---- full ----
OutTypes full_rule(std::span<const TensorType>, const Attrs& a) {
  const Shape& s = a.get<Shape>("shape");
  check_shape("full", s);
  return {creation_type(s, a.get<DType>("dtype"))};
}

// The value is an int64 attribute when it came from an integer, so that
// large integers are exact; a double otherwise.
void full_cpu(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  Tensor& t = out[0];
  ew::check_cpu_dtype("full", t.dtype());
  visit_dtype(t.dtype(), [&]<class T>() {
    T v = a.has("int_value") ? ew::convert_value<T>(a.get<int64_t>("int_value"))
                             : ew::convert_value<T>(a.get<double>("value"));
    T* o = t.data<T>();
    parallel_for(t.numel(), ew::kCheapGrain, [&](int64_t b, int64_t e) { std::fill(o + b, o + e, v); });
  });
}

// ---- arange: NumPy's length ceil((stop - start) / step) ----
int64_t arange_length(double start, double stop, double step) {
  if (step == 0) throw Error("arange: step must not be zero");
  double len = std::ceil((stop - start) / step);
  if (!(len < 0x1p62)) {  // also NaN and inf: no tensor that long could be made anyway
    auto text = [](double v) { return fmt::format("{:g}", std::isnan(v) ? std::nan("") : v); };  // never "-nan"
    throw Error("arange: a range from " + text(start) + " to " + text(stop) + " by " + text(step) +
                " has too many values");
  }
  return len > 0 ? int64_t(len) : 0;
}

OutTypes arange_rule(std::span<const TensorType>, const Attrs& a) {
  int64_t n = arange_length(a.get<double>("start"), a.get<double>("stop"), a.get<double>("step"));
  return {creation_type(Shape{n}, a.get<DType>("dtype"))};
}

void arange_cpu(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  const double start = a.get<double>("start"), step = a.get<double>("step");
  ew::check_cpu_dtype("arange", out[0].dtype());
  visit_dtype(out[0].dtype(), [&]<class T>() {
    fill_indexed<T>(out[0], ew::kCheapGrain, [&](int64_t i) { return ew::convert_value<T>(start + double(i) * step); });
  });
}

// ---- linspace: n points from start to stop, both included ----
OutTypes linspace_rule(std::span<const TensorType>, const Attrs& a) {
  int64_t n = a.get<int64_t>("n");
  if (n < 0) throw Error("linspace: the number of points must not be negative, got " + std::to_string(n));
  return {creation_type(Shape{n}, a.get<DType>("dtype"))};
}

void linspace_cpu(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  const double start = a.get<double>("start"), stop = a.get<double>("stop");
  const int64_t n = out[0].numel();
  const double step = n > 1 ? (stop - start) / double(n - 1) : 0.0;
  ew::check_cpu_dtype("linspace", out[0].dtype());
  visit_dtype(out[0].dtype(), [&]<class T>() {
    fill_indexed<T>(out[0], ew::kCheapGrain, [&](int64_t i) {
      double v = i == n - 1 && n > 1 ? stop : start + double(i) * step;  // the end point exactly
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) v = std::floor(v);  // NumPy 2 rounds down
      return ew::convert_value<T>(v);
    });
  });
}

// ---- eye ----
OutTypes eye_rule(std::span<const TensorType>, const Attrs& a) {
  int64_t n = a.get<int64_t>("n");
  if (n < 0) throw Error("eye: the size must not be negative, got " + std::to_string(n));
  return {creation_type(Shape{n, n}, a.get<DType>("dtype"))};
}

void eye_cpu(std::span<const Tensor>, std::span<Tensor> out, const Attrs&) {
  const int64_t n = out[0].shape()[0];
  ew::check_cpu_dtype("eye", out[0].dtype());
  visit_dtype(out[0].dtype(), [&]<class T>() {
    fill_indexed<T>(out[0], ew::kCheapGrain, [&](int64_t i) { return T(i / n == i % n); });
  });
}

// ---- random ----
TensorType random_type(const char* op, bool float_only, const Attrs& a) {
  const Shape& s = a.get<Shape>("shape");
  DType d = a.get<DType>("dtype");
  check_shape(op, s);
  // f16 and bf16 draw on a GPU (the kernels refuse them on the CPU).
  bool ok = float_only ? is_floating(d) : d != DType::boolean;
  if (!ok)
    throw Error(std::string(op) + ": the dtype must be " +
                (float_only ? "a float dtype" : "a float or integer dtype") + ", not " + std::string(dtype_name(d)));
  return creation_type(s, d);
}
OutTypes rand_rule(std::span<const TensorType>, const Attrs& a) { return {random_type("rand", true, a)}; }
OutTypes randn_rule(std::span<const TensorType>, const Attrs& a) { return {random_type("randn", true, a)}; }
OutTypes randint_rule(std::span<const TensorType>, const Attrs& a) {
  int64_t lo = a.get<int64_t>("lo"), hi = a.get<int64_t>("hi");
  if (lo >= hi)
    throw Error("randint: lo must be less than hi, got lo=" + std::to_string(lo) + ", hi=" + std::to_string(hi));
  return {random_type("randint", false, a)};
}

// Value j of a draw comes from the Philox block at counter offset + j alone:
// the thread count cannot change it.
void rand_cpu(std::span<const Tensor>, std::span<Tensor> out, const Attrs&) {
  ew::check_cpu_dtype("rand", out[0].dtype());
  const PhiloxDraw draw = philox_reserve(uint64_t(out[0].numel()));
  if (out[0].dtype() == DType::f64)
    fill_indexed<double>(out[0], ew::kCostlyGrain,
                         [&](int64_t i) { return philox_uniform_f64(Philox4x32::at(draw.seed, draw.offset + i)); });
  else
    fill_indexed<float>(out[0], ew::kCostlyGrain,
                        [&](int64_t i) { return philox_uniform_f32(Philox4x32::at(draw.seed, draw.offset + i)); });
}

// Box–Muller on two 53-bit uniforms of one block, u1 in (0, 1] so log(u1)
// is finite: z = sqrt(-2 ln u1) cos(2 pi u2).
double normal_from(const Philox4x32::Block& b) {
  double u1 = double(((uint64_t(b[0]) << 21) ^ (uint64_t(b[1]) >> 11)) + 1) * 0x1.0p-53;
  double u2 = double((uint64_t(b[2]) << 21) ^ (uint64_t(b[3]) >> 11)) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

void randn_cpu(std::span<const Tensor>, std::span<Tensor> out, const Attrs&) {
  ew::check_cpu_dtype("randn", out[0].dtype());
  const PhiloxDraw draw = philox_reserve(uint64_t(out[0].numel()));
  auto value = [&](int64_t i) { return normal_from(Philox4x32::at(draw.seed, draw.offset + i)); };
  if (out[0].dtype() == DType::f64) fill_indexed<double>(out[0], ew::kCostlyGrain, value);
  else fill_indexed<float>(out[0], ew::kCostlyGrain, [&](int64_t i) { return float(value(i)); });
}

// lo + floor(u * (hi - lo)) with u a 64-bit fraction (Lemire's multiply, no
// rejection: the bias is below (hi - lo) / 2^64).
void randint_cpu(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  ew::check_cpu_dtype("randint", out[0].dtype());
  const int64_t lo = a.get<int64_t>("lo");
  const uint64_t range = uint64_t(a.get<int64_t>("hi")) - uint64_t(lo);
  const PhiloxDraw draw = philox_reserve(uint64_t(out[0].numel()));
  visit_dtype(out[0].dtype(), [&]<class T>() {
    fill_indexed<T>(out[0], ew::kCostlyGrain, [&](int64_t i) {
      Philox4x32::Block b = Philox4x32::at(draw.seed, draw.offset + i);
      uint64_t bits = uint64_t(b[0]) | (uint64_t(b[1]) << 32);
      uint64_t r = uint64_t((unsigned __int128)bits * range >> 64);
      return T(int64_t(uint64_t(lo) + r));
    });
  });
}

Tensor make0(const OpDef& def, const Attrs& attrs) { return call(def, std::span<const Tensor>(), attrs); }

}  // namespace

void register_creation_ops(Registry& r) {
  auto add = [&](OpId id, TypeRule rule, Kernel k, Effect effect = Effect::pure) {
    r.add({.id = id, .num_inputs = 0, .type_rule = rule, .cpu = k, .effect = effect});
  };
  add(OpId::full, full_rule, full_cpu);
  add(OpId::arange, arange_rule, arange_cpu);
  add(OpId::linspace, linspace_rule, linspace_cpu);
  add(OpId::eye, eye_rule, eye_cpu);
  add(OpId::rand, rand_rule, rand_cpu, Effect::random);
  add(OpId::randn, randn_rule, randn_cpu, Effect::random);
  add(OpId::randint, randint_rule, randint_cpu, Effect::random);
}

// ---- host values ----
namespace {
// A host number of any dtype (f16 and bf16 through float).
template <class V>
Tensor host_value(V v, DType dtype, bool weak) {
  Tensor t = Tensor::empty(Shape(), dtype);
  if (is_half_float(dtype)) store_half_exact(dtype, t.raw_data(), 0, ew::convert_value<double>(v));
  else visit_dtype(dtype, [&]<class T>() { *t.data<T>() = ew::convert_value<T>(v); });
  t.set_weak(weak);
  return t;
}
}  // namespace

Tensor scalar(double v, DType dtype, bool weak) { return host_value(v, dtype, weak); }
Tensor scalar_int(int64_t v, DType dtype, bool weak) { return host_value(v, dtype, weak); }

namespace {
template <class V>
Tensor from_values(const std::vector<V>& v, const Shape& shape, DType dtype) {
  check_shape("tensor", shape);
  if (int64_t(v.size()) != shape.numel())
    throw Error("tensor: " + std::to_string(v.size()) + " values do not fill shape " + shape.str());
  if (is_half_float(dtype)) {  // each value rounds once (PyTorch rounds twice, through f32)
    Tensor t = Tensor::empty(shape, dtype);
    for (size_t i = 0; i < v.size(); ++i) store_half_exact(dtype, t.raw_data(), int64_t(i), ew::convert_value<double>(v[i]));
    return t;
  }
  Tensor t = Tensor::empty(shape, dtype);
  visit_dtype(dtype, [&]<class T>() {
    T* o = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) o[i] = ew::convert_value<T>(v[i]);
  });
  return t;
}
}  // namespace

Tensor from_doubles(const std::vector<double>& v, const Shape& shape, DType dtype) {
  return from_values(v, shape, dtype);
}
Tensor from_ints(const std::vector<int64_t>& v, const Shape& shape, DType dtype) {
  return from_values(v, shape, dtype);
}

// ---- registry ops ----
Tensor full(const Shape& shape, double value, DType dtype) {
  static const OpDef& d = op(OpId::full);
  return make0(d, Attrs{{"shape", shape}, {"dtype", dtype}, {"value", value}});
}
Tensor zeros(const Shape& shape, DType dtype) { return full(shape, 0.0, dtype); }
Tensor ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }

Tensor arange(double start, double stop, double step, DType dtype) {
  static const OpDef& d = op(OpId::arange);
  return make0(d, Attrs{{"start", start}, {"stop", stop}, {"step", step}, {"dtype", dtype}});
}

Tensor linspace(double start, double stop, int64_t n, DType dtype) {
  static const OpDef& d = op(OpId::linspace);
  return make0(d, Attrs{{"start", start}, {"stop", stop}, {"n", n}, {"dtype", dtype}});
}

Tensor eye(int64_t n, DType dtype) {
  static const OpDef& d = op(OpId::eye);
  return make0(d, Attrs{{"n", n}, {"dtype", dtype}});
}

Tensor rand(const Shape& shape, DType dtype) {
  static const OpDef& d = op(OpId::rand);
  return make0(d, Attrs{{"shape", shape}, {"dtype", dtype}});
}

Tensor randn(const Shape& shape, DType dtype) {
  static const OpDef& d = op(OpId::randn);
  return make0(d, Attrs{{"shape", shape}, {"dtype", dtype}});
}

Tensor randint(int64_t lo, int64_t hi, const Shape& shape, DType dtype) {
  static const OpDef& d = op(OpId::randint);
  return make0(d, Attrs{{"lo", lo}, {"hi", hi}, {"shape", shape}, {"dtype", dtype}});
}

}  // namespace nn::backend
