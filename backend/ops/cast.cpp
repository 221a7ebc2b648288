// Casts and device moves: the `cast` op (astype), `to_device`, and the
// conversion loops the elementwise engine uses for mixed-dtype inputs, and
// the backward rules of the two ops.
#include <algorithm>
#include <cstring>

#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/register.h"
#include "backend/ops/tile.h"
#include "backend/ops/type_rules.h"

namespace nn::backend {

namespace ew {

void convert_into(const Tensor& src, Tensor& dst) {
  const int64_t n = src.numel();
  if (n == 0) return;
  if (src.dtype() == dst.dtype()) {
    if (src.raw_data() != dst.raw_data()) std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
    return;
  }
  const DType from = src.dtype(), to = dst.dtype();
  const void* s = src.raw_data();
  void* d = dst.raw_data();
  auto each = [n](auto&& f) {
    parallel_for(n, kCheapGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) f(i);
    });
  };
  // f16 and bf16 go through float, as the GPU's kernels convert them.
  if (is_half_float(from) && is_half_float(to)) {
    each([&](int64_t i) { store_half_float(to, d, i, load_half_float(from, s, i)); });
    return;
  }
  if (is_half_float(from)) {
    visit_dtype(to, [&]<class D>() {
      each([&](int64_t i) { static_cast<D*>(d)[i] = convert_value<D>(load_half_float(from, s, i)); });
    });
    return;
  }
  if (is_half_float(to)) {
    visit_dtype(from, [&]<class S>() {
      each([&](int64_t i) { store_half_exact(to, d, i, convert_value<double>(static_cast<const S*>(s)[i])); });
    });
    return;
  }
  visit_dtype(from, [&]<class S>() {
    visit_dtype(to, [&]<class D>() {
      each([&](int64_t i) { static_cast<D*>(d)[i] = convert_value<D>(static_cast<const S*>(s)[i]); });
    });
  });
}

Tensor converted(const Tensor& src, DType to) {
  if (src.dtype() == to) return src;
  Tensor t = Tensor::empty(src.shape(), to, src.device());
  convert_into(src, t);
  return t;
}

}  // namespace ew

namespace {

OutTypes cast_type(std::span<const TensorType> in, const Attrs& attrs) {
  TensorType t = in[0];
  t.dtype = attrs.get<DType>("dtype");
  t.weak = false;  // an explicit dtype is a strong one
  return {t};
}

void cast_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) { ew::convert_into(in[0], out[0]); }

// A cast inside a fused kernel: to bool it is `!= 0`; to the compute dtype
// nothing is left to do (the kernel converted the operand on load).
template <class T>
void cast_tile(const T* const* in, T* out, int64_t n, const Attrs& attrs) {
  const T* x = in[0];
  if (attrs.get<DType>("dtype") == DType::boolean) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] != T(0) ? T(1) : T(0);
  } else {
    std::copy(x, x + n, out);
  }
}

OutTypes to_device_type(std::span<const TensorType> in, const Attrs& attrs) {
  const std::string& name = attrs.get<std::string>("device");
  Device* dev = find_device(name);
  if (!dev) throw Error("to: no device named \"" + name + "\"");
  TensorType t = in[0];
  t.device = dev;
  return {t};
}

// Both ends are host memory while the CPU is the only device.
void to_device_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  if (in[0].nbytes()) std::memcpy(out[0].raw_data(), in[0].raw_data(), in[0].nbytes());
}

// The gradient is cast back to the input's dtype (an f32 -> f64 cast gives
// an f32 gradient). Integer and bool inputs get none; a cast to an integer
// dtype is never recorded (autodiff follows float results only).
std::vector<Tensor> cast_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  return {astype(a.grads[0], x.dtype())};
}

// The gradient goes back to the input's device.
std::vector<Tensor> to_device_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  return {to_device(a.grads[0], x.device())};
}

}  // namespace

void register_cast_ops(Registry& r) {
  r.add({.id = OpId::cast, .num_inputs = 1, .type_rule = cast_type, .cpu = cast_cpu, .backward = cast_backward,
         .elementwise = true, .tile = {cast_tile<float>, cast_tile<double>}});
  r.add({.id = OpId::to_device, .num_inputs = 1, .type_rule = to_device_type, .cpu = to_device_cpu,
         .backward = to_device_backward});
}

Tensor astype(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  static const OpDef& def = op(OpId::cast);
  return call(def, {x}, Attrs{{"dtype", dtype}});
}

Tensor to_device(const Tensor& x, Device* device) {
  if (!device) throw Error("to: no such device");
  if (x.device() == device) return x;
  static const OpDef& def = op(OpId::to_device);
  return call(def, {x}, Attrs{{"device", device->name()}});
}

}  // namespace nn::backend
