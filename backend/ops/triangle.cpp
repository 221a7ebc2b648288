// tril and triu (SPEC §13): the lower or upper triangle of the last two axes,
// the rest zeroed, as PyTorch's: tril keeps element (i, j) where j - i <= k,
// triu where j - i >= k (k = 0 the main diagonal, k > 0 above it). The
// gradient is masked the same way, so each op is its own backward.
#include <algorithm>
#include <cstring>
#include <string>

#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/register.h"

namespace nn::backend {
namespace {

template <OpId Id>
OutTypes triangle_type(std::span<const TensorType> in, const Attrs&) {
  const TensorType& x = in[0];
  if (x.shape.ndim() < 2)
    throw Error(std::string(op_name(Id)) + ": expected a tensor of at least 2 dimensions (a matrix or a batch of " +
                "them), got " + x.str());
  return {x};
}

// Row i of each matrix keeps columns [lo, hi) and zeroes the others; zero
// bytes are 0 in every dtype, so the copy needs no dtype.
template <OpId Id>
void triangle_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& x = in[0];
  const int nd = x.ndim();
  const int64_t rows = x.shape()[nd - 2], cols = x.shape()[nd - 1];
  // k beyond the matrix acts as its edge: clamped first, so i + k + 1
  // cannot overflow (k near 2^63 wrapped to a mask of the other side).
  const int64_t k = std::clamp<int64_t>(attrs.get_or<int64_t>("k", 0), -rows - 1, cols + 1);
  const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  const size_t es = dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i) {
      // tril: j <= i + k; triu: j >= i + k (clamped into [0, cols]).
      const int64_t edge = std::clamp<int64_t>(Id == OpId::tril ? i + k + 1 : i + k, 0, cols);
      const int64_t lo = Id == OpId::tril ? 0 : edge, hi = Id == OpId::tril ? edge : cols;
      const size_t row = size_t((m * rows + i) * cols) * es;
      std::memset(dst + row, 0, size_t(cols) * es);
      if (hi > lo) std::memcpy(dst + row + size_t(lo) * es, src + row + size_t(lo) * es, size_t(hi - lo) * es);
    }
}

template <OpId Id>
std::vector<Tensor> triangle_backward(const BackwardArgs& a) {
  if (!bw::wants(a.inputs[0])) return {Tensor()};
  return {call(op(Id), {a.grads[0]}, a.attrs)};
}

Tensor triangle(OpId id, const Tensor& x, int64_t k) {
  return call(op(id), {x}, k == 0 ? Attrs{} : Attrs{{"k", k}});
}

}  // namespace

Tensor tril(const Tensor& x, int64_t k) { return triangle(OpId::tril, x, k); }
Tensor triu(const Tensor& x, int64_t k) { return triangle(OpId::triu, x, k); }

void register_triangle_ops(Registry& r) {
  r.add(OpDef{.id = OpId::tril, .num_inputs = 1, .type_rule = triangle_type<OpId::tril>,
              .cpu = triangle_kernel<OpId::tril>, .backward = triangle_backward<OpId::tril>});
  r.add(OpDef{.id = OpId::triu, .num_inputs = 1, .type_rule = triangle_type<OpId::triu>,
              .cpu = triangle_kernel<OpId::triu>, .backward = triangle_backward<OpId::triu>});
}

}  // namespace nn::backend
