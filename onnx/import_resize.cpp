// Import entries of Resize and Upsample (import_table.h). ONNX's reference
// interpolates one axis at a time, so each resized axis is a matmul with a
// [out, in] matrix of weights worked out on the host: one-hot rows for
// nearest, two taps for linear, four for cubic, following the reference's
// coordinate transforms, neighbour choice and edge handling.
#include <algorithm>
#include <cmath>

#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

struct ResizeMode {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false;
};

std::vector<double> coefficients(const NodeContext& n, const ResizeMode& m, double ratio) {
  if (m.mode == "nearest") {
    if (ratio == 1) return {0, 1};
    if (m.nearest == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (m.nearest == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (m.nearest == "floor") return {1, 0};
    if (m.nearest == "ceil") return {0, 1};
    n.fail("attribute nearest_mode=" + m.nearest + " is not supported");
  }
  if (m.mode == "linear") return {1 - ratio, ratio};
  if (m.mode == "cubic") {
    const double A = m.cubic_a, r = ratio, s = 1 - ratio;
    return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
            ((A + 2) * s - (A + 3)) * s * s + 1, ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
  }
  n.fail("attribute mode=" + m.mode + " is not supported");
}

// The [out, in] weights of one axis, and for tf_crop_and_resize which output
// positions fall outside the input (they take the extrapolation value).
// The coordinate transforms are the spec's, with length_resized the output
// length `out` as onnxruntime and PyTorch take it (ONNX's reference takes
// scale * in, unrounded, which differs for a non-integer scale).
void axis_weights(const NodeContext& n, const ResizeMode& m, int64_t in, int64_t out, double scale, double roi_lo,
                  double roi_hi, std::vector<double>& w, std::vector<double>& outside) {
  w.assign(size_t(out * in), 0.0);
  outside.assign(size_t(out), 0.0);
  // In float, as onnxruntime computes them: a position that is a tie in
  // float (nearest's rounding) but not in double picks onnxruntime's side.
  const float s = float(scale), lo = float(roi_lo), hi = float(roi_hi), last = float(in - 1);
  for (int64_t xo = 0; xo < out; ++xo) {
    const float x = float(xo);
    float orif = 0;
    if (m.coord == "half_pixel") {
      orif = (x + 0.5f) / s - 0.5f;
    } else if (m.coord == "pytorch_half_pixel") {
      orif = out > 1 ? (x + 0.5f) / s - 0.5f : 0;
    } else if (m.coord == "align_corners") {
      orif = out > 1 ? x * last / float(out - 1) : 0;
    } else if (m.coord == "asymmetric") {
      orif = x / s;
    } else if (m.coord == "tf_half_pixel_for_nn") {
      orif = (x + 0.5f) / s;
    } else if (m.coord == "tf_crop_and_resize") {
      orif = out > 1 ? lo * last + x * (hi - lo) * last / float(out - 1) : 0.5f * (lo + hi) * last;
      if (orif < 0 || orif > last) {
        outside[size_t(xo)] = 1;
        continue;
      }
    } else {
      n.fail("attribute coordinate_transformation_mode=" + m.coord + " is not supported");
    }
    const double ori = orif;
    const double fl = std::floor(ori);
    const double ratio = ori == fl ? 1 : ori - fl;
    std::vector<double> c = coefficients(n, m, ratio);
    const int64_t taps = int64_t(c.size());
    // The reference's neighbours: the `taps` positions of the edge-padded
    // axis nearest to ori, the smaller first on ties.
    const int64_t pad = (taps + 1) / 2;
    std::vector<int64_t> cand;
    for (int64_t j = int64_t(fl) - taps; j <= int64_t(fl) + taps; ++j)
      if (j + pad >= 0 && j + pad < in + 2 * pad) cand.push_back(j);
    std::stable_sort(cand.begin(), cand.end(), [&](int64_t a, int64_t b) {
      const double da = std::abs(ori - double(a)), db = std::abs(ori - double(b));
      return da != db ? da < db : a < b;
    });
    cand.resize(size_t(std::min<int64_t>(taps, int64_t(cand.size()))));
    std::sort(cand.begin(), cand.end());
    if (m.exclude_outside) {
      double total = 0;
      for (size_t i = 0; i < cand.size(); ++i) {
        if (cand[i] < 0 || cand[i] >= in) c[i] = 0;
        total += c[i];
      }
      if (total != 0)
        for (double& v : c) v /= total;
    }
    for (size_t i = 0; i < cand.size(); ++i)
      w[size_t(xo * in + std::clamp<int64_t>(cand[i], 0, in - 1))] += c[i];
  }
}

Tensor resize(const NodeContext& n, const Tensor& x, const ResizeMode& m, std::vector<double> scales,
              std::vector<int64_t> sizes, const std::vector<double>& roi) {
  const int64_t r = x.ndim();
  if (!sizes.empty() && int64_t(sizes.size()) != r) n.fail("sizes must have one entry per axis");
  if (sizes.empty() && int64_t(scales.size()) != r) n.fail("scales must have one entry per axis");
  if (!roi.empty() && int64_t(roi.size()) != 2 * r) n.fail("roi must hold 2 * rank numbers");
  Tensor y = x;
  for (int64_t a = 0; a < r; ++a) {
    const int64_t in = x.shape()[int(a)];
    int64_t out;
    double scale;
    if (!sizes.empty()) {
      out = sizes[size_t(a)];
      scale = in ? double(out) / double(in) : 1;
    } else {
      scale = scales[size_t(a)];
      if (!(scale > 0)) n.fail("scales must be positive");
      out = int64_t(std::floor(double(in) * scale));
    }
    if (out < 0) n.fail("negative output size");
    const double lo = roi.empty() ? 0 : roi[size_t(a)], hi = roi.empty() ? 1 : roi[size_t(a + r)];
    if (out == in && scale == 1 && m.coord != "tf_crop_and_resize") continue;
    if (in == 0) n.fail("cannot resize an empty axis");
    std::vector<double> w, outside;
    axis_weights(n, m, in, out, scale, lo, hi, w, outside);
    // The axis last, times the weights' transpose [in, out], then back.
    std::vector<int64_t> perm;
    for (int64_t k = 0; k < r; ++k)
      if (k != a) perm.push_back(k);
    perm.push_back(a);
    std::vector<int64_t> back(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) back[size_t(perm[size_t(k)])] = k;
    const DType dt = is_floating(y.dtype()) ? y.dtype() : DType::f32;
    const Tensor wt = from_doubles(w, Shape{out, in}, dt);
    Tensor moved = matmul(astype(permute(y, perm), dt), transpose(wt));
    if (m.coord == "tf_crop_and_resize") {
      const Tensor mask = from_doubles(outside, Shape{out}, DType::boolean);
      moved = where(mask, scalar(m.extrapolation, dt), moved);
    }
    y = permute(moved, back);
  }
  if (!is_floating(x.dtype())) {
    if (m.mode != "nearest") n.fail("integer inputs resize only in nearest mode");
    y = astype(y, x.dtype());
  }
  return y;
}

// Opset 11+: X, roi, scales, sizes (one of scales and sizes). Opset 10: X, scales.
Outs resize_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  ResizeMode m;
  m.mode = n.attr_str("mode", "nearest");
  std::vector<double> scales, roi;
  std::vector<int64_t> sizes;
  if (n.opset() < 11) {
    m.coord = "asymmetric", m.nearest = "floor";
    scales = n.numbers(1);
  } else {
    m.coord = n.attr_str("coordinate_transformation_mode", "half_pixel");
    m.nearest = n.attr_str("nearest_mode", "round_prefer_floor");
    m.cubic_a = n.attr_float("cubic_coeff_a", -0.75);
    m.exclude_outside = n.attr_int("exclude_outside", 0) != 0;
    m.extrapolation = n.attr_float("extrapolation_value", 0);
    if (n.has_input(1) && m.coord == "tf_crop_and_resize") roi = n.numbers(1);
    if (n.has_input(2)) scales = n.numbers(2);
    if (n.has_input(3)) sizes = n.ints(3);
    if (!scales.empty() && !sizes.empty()) n.fail("give scales or sizes, not both");
  }
  if (n.has_attr("axes")) n.fail("attribute axes is not supported");
  return {resize(n, x, m, scales, sizes, roi)};
}

// Upsample (deprecated): nearest or linear, asymmetric, with scales.
Outs upsample_entry(const NodeContext& n) {
  ResizeMode m;
  m.mode = n.attr_str("mode", "nearest");
  m.coord = "asymmetric", m.nearest = "floor";
  const std::vector<double> scales = n.opset() < 9 ? n.attr_floats("scales") : n.numbers(1);
  return {resize(n, n.input(0), m, scales, {}, {})};
}

const ImportEntry entries[] = {
    {"Resize", resize_entry},
    {"Upsample", upsample_entry},
};

}  // namespace

std::span<const ImportEntry> resize_imports() { return entries; }

}  // namespace nn::onnx_io
