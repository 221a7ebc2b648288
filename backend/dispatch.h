// backend::dispatch: the one call every tensor op goes through. It asks the
// type rule for output types, then either lets an active hook take the call
// (the graph tracer records a node instead of computing) or allocates the
// outputs and runs the kernel of the inputs' device now.
#pragma once
#include <span>

#include "backend/op_registry.h"

namespace nn::backend {

using Tensors = std::vector<Tensor>;

// A layer above (the tracer, the autodiff tape) that wants to see or take op
// calls installs a hook; the backend knows nothing of it beyond this.
class DispatchHook {
 public:
  virtual ~DispatchHook() = default;
  // Returns true when the hook produced the outputs itself.
  virtual bool on_dispatch(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs,
                           const OutTypes& types, Tensors& out) = 0;
  // Autodiff groups a backward pass the way its forward was grouped: each op
  // it records keeps the hook's group() (the tracer: the nn function call
  // being traced); the op's backward rule, and the sums of the gradients of
  // its outputs, run after backward_of(that group), which returns the group
  // it replaces, set back afterwards. 0: no group.
  virtual uint32_t group() const { return 0; }
  virtual uint32_t backward_of(uint32_t /*group*/) { return 0; }
};
void set_dispatch_hook(DispatchHook* hook);  // per thread; null removes it
DispatchHook* dispatch_hook();

Tensors dispatch(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs = {});
// Single-output convenience.
Tensor call(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs = {});
inline Tensor call(const OpDef& op, std::initializer_list<Tensor> in, const Attrs& attrs = {}) {
  return call(op, std::span<const Tensor>(in.begin(), in.size()), attrs);
}

// In-place update: runs an elementwise op writing into `out` (which may be
// one of its inputs: each element is read before it is written). Returns
// false, doing nothing, when the result's type differs from out's, when the
// op is not a pure elementwise one, or when a hook is active (a tracer sees
// state updates its own way). Never recorded for autodiff.
bool call_into(const OpDef& op, std::span<const Tensor> in, const Tensor& out, const Attrs& attrs = {});

// Runs the type rule only. Operands must share one device, except 0-d CPU
// tensors (host numbers, as in PyTorch), which join operands on any device;
// the type rule sees them on that device. Ops without tensor inputs make
// their results on the default device (backend/device.h).
OutTypes infer_types(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs);

// The kernel that runs a call: the CUDA one when any input or output lives
// on a GPU (to_device's included), else the CPU one. Throws Error when the
// op has none for that device.
Kernel kernel_for(const OpDef& op, std::span<const Tensor> in, std::span<const Tensor> out);
// Runs that kernel on outputs already allocated. On the CPU, f16 and bf16
// operands are widened to f32 for kernels that compute in f32, and their
// results rounded back (casts aside, which convert them directly).
void run_kernel(const OpDef& op, std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs);

}  // namespace nn::backend
