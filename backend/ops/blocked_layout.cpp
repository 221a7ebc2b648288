// The nChw16c layout (backend/ops/blocked_layout.h): its shapes, the
// reorders to_blocked and from_blocked, and the NCHW fallback of the
// blocked ops.
#include "backend/ops/blocked_layout.h"

#include <vector>

#include "backend/dtype.h"
#include "backend/error.h"
#include "backend/ops/register.h"
#include "backend/parallel.h"

namespace nn::backend {

bool blockable(const Shape& s) { return s.ndim() == 4 && s[1] > 0 && s[1] % kChannelBlock == 0; }

Shape blocked_shape(const Shape& s) {
  if (!blockable(s)) return s;
  return Shape{s[0], s[1] / kChannelBlock, s[2], s[3], kChannelBlock};
}

Shape plain_shape(const Shape& s) {
  if (s.ndim() != 5 || s[4] != kChannelBlock) return s;
  return Shape{s[0], s[1] * kChannelBlock, s[2], s[3]};
}

namespace {

// One plane (sample n, channel block b) at a time: the 16 channel rows of
// the plain tensor, each `s` long, interleaved into s groups of 16 (or back).
template <class T, bool ToBlocked>
void reorder(const T* from, T* to, const Shape& plain) {
  const int64_t blocks = plain[0] * (plain[1] / kChannelBlock), s = plain[2] * plain[3];
  parallel_for(blocks, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, s * kChannelBlock)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) {
                   const int64_t base = p * s * kChannelBlock;
                   for (int64_t i = 0; i < s; ++i)
                     for (int64_t l = 0; l < kChannelBlock; ++l) {
                       if constexpr (ToBlocked) to[base + i * kChannelBlock + l] = from[base + l * s + i];
                       else to[base + l * s + i] = from[base + i * kChannelBlock + l];
                     }
                 }
               });
}

template <bool ToBlocked>
void reorder_tensor(const Tensor& from, Tensor& to) {
  const Shape plain = ToBlocked ? from.shape() : to.shape();
  visit_dtype(from.dtype(), [&]<class T>() { reorder<T, ToBlocked>(from.data<T>(), to.data<T>(), plain); });
}

OutTypes to_blocked_type(std::span<const TensorType> in, const Attrs&) {
  if (!blockable(in[0].shape) || in[0].dtype == DType::boolean)
    throw Error("internal: to_blocked takes [N, C, H, W] numbers with C a multiple of 16, got " + in[0].str());
  return {blocked_type(in[0])};
}

OutTypes from_blocked_type(std::span<const TensorType> in, const Attrs&) {
  const Shape plain = plain_shape(in[0].shape);
  if (plain == in[0].shape || in[0].dtype == DType::boolean)
    throw Error("internal: from_blocked takes [N, C/16, H, W, 16] numbers, got " + in[0].str());
  return {plain_type(in[0])};
}

void to_blocked_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  reorder_tensor<true>(in[0], out[0]);
}

void from_blocked_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  reorder_tensor<false>(in[0], out[0]);
}

}  // namespace

void run_unblocked(Kernel kernel, std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  std::vector<Tensor> plain_in, plain_out;
  for (const Tensor& t : in) {
    if (plain_shape(t.shape()) == t.shape()) {
      plain_in.push_back(t);
      continue;
    }
    Tensor p = Tensor::empty(plain_type(t.type()));
    reorder_tensor<false>(t, p);
    plain_in.push_back(p);
  }
  for (const Tensor& t : out)
    plain_out.push_back(plain_shape(t.shape()) == t.shape() ? t : Tensor::empty(plain_type(t.type())));
  Attrs plain_attrs = attrs;
  plain_attrs.set("blocked", false);
  kernel(plain_in, plain_out, plain_attrs);
  for (size_t i = 0; i < out.size(); ++i)
    if (plain_out[i].raw_data() != out[i].raw_data()) reorder_tensor<true>(plain_out[i], out[i]);
}

void register_blocked_layout_ops(Registry& r) {
  // Placed by the pass blocked-layout after autodiff: no backward.
  r.add(OpDef{.id = OpId::to_blocked, .num_inputs = 1, .type_rule = to_blocked_type, .cpu = to_blocked_cpu});
  r.add(OpDef{.id = OpId::from_blocked, .num_inputs = 1, .type_rule = from_blocked_type, .cpu = from_blocked_cpu});
}

}  // namespace nn::backend
