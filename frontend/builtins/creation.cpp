// Built-ins that make tensors: tensor, zeros, ones, full, *_like, arange,
// linspace, eye, the random ones and seed.
#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/format.h"
#include "frontend/host_data.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {
using backend::DType;

// A full copy of x with its own memory.
backend::Tensor copy_of(const backend::Tensor& x) { return backend::index(x, {}); }

DType dtype_or(Args& a, size_t i, DType fallback) { return a[i].is_none() ? fallback : a.dtype(i); }

// The dtype a host value gets as a tensor: float f32, int i64, bool bool.
DType natural_dtype(const Value& v) {
  if (v.is_float()) return DType::f32;
  if (v.is_bool()) return DType::boolean;
  if (v.is_int()) return DType::i64;
  if (v.is_tensor()) {
    const backend::Tensor& t = v.as_tensor();
    return t.weak() && backend::is_floating(t.dtype()) ? DType::f32 : t.dtype();  // a weak float is a number's
  }
  return DType::f32;
}

// The dtype of zeros/ones/rand/randn(shape, dtype): `randn(64, 8)`, the
// PyTorch habit, gives the shape as separate ints.
DType dtype_after_shape(Args& a, const char* fn) {
  if (a[0].is_int() && a[1].is_int())
    a.fail(1, std::string(fn) + " takes the shape as one list: " + fn + "([" + to_str(a[0]) + ", " + to_str(a[1]) + "])");
  return a.dtype(1);
}

// rand_like/randn_like(x, dtype=none): x's shape, dtype and device.
template <backend::Tensor (*Draw)(const backend::Shape&, DType)>
Value draw_like(Args& a) {
  backend::Tensor x = a.tensor(0);
  backend::DeviceScope on(x.device());
  const DType d = dtype_or(a, 1, x.dtype());
  if (!backend::is_floating(d)) a.fail(0, "random values like " + x.type().str() + " need a float dtype; pass dtype=f32");
  return Value(Draw(x.shape(), d));
}
}  // namespace

// Host numbers made into an integer tensor must fit its dtype, as
// torch.tensor and torch.full insist ("value cannot be converted to type
// int32 without overflow"): the cast would wrap an int (3000000000 as i32
// is -1294967296) or saturate a float without a word. Floats truncate
// toward zero first (3.7 is 3); NaN and inf fit no integer.
void check_fits(Args& a, size_t i, const backend::Tensor& values, DType d) {
  if (!backend::is_integral(d) || values.dtype() == DType::boolean) return;
  const std::string name(backend::dtype_name(d));
  auto fail = [&](const std::string& v) {
    a.fail(i, "value " + v + " cannot be converted to " + name + " without overflow (" + name + " holds " +
                  std::to_string(int_min_of(d)) + " to " + std::to_string(int_max_of(d)) + ")");
  };
  const backend::Tensor t = backend::to_device(values, backend::cpu_device());
  if (backend::is_integral(t.dtype())) {
    const backend::Tensor w = backend::astype(t, DType::i64);
    for (int64_t k = 0; k < w.numel(); ++k)
      if (!fits_integer(w.data<int64_t>()[k], d)) fail(std::to_string(w.data<int64_t>()[k]));
    return;
  }
  const backend::Tensor w = backend::astype(t, DType::f64);
  for (int64_t k = 0; k < w.numel(); ++k)
    if (!fits_integer(w.data<double>()[k], d)) fail(format_float(w.data<double>()[k]));
}

// A host number filling a tensor of dtype d (full, pad) fits it: an
// integer as check_fits says, and a finite float that d would make inf
// (1e40 as f32, 70000 as f16) is refused as torch.full refuses it;
// tensor() and astype round to inf as PyTorch's do.
void check_fill_fits(Args& a, size_t i, DType d) {
  check_fits(a, i, a.tensor(i), d);
  const double v = a.number(i);
  if (!backend::is_floating(d) || !std::isfinite(v)) return;
  const double max = d == DType::f16    ? 65504.0
                     : d == DType::bf16 ? 3.3895313892515355e38
                     : d == DType::f32  ? double(std::numeric_limits<float>::max())
                                        : std::numeric_limits<double>::max();
  if (std::fabs(v) > max)
    a.fail(i, "value " + format_float(v) + " cannot be converted to " + std::string(backend::dtype_name(d)) +
                  " without overflow (its largest finite value is " + format_float(max) + ")");
}

void install_creation(Interpreter& vm) {
  // A bracket literal comes exact (weak f64, Builtin::exact_literal) and is
  // rounded once, to the dtype asked for or else f32, as torch.tensor(list,
  // dtype=...) does.
  def(vm, "tensor", "v, dtype=none", [](Args& a) {
    backend::Tensor t = a.tensor(0);
    bool was_weak = t.weak();
    DType d = a[1].is_none() ? (was_weak ? natural_dtype(a[0]) : t.dtype()) : a.dtype(1);
    // Host numbers (a literal, a number, a list of them) are range-checked;
    // a tensor's values are cast as astype casts them.
    if (was_weak || !a[0].is_tensor()) check_fits(a, 0, t, d);
    backend::Tensor r = backend::astype(t, d);
    if (r.same(t)) r = copy_of(t);
    r.set_weak(false);
    return Value(r);
  }).exact_literal = true;
  def(vm, "zeros", "shape, dtype=f32", [](Args& a) {
    return Value(backend::zeros(a.shape(0), dtype_after_shape(a, "zeros")));
  });
  def(vm, "ones", "shape, dtype=f32", [](Args& a) {
    return Value(backend::ones(a.shape(0), dtype_after_shape(a, "ones")));
  });
  def(vm, "full", "shape, v, dtype=none", [](Args& a) {
    const DType d = dtype_or(a, 2, natural_dtype(a[1]));
    check_fill_fits(a, 1, d);
    return Value(backend::full(a.shape(0), a.number(1), d));
  });
  def(vm, "zeros_like", "x, dtype=none", [](Args& a) {
    backend::Tensor x = a.tensor(0);
    backend::DeviceScope on(x.device());
    return Value(backend::zeros(x.shape(), dtype_or(a, 1, x.dtype())));
  });
  def(vm, "ones_like", "x, dtype=none", [](Args& a) {
    backend::Tensor x = a.tensor(0);
    backend::DeviceScope on(x.device());
    return Value(backend::ones(x.shape(), dtype_or(a, 1, x.dtype())));
  });
  def(vm, "arange", "a, b=none, step=1, dtype=none", [](Args& a) {
    double start = 0, stop = a.number(0);
    if (!a[1].is_none()) {
      start = a.number(0);
      stop = a.number(1);
    }
    double step = a.number(2);
    if (step == 0) a.fail(2, "arange step cannot be zero");
    bool ints = a[0].is_int() && (a[1].is_none() || a[1].is_int()) && a[2].is_int();
    // The op counts in f64: integers past 2^53 would come out rounded.
    constexpr int64_t kExact = int64_t(1) << 53;
    for (int i = 0; ints && i < 3; ++i)
      if (!a[i].is_none() && (a.integer(i) > kExact || a.integer(i) < -kExact))
        a.fail(i, "arange counts exactly only within +-2^53, got " + std::to_string(a.integer(i)));
    return Value(backend::arange(start, stop, step, dtype_or(a, 3, ints ? DType::i64 : DType::f32)));
  });
  def(vm, "linspace", "a, b, n, dtype=f32", [](Args& a) {
    int64_t n = a.integer(2);
    if (n < 0) a.fail(2, "linspace needs n >= 0, got " + std::to_string(n));
    return Value(backend::linspace(a.number(0), a.number(1), n, a.dtype(3)));
  });
  def(vm, "eye", "n, dtype=f32", [](Args& a) {
    int64_t n = a.integer(0);
    if (n < 0) a.fail(0, "eye needs n >= 0, got " + std::to_string(n));
    return Value(backend::eye(n, a.dtype(1)));
  });
  def(vm, "rand", "shape, dtype=f32", [](Args& a) {
    return Value(backend::rand(a.shape(0), dtype_after_shape(a, "rand")));
  });
  def(vm, "rand_like", "x, dtype=none", draw_like<backend::rand>);
  def(vm, "randn", "shape, dtype=f32", [](Args& a) {
    return Value(backend::randn(a.shape(0), dtype_after_shape(a, "randn")));
  });
  def(vm, "randn_like", "x, dtype=none", draw_like<backend::randn>);
  def(vm, "randint", "lo, hi, shape, dtype=i64", [](Args& a) {
    int64_t lo = a.integer(0), hi = a.integer(1);
    if (hi <= lo) a.fail(1, "randint needs lo < hi, got " + std::to_string(lo) + " and " + std::to_string(hi));
    const backend::DType d = a.dtype(3);
    // Draws outside the dtype would wrap (PyTorch: "to - 1 is out of bounds").
    if (!fits_integer(lo, d)) a.fail(0, "randint: lo " + std::to_string(lo) + " does not fit " + std::string(backend::dtype_name(d)));
    if (!fits_integer(hi - 1, d))
      a.fail(1, "randint: hi - 1 = " + std::to_string(hi - 1) + " does not fit " + std::string(backend::dtype_name(d)));
    return Value(backend::randint(lo, hi, a.shape(2), d));
  });
  def(vm, "seed", "n", [](Args& a) {
    refuse_in_graph(a, "seed");
    backend::manual_seed(uint64_t(a.integer(0)));
    return Value();
  });
}

}  // namespace nn::frontend::builtins
