// The autocast lists of SPEC §15 and the casts they ask for.
#include "backend/autocast.h"

#include "backend/half.h"
#include "backend/ops.h"

namespace nn::backend {
namespace {
thread_local DType t_autocast = DType::f32;

bool weak_or_not_float(const Tensor& t) { return t.weak() || !is_floating(t.dtype()); }
}  // namespace

AutocastRule autocast_rule(OpId id) {
  if (id == OpId::pow) return AutocastRule::f32;  // a binary op, but in f32 as PyTorch's
  switch (id) {
    case OpId::matmul: case OpId::matmul_tn: case OpId::matmul_nt:
    case OpId::conv2d: case OpId::conv2d_backward_input: case OpId::conv2d_backward_weight:
      return AutocastRule::lower;
    case OpId::softmax: case OpId::log_softmax: case OpId::softmax_cross_entropy:
    case OpId::layer_norm: case OpId::exp: case OpId::log:
    case OpId::sum: case OpId::prod: case OpId::max: case OpId::min:
    case OpId::cumsum: case OpId::cumprod:
      return AutocastRule::f32;
#define NN_AUTOCAST_BINARY(id, ...) case OpId::id:
    NN_BINARY_OPS(NN_AUTOCAST_BINARY)
#undef NN_AUTOCAST_BINARY
    case OpId::where: case OpId::concat:
      return AutocastRule::promote;
    default:
      return AutocastRule::keep;
  }
}

DType autocast_dtype() { return t_autocast; }
bool autocast_on() { return t_autocast != DType::f32; }

void set_autocast_dtype(DType dtype) { t_autocast = is_half_float(dtype) ? dtype : DType::f32; }

AutocastScope::AutocastScope(DType dtype) : saved_(t_autocast) { set_autocast_dtype(dtype); }
AutocastScope::~AutocastScope() { t_autocast = saved_; }

bool autocast_operands(OpId op, std::span<const Tensor> in, std::vector<Tensor>& cast) {
  const AutocastRule rule = autocast_rule(op);
  if (rule == AutocastRule::keep) return false;
  // The dtype each float operand should have; f32 for `promote` when any
  // operand is wider than 16 bits (f64 stays f64, as PyTorch's promotion).
  DType to = t_autocast;
  if (rule == AutocastRule::f32) to = DType::f32;
  if (rule == AutocastRule::promote) {
    bool wide = false, narrow = false;
    for (const Tensor& t : in) {
      if (!t.defined() || weak_or_not_float(t)) continue;
      (is_half_float(t.dtype()) ? narrow : wide) = true;
    }
    if (!(wide && narrow)) return false;
    to = DType::f32;
  }
  auto wants = [&](const Tensor& t) {
    if (!t.defined() || weak_or_not_float(t) || t.dtype() == to) return false;
    // lower: only f32 is narrowed (f64 is asked for on purpose); f32 and
    // promote: only 16-bit operands are widened.
    return rule == AutocastRule::lower ? t.dtype() == DType::f32 : is_half_float(t.dtype());
  };
  bool any = false;
  for (const Tensor& t : in) any = any || wants(t);
  if (!any) return false;
  cast.clear();
  cast.reserve(in.size());
  for (const Tensor& t : in) cast.push_back(wants(t) ? astype(t, to) : t);
  return true;
}

Tensor autocast_f32(const Tensor& t) {
  if (!autocast_on() || !t.defined() || weak_or_not_float(t) || !is_half_float(t.dtype())) return t;
  return astype(t, DType::f32);
}

}  // namespace nn::backend
