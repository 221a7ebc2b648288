// dispatch: type rule, then hook or kernel; an eager call that a param takes
// part in is recorded on the autodiff tape (backend/autograd.h).
#include "backend/dispatch.h"

#include <algorithm>
#include <array>
#include <limits>

#include "backend/autocast.h"
#include "backend/autograd.h"
#include "backend/half.h"
#include "backend/interrupt.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/type_rules.h"
#include "backend/profiler.h"

namespace nn::backend {
namespace {
thread_local DispatchHook* t_hook = nullptr;

// A host number: a 0-d tensor in CPU memory, which kernels of any device read.
bool host_scalar(const TensorType& t) { return t.shape.ndim() == 0 && t.device && t.device->type() == DeviceType::cpu; }

// A host integer meets an i32 tensor in i32 (SPEC §3). One that i32 cannot
// hold would wrap in the kernel (zeros of i32 == 2**32 was true), so it is
// refused, as PyTorch refuses it.
void check_host_ints_fit(const OpDef& op, std::span<const Tensor> in, std::span<const TensorType> types) {
  auto host_int = [](const Tensor& t) { return t.defined() && t.weak() && t.dtype() == DType::i64; };
  if (std::none_of(in.begin(), in.end(), host_int) || promote_types(types).dtype != DType::i32) return;
  for (const Tensor& t : in) {
    if (!host_int(t) || t.is_traced() || !host_scalar(t.type())) continue;
    const int64_t v = t.item_int();
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      throw Error(op.name + ": " + std::to_string(v) + " does not fit i32, the dtype it meets the i32 tensor in; " +
                  "make the tensor i64 (astype(x, i64))");
  }
}
}  // namespace

Kernel kernel_for(const OpDef& op, std::span<const Tensor> in, std::span<const Tensor> out) {
  Device* dev = nullptr;
  for (const Tensor& t : in)
    if (t.device()->type() != DeviceType::cpu) dev = t.device();
  for (const Tensor& t : out)
    if (!dev && t.device()->type() != DeviceType::cpu) dev = t.device();
  if (!dev) dev = cpu_device();
  Kernel k = dev->type() == DeviceType::cpu ? op.cpu : op.cuda;
  if (!k) throw Error(op.name + ": no kernel for device " + dev->name() + " yet");
  return k;
}

namespace {
// The CPU kernels compute in f32, f64 and the integer types. An op given
// f16 or bf16 on the CPU runs its f32 kernel on the operands widened
// exactly to f32, and its results are rounded once to their dtype (to
// nearest, ties to even), as the GPU's kernels widen on load and round on
// store. The casts themselves convert 16-bit values directly.
bool touches_half(std::span<const Tensor> in, std::span<const Tensor> out) {
  for (const Tensor& t : in)
    if (t.defined() && is_half_float(t.dtype())) return true;
  for (const Tensor& t : out)
    if (is_half_float(t.dtype())) return true;
  return false;
}

void run_widened(const OpDef& op, std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  // An elementwise op that computes in a 16-bit dtype rounds its other
  // operands (a host number, a 0-d tensor, an integer tensor) to it first,
  // as PyTorch does and the GPU's kernels load them: f16 [1, 2] == 1.0001
  // compares with 1.0, and bf16 1 + 257 is 1 + 256 whether 257 is written
  // as an int or a float. A bool (where's condition) stays what it is.
  DType half = DType::f32;
  if (op.elementwise) {
    std::vector<TensorType> types;
    for (const Tensor& t : in)
      if (t.defined()) types.push_back(t.type());
    if (const DType d = promote_types(types).dtype; is_half_float(d)) half = d;
  }
  std::vector<Tensor> wide_in, wide_out;
  wide_in.reserve(in.size());
  for (const Tensor& t : in) {
    if (t.defined() && is_half_float(t.dtype())) wide_in.push_back(ew::converted(t, DType::f32));
    else if (t.defined() && half != DType::f32 && t.dtype() != DType::boolean)
      wide_in.push_back(ew::converted(ew::converted(t, half), DType::f32));
    else wide_in.push_back(t);
  }
  wide_out.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor& t = out[i];
    if (!is_half_float(t.dtype())) wide_out.push_back(t);
    else if (op.effect == Effect::stateful && i == 0) wide_out.push_back(wide_in[0]);  // writes into input 0
    else wide_out.push_back(Tensor::empty(t.shape(), DType::f32, cpu_device()));
  }
  op.cpu(wide_in, wide_out, attrs);
  for (size_t i = 0; i < out.size(); ++i)
    if (is_half_float(out[i].dtype())) ew::convert_into(wide_out[i], out[i]);
}

// Casts convert 16-bit values themselves, and the collectives stage them
// through f32 on their own (an all-reduce still in flight writes into its
// bucket, which must not be a temporary).
bool converts_half_itself(const OpDef& op) {
  return op.id == OpId::cast || op.id == OpId::to_device || op.effect == Effect::collective ||
         op.effect == Effect::completion;
}
}  // namespace

void run_kernel(const OpDef& op, std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  Kernel k = kernel_for(op, in, out);
  if (k == op.cpu && !converts_half_itself(op) && touches_half(in, out)) return run_widened(op, in, out, attrs);
  k(in, out, attrs);
}

void set_dispatch_hook(DispatchHook* hook) { t_hook = hook; }
DispatchHook* dispatch_hook() { return t_hook; }

OutTypes infer_types(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs) {
  if (op.num_inputs >= 0 && size_t(op.num_inputs) != in.size())
    throw Error("internal: op " + op.name + " takes " + std::to_string(op.num_inputs) + " inputs, got " +
                std::to_string(in.size()));
  std::array<TensorType, 4> small;
  std::vector<TensorType> big;
  std::span<TensorType> types;
  if (in.size() <= small.size()) {
    types = std::span<TensorType>(small.data(), in.size());
  } else {
    big.resize(in.size());
    types = big;
  }
  // The operands' device: the first that is not a host number's.
  size_t first = in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    types[i] = in[i].type();
    if (host_scalar(types[i])) continue;
    if (first == in.size()) first = i;
    else if (types[i].device != types[first].device)
      throw Error(op.name + ": operands are on different devices: " + types[first].str() + " on " +
                  types[first].device->name() + " and " + types[i].str() + " on " + types[i].device->name() +
                  "; move one with to(x, device)");
  }
  if (first < in.size() && types[first].device->type() != DeviceType::cpu)
    for (auto& t : types)
      if (host_scalar(t)) t.device = types[first].device;
  OutTypes out = op.type_rule(types, attrs);
  if (op.elementwise) check_host_ints_fit(op, in, types);
  if (in.empty()) {
    Device* dev = default_device();
    for (auto& t : out) t.device = dev;
  }
  return out;
}

Tensors dispatch(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs) {
  std::vector<Tensor> autocast_in;
  if (autocast_on() && autocast_operands(op.id, in, autocast_in)) in = autocast_in;
  OutTypes types = infer_types(op, in, attrs);
  if (op.effect == Effect::stateful) in[0].block()->note_write();
  Tensors out;
  if (t_hook && t_hook->on_dispatch(op, in, attrs, types, out)) {
    // A traced call is recorded on the tape too: grad() inside a graph then
    // walks it and its backward rules trace the backward part (ir/tracer.h).
    if (op.backward) record_op(op, in, attrs, out);
    return out;
  }
  out.reserve(types.size());
  if (op.view) {
    size_t at = 0;
    for (const TensorType& t : types) {
      out.push_back(in[0].view(t.shape, at));
      at += t.nbytes();
    }
    if (op.waits) run_kernel(op, in, out, attrs);
    if (op.backward) record_op(op, in, attrs, out);
    return out;
  }
  if (op.effect == Effect::stateful) {
    out.push_back(in[0]);  // writes into its first input
  } else {
    for (auto& t : types) {
      out.push_back(Tensor::empty(t.shape, t.dtype, t.device ? t.device : cpu_device()));
    }
  }
  try {
    // Take the output memory here, outside any parallel region of the kernel,
    // so that an allocation failure names the op.
    for (auto& t : out) t.raw_data();
    if (Profiler* prof = Profiler::active()) {
      Device* dev = out.empty() ? in[0].device() : out[0].device();
      dev->synchronize();  // a GPU's earlier kernels are not this op's time
      const int64_t t0 = Profiler::now_ns();
      run_kernel(op, in, out, attrs);
      dev->synchronize();  // the kernel's time, not its launch's
      prof->record(op.name, "eager", t0, Profiler::now_ns());
    } else {
      run_kernel(op, in, out, attrs);
    }
    // A long kernel stopped early for Ctrl-C: its output is not whole.
    if (take_interrupt()) throw Error("interrupted");
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(op.name + ": " + e.what(), e.asked());
  }
  // Only ops with a backward rule are ever recorded; testing for one here
  // spares the other ops a call.
  if (op.backward) record_op(op, in, attrs, out);
  return out;
}

bool call_into(const OpDef& op, std::span<const Tensor> in, const Tensor& out, const Attrs& attrs) {
  if (t_hook || !op.elementwise || op.effect != Effect::pure || autocast_on()) return false;
  OutTypes types = infer_types(op, in, attrs);
  if (types.size() != 1 || types[0].dtype != out.dtype() || types[0].shape != out.shape() ||
      types[0].device != out.device())
    return false;
  Tensor target = out;
  out.block()->note_write();
  run_kernel(op, in, std::span<Tensor>(&target, 1), attrs);
  return true;
}

Tensor call(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs) {
  Tensors out = dispatch(op, in, attrs);
  return std::move(out.at(0));
}

}  // namespace nn::backend
