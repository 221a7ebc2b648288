// Import entry of GridSample (import_table.h), as PyTorch's grid_sampler
// (which made ONNX's test data): each output point reads the input at a
// grid position, through nearest, bilinear or bicubic taps; zeros, border
// or reflection padding. Taps are gathers from the flattened planes, so the
// grid may be computed by the graph.
#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

struct Sampler {
  const NodeContext& n;
  Tensor x;  // [N, C, H*W]
  int64_t H, W;
  bool align;
  std::string padding;

  // A grid coordinate in [-1, 1] to a pixel position.
  Tensor unnormalize(const Tensor& g, int64_t size) const {
    if (align) return mul(add(g, like(1, g)), like(double(size - 1) / 2, g));
    return div(sub(mul(add(g, like(1, g)), like(double(size), g)), like(1, g)), like(2, g));
  }
  // PyTorch's reflect_coordinates over [twice_low/2, twice_high/2].
  Tensor reflect(const Tensor& c, double twice_low, double twice_high) const {
    if (twice_low == twice_high) return mul(c, like(0, c));
    const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
    const Tensor in = abs(sub(c, like(lo, c)));
    const Tensor extra = mod(in, like(span, c));
    const Tensor flips = floor(div(in, like(span, c)));
    const Tensor even = eq(mod(flips, like(2, c)), like(0, c));
    return where(even, add(extra, like(lo, c)), add(sub(like(span, c), extra), like(lo, c)));
  }
  // The padding mode applied to a position (none for zeros).
  Tensor pad_coord(const Tensor& c, int64_t size) const {
    if (padding == "zeros") return c;
    Tensor r = c;
    if (padding == "reflection")
      r = align ? reflect(c, 0, 2.0 * double(size - 1)) : reflect(c, -1, 2.0 * double(size) - 1);
    return minimum(maximum(r, like(0, r)), like(double(size - 1), r));
  }
  // weight * x at integer positions (ix, iy) [N, P] (as floats), 0 outside.
  Tensor tap(const Tensor& ix, const Tensor& iy, const Tensor& weight) const {
    const Tensor inside = logical_and(logical_and(ge(ix, like(0, ix)), le(ix, like(double(W - 1), ix))),
                                      logical_and(ge(iy, like(0, iy)), le(iy, like(double(H - 1), iy))));
    const Tensor cx = minimum(maximum(ix, like(0, ix)), like(double(W - 1), ix));
    const Tensor cy = minimum(maximum(iy, like(0, iy)), like(double(H - 1), iy));
    const Tensor ids = astype(add(mul(cy, like(double(W), cy)), cx), DType::i64);  // [N, P]
    const Tensor v = gather(x, unsqueeze(ids, 1), 2);                                // [N, C, P]
    return mul(v, unsqueeze(where(inside, weight, like(0, weight)), 1));
  }
};

Tensor cubic1(const Tensor& t, double A) {  // |t| <= 1
  return add(mul(mul(sub(mul(t, like(A + 2, t)), like(A + 3, t)), t), t), like(1, t));
}
Tensor cubic2(const Tensor& t, double A) {  // 1 < |t| < 2
  return sub(mul(add(mul(sub(mul(t, like(A, t)), like(5 * A, t)), t), like(8 * A, t)), t), like(4 * A, t));
}

Outs grid_sample(const NodeContext& n) {
  const Tensor &x0 = n.input(0), &grid = n.input(1);
  if (x0.ndim() != 4 || grid.ndim() != 4 || grid.shape()[3] != 2 || grid.shape()[0] != x0.shape()[0])
    n.fail("needs X [N, C, H, W] and grid [N, Ho, Wo, 2]");
  if (!is_floating(x0.dtype())) n.fail("X must be a float tensor");
  const int64_t N = x0.shape()[0], C = x0.shape()[1], H = x0.shape()[2], W = x0.shape()[3];
  const int64_t Ho = grid.shape()[1], Wo = grid.shape()[2];
  const std::string mode = n.attr_str("mode", "bilinear");
  Sampler s{n, reshape(x0, {N, C, H * W}), H, W, n.attr_int("align_corners", 0) != 0,
            n.attr_str("padding_mode", "zeros")};
  if (s.padding != "zeros" && s.padding != "border" && s.padding != "reflection")
    n.fail("attribute padding_mode=" + s.padding + " is not supported");
  const Tensor g = reshape(astype(grid, x0.dtype()), {N, Ho * Wo, 2});
  const Tensor gx = index(g, {IndexItem{}, IndexItem{}, at(0)}), gy = index(g, {IndexItem{}, IndexItem{}, at(1)});
  Tensor out;
  auto acc = [&](const Tensor& t) { out = out.defined() ? add(out, t) : t; };
  const Tensor one = like(1, gx);
  if (mode == "nearest" || mode == "bilinear") {
    const Tensor ix = s.pad_coord(s.unnormalize(gx, W), W), iy = s.pad_coord(s.unnormalize(gy, H), H);
    if (mode == "nearest") {
      acc(s.tap(round(ix), round(iy), one));  // round half to even, as nearbyint
    } else {
      const Tensor x0f = floor(ix), y0f = floor(iy);
      const Tensor tx = sub(ix, x0f), ty = sub(iy, y0f);
      const Tensor x1f = add(x0f, one), y1f = add(y0f, one);
      acc(s.tap(x0f, y0f, mul(sub(one, tx), sub(one, ty))));
      acc(s.tap(x1f, y0f, mul(tx, sub(one, ty))));
      acc(s.tap(x0f, y1f, mul(sub(one, tx), ty)));
      acc(s.tap(x1f, y1f, mul(tx, ty)));
    }
  } else if (mode == "bicubic") {
    // The source position is not padded; each of the 4x4 taps is.
    const Tensor ix = s.unnormalize(gx, W), iy = s.unnormalize(gy, H);
    const Tensor x0f = floor(ix), y0f = floor(iy);
    const Tensor tx = sub(ix, x0f), ty = sub(iy, y0f);
    const double A = -0.75;
    const Tensor wx[4] = {cubic2(add(tx, one), A), cubic1(tx, A), cubic1(sub(one, tx), A),
                          cubic2(sub(like(2, tx), tx), A)};
    const Tensor wy[4] = {cubic2(add(ty, one), A), cubic1(ty, A), cubic1(sub(one, ty), A),
                          cubic2(sub(like(2, ty), ty), A)};
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        const Tensor px = s.pad_coord(add(x0f, like(double(i - 1), x0f)), W);
        const Tensor py = s.pad_coord(add(y0f, like(double(j - 1), y0f)), H);
        acc(s.tap(px, py, mul(wx[i], wy[j])));
      }
  } else {
    n.fail("attribute mode=" + mode + " is not supported");
  }
  return {reshape(out, {N, C, Ho, Wo})};
}

const ImportEntry entries[] = {
    {"GridSample", grid_sample},
};

}  // namespace

std::span<const ImportEntry> grid_sample_imports() { return entries; }

}  // namespace nn::onnx_io
