// multinomial (SPEC §13): n category ids drawn from each row of
// probabilities (the last axis; weights need not sum to 1), with or without
// replacement (PyTorch's default: without), seeded like randn: one uniform
// of the global generator per id, so the thread count cannot change a draw.
// An id is the first category whose running sum passes u · total. Ids have
// no gradient.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend/half.h"
#include "backend/ops.h"
#include "backend/ops/register.h"
#include "backend/philox.h"

namespace nn::backend {
namespace {

OutTypes multinomial_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType& p = in[0];
  const int64_t n = attrs.get_or<int64_t>("n", 1);
  if (!is_floating(p.dtype) || p.shape.ndim() < 1 || p.shape.ndim() > 2)
    throw Error("multinomial: expected floating probabilities of shape [k] or [rows, k], got " + p.str());
  const int64_t k = p.shape[p.shape.ndim() - 1];
  if (k == 0) throw Error("multinomial: no categories to draw from in " + p.str());
  if (n < 1) throw Error("multinomial: n must be at least 1, got " + std::to_string(n));
  if (!attrs.get_or<bool>("replacement", false) && n > k)
    throw Error("multinomial: cannot draw " + std::to_string(n) + " ids of " + std::to_string(k) +
                " categories without replacement (pass replacement=true)");
  TensorType out{DType::i64, p.shape, p.device};
  out.shape[out.shape.ndim() - 1] = n;
  return {out};
}

void multinomial_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& p = in[0];
  const int64_t k = p.shape()[p.ndim() - 1], rows = p.numel() / k, n = out[0].shape()[out[0].ndim() - 1];
  const bool replacement = attrs.get_or<bool>("replacement", false);
  std::vector<double> w(size_t(p.numel()));
  for (int64_t i = 0; i < p.numel(); ++i)
    w[size_t(i)] = p.dtype() == DType::f64   ? p.data<double>()[i]
                   : p.dtype() == DType::f32 ? double(p.data<float>()[i])
                                             : double(load_half_float(p.dtype(), p.raw_data(), i));
  int64_t* ids = out[0].data<int64_t>();
  const PhiloxDraw draw = philox_reserve(uint64_t(rows * n));
  std::vector<double> left(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t c = 0; c < k; ++c) {
      const double x = w[r * k + c];
      if (!(x >= 0) || !std::isfinite(x))
        throw Error(fmt::format("multinomial: probabilities must be finite and not negative; row {} has {:g} at {}{}",
                                r, std::isnan(x) ? std::nan("") : x, c,  // "nan", never "-nan"
                                // categorical's softmax makes NaN of such rows
                                std::isnan(x) ? " (the softmax of logits that are all -inf or hold a NaN is NaN)" : ""));
      left[size_t(c)] = x;
      total += x;
    }
    for (int64_t j = 0; j < n; ++j) {
      if (!(total > 0))
        throw Error("multinomial: row " + std::to_string(r) + " has " +
                    (j == 0 ? std::string("no weight") : "fewer than " + std::to_string(n) + " categories of weight") +
                    " to draw from");
      const double u = philox_uniform_f64(Philox4x32::at(draw.seed, draw.offset + uint64_t(r * n + j))) * total;
      int64_t pick = -1;
      double run = 0;
      for (int64_t c = 0; c < k; ++c) {
        if (left[size_t(c)] <= 0) continue;
        pick = c;  // the last with weight, should rounding leave u at the top
        run += left[size_t(c)];
        if (u < run) break;
      }
      ids[r * n + j] = pick;
      if (!replacement) {
        // The rest summed again, in order: subtracting the pick left a
        // rounding residue (0.1 + 0.2 + 0.3 less the three was 1.1e-16), a
        // total above 0 with no category left to find.
        left[size_t(pick)] = 0;
        total = 0;
        for (double x : left) total += x;
      }
    }
  }
}

}  // namespace

Tensor multinomial(const Tensor& probs, int64_t n, bool replacement) {
  Attrs attrs;
  if (n != 1) attrs.set("n", n);
  if (replacement) attrs.set("replacement", true);
  return call(op(OpId::multinomial), {probs}, attrs);
}

void register_sampling_ops(Registry& r) {
  r.add(OpDef{.id = OpId::multinomial, .num_inputs = 1, .type_rule = multinomial_type, .cpu = multinomial_kernel,
              .effect = Effect::random});
}

}  // namespace nn::backend
