// The channel-blocked layout nChw16c, in which oneDNN's convolutions keep
// their activations on this kind of machine. An activation [N, C, H, W] whose
// channel count is a multiple of 16 is held blocked as the 5-d tensor
// [N, C/16, H, W, 16]: element (n, c, h, w) sits at [n, c/16, h, w, c%16].
// Inside a CPU graph the pass `blocked-layout` (ir/passes/blocked_layout.cpp)
// keeps activations so between the convolutions and batch norms, which then
// take and give them with the attribute `blocked` (true), and reorders only
// where a plain op reads one: nn's own NCHW tensors are reordered at the
// graph's edges instead of around every convolution.
//
// Also the ops to_blocked (x [N, C, H, W] -> [N, C/16, H, W, 16]) and
// from_blocked (the inverse), which the pass places at those edges.
#pragma once
#include <span>
#include <vector>

#include "backend/attrs.h"
#include "backend/op_registry.h"
#include "backend/tensor.h"

namespace nn::backend {

constexpr int64_t kChannelBlock = 16;

// Whether an op's activations are blocked (its attribute `blocked`).
inline bool blocked_attr(const Attrs& a) { return a.get_or<bool>("blocked", false); }

// Whether a plain activation can be held blocked: 4-d, channels a positive
// multiple of 16.
bool blockable(const Shape& plain);
// [N, C, H, W] -> [N, C/16, H, W, 16] where blockable; any other shape as it is.
Shape blocked_shape(const Shape& plain);
// The inverse: a 5-d blocked shape as NCHW; any other shape as it is.
Shape plain_shape(const Shape& blocked);
inline TensorType plain_type(const TensorType& t) { return {t.dtype, plain_shape(t.shape), t.device}; }
inline TensorType blocked_type(const TensorType& t) { return {t.dtype, blocked_shape(t.shape), t.device}; }

// The type rule of an op that takes `blocked`: Rule sees its 5-d operands
// as NCHW, and the outputs listed in Activations come out blocked where
// their channels allow.
template <TypeRule Rule, int... Activations>
OutTypes layout_rule(std::span<const TensorType> in, const Attrs& attrs) {
  if (!blocked_attr(attrs)) return Rule(in, attrs);
  std::vector<TensorType> plain(in.begin(), in.end());
  for (TensorType& t : plain) t = plain_type(t);
  OutTypes out = Rule(plain, attrs);
  ((out[size_t(Activations)] = blocked_type(out[size_t(Activations)])), ...);
  return out;
}

// Runs a kernel written for NCHW on an op with `blocked`: its 5-d inputs are
// reordered to NCHW, it runs on those, and each output whose type is 5-d is
// reordered back. For the rare call the blocked kernels do not take.
void run_unblocked(Kernel kernel, std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs);

}  // namespace nn::backend
