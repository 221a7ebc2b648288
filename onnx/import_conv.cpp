// Import entries of convolution, pooling and Gemm (import_table.h). 2-d
// convolutions and the pools nn has kernels for map to conv2d, max_pool2d
// and avg_pool2d; other ranks, dilated or ceil-mode pools and asymmetric
// padding are composed from strided slices of the padded input, one per
// kernel position.
#include <limits>

#include "backend/nn_ops.h"
#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

// A window op's geometry over the spatial axes (x's axes 2..).
struct Window {
  std::vector<int64_t> kernel, strides, dilations, begin, end, out;
};

Window window_of(const NodeContext& n, const Tensor& x, std::vector<int64_t> kernel, bool ceil_mode) {
  const int64_t sp = x.ndim() - 2;
  if (sp < 1) n.fail("needs an input of rank 3 or more ([N, C, ...]), not " + x.type().str());
  Window w;
  w.kernel = std::move(kernel);
  if (int64_t(w.kernel.size()) != sp) n.fail("kernel_shape must have one entry per spatial axis");
  w.strides = n.attr_ints("strides", std::vector<int64_t>(size_t(sp), 1));
  w.dilations = n.attr_ints("dilations", std::vector<int64_t>(size_t(sp), 1));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(size_t(2 * sp), 0));
  if (int64_t(w.strides.size()) != sp || int64_t(w.dilations.size()) != sp || int64_t(pads.size()) != 2 * sp)
    n.fail("strides, dilations and pads must match the spatial rank");
  const std::string auto_pad = n.attr_str("auto_pad", "NOTSET");
  for (int64_t i = 0; i < sp; ++i) {
    const int64_t in = x.shape()[int(i + 2)], k = w.kernel[size_t(i)], s = w.strides[size_t(i)],
                  d = w.dilations[size_t(i)];
    if (k < 1 || s < 1 || d < 1) n.fail("kernel, strides and dilations must be positive");
    const int64_t span = d * (k - 1) + 1;
    int64_t b = pads[size_t(i)], e = pads[size_t(i + sp)];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
      b = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      e = total - b;
    } else if (auto_pad == "VALID") {
      b = e = 0;
    } else if (auto_pad != "NOTSET") {
      n.fail("attribute auto_pad=" + auto_pad + " is not supported");
    }
    if (b < 0 || e < 0) n.fail("negative pads");
    const int64_t room = in + b + e - span;
    if (room < 0) n.fail("the window is larger than the padded input");
    int64_t out = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + b) --out;  // the last window must start inside
    w.begin.push_back(b), w.end.push_back(e), w.out.push_back(out);
  }
  return w;
}

// x padded on the spatial axes with `value`, then out to where the last
// (ceil-mode) window reaches with `overhang`.
Tensor pad_spatial(const Tensor& x, const Window& w, double value, double overhang) {
  std::vector<std::pair<int64_t, int64_t>> widths{{0, 0}, {0, 0}}, extra{{0, 0}, {0, 0}};
  bool any = false, any_extra = false;
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    const int64_t in = x.shape()[int(i + 2)];
    const int64_t reach = (w.out[i] - 1) * w.strides[i] + w.dilations[i] * (w.kernel[i] - 1) + 1;
    const int64_t more = std::max<int64_t>(0, reach - in - w.begin[i] - w.end[i]);
    widths.push_back({w.begin[i], w.end[i]});
    extra.push_back({0, more});
    any = any || w.begin[i] || w.end[i];
    any_extra = any_extra || more;
  }
  Tensor y = any ? pad(x, widths, value) : x;
  return any_extra ? pad(y, extra, overhang) : y;
}

// Calls f(slice) for each kernel position: the padded input's values under
// that position of every window, [N, C, out...].
template <class F>
void for_each_offset(const Tensor& padded, const Window& w, F&& f) {
  const size_t sp = w.kernel.size();
  std::vector<int64_t> pos(sp, 0);
  std::vector<IndexItem> items(sp + 2);
  for (;;) {
    for (size_t i = 0; i < sp; ++i) {
      const int64_t start = pos[i] * w.dilations[i];
      items[i + 2].start = start;
      items[i + 2].stop = start + (w.out[i] - 1) * w.strides[i] + 1;
      items[i + 2].step = w.strides[i];
    }
    f(index(padded, items), pos);
    size_t i = sp;
    while (i > 0 && ++pos[i - 1] == w.kernel[i - 1]) pos[--i] = 0;
    if (i == 0) return;
  }
}

// The sum of each window's values.
Tensor window_sum(const Tensor& padded, const Window& w) {
  Tensor total;
  for_each_offset(padded, w, [&](const Tensor& v, const std::vector<int64_t>&) {
    total = total.defined() ? add(total, v) : v;
  });
  return total;
}

bool symmetric_2d(const Window& w) {
  if (w.kernel.size() != 2) return false;
  for (size_t i = 0; i < 2; ++i)
    if (w.begin[i] != w.end[i]) return false;
  return true;
}

std::vector<int64_t> kernel_of(const NodeContext& n) {
  if (!n.has_attr("kernel_shape")) n.fail("attribute kernel_shape is missing");
  return n.attr_ints("kernel_shape");
}

double lowest(DType t) {
  switch (t) {
    case DType::i32: return double(std::numeric_limits<int32_t>::min());
    case DType::i64: return double(std::numeric_limits<int64_t>::min());
    case DType::boolean: return 0;
    default: return -std::numeric_limits<double>::infinity();
  }
}

// The optional second output: each maximum's position in x, flattened
// row-major (storage_order 0) or with each plane column-major (1).
Outs max_pool(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  const Window w = window_of(n, x, kernel_of(n), ceil_mode);
  const bool want_indices = n.node().output_size() > 1 && !n.node().output(1).empty();
  const int64_t storage = n.attr_int("storage_order", 0);
  if (storage != 0 && storage != 1) n.fail("attribute storage_order must be 0 or 1");
  bool fast = symmetric_2d(w) && !want_indices && w.dilations == std::vector<int64_t>{1, 1} && is_floating(x.dtype());
  if (fast)
    for (size_t i = 0; i < 2; ++i) fast = fast && 2 * w.begin[i] <= w.kernel[i] && !ceil_mode;
  if (fast)
    return {max_pool2d(x, {w.kernel[0], w.kernel[1]}, Pair{w.strides[0], w.strides[1]}, {w.begin[0], w.begin[1]})};
  const Tensor padded = pad_spatial(x, w, lowest(x.dtype()), lowest(x.dtype()));
  Tensor ids_padded;
  if (want_indices) {
    if (x.ndim() != 4 && storage == 1) n.fail("storage_order=1 needs a 2-d pool");
    std::vector<int64_t> ids(size_t(x.numel()));
    const int64_t plane = x.ndim() == 4 ? x.shape()[2] * x.shape()[3] : 1;
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (storage == 0) {
        ids[size_t(i)] = i;
      } else {
        const int64_t H = x.shape()[2], W = x.shape()[3], r = i % plane;
        ids[size_t(i)] = i - r + (r % W) * H + r / W;
      }
    }
    ids_padded = pad_spatial(from_ints(ids, x.shape(), DType::i64), w, -1, -1);
  }
  Tensor best, best_ids;
  for_each_offset(padded, w, [&](const Tensor& v, const std::vector<int64_t>& pos) {
    Tensor v_ids;
    if (want_indices) {
      std::vector<IndexItem> items(pos.size() + 2);
      for (size_t i = 0; i < pos.size(); ++i) {
        items[i + 2].start = pos[i] * w.dilations[i];
        items[i + 2].stop = *items[i + 2].start + (w.out[i] - 1) * w.strides[i] + 1;
        items[i + 2].step = w.strides[i];
      }
      v_ids = index(ids_padded, items);
    }
    if (!best.defined()) {
      best = v, best_ids = v_ids;
      return;
    }
    if (want_indices) {
      const Tensor take = gt(v, best);  // ties keep the first
      best_ids = where(take, v_ids, best_ids);
      best = where(take, v, best);
    } else {
      best = maximum(best, v);
    }
  });
  if (want_indices) return {best, best_ids};
  return {best};
}

Outs average_pool(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  const bool include_pad = n.attr_int("count_include_pad", 0) != 0;
  const Window w = window_of(n, x, kernel_of(n), ceil_mode);
  bool no_pads = true;
  for (size_t i = 0; i < w.kernel.size(); ++i) no_pads = no_pads && !w.begin[i] && !w.end[i];
  bool fast = symmetric_2d(w) && !ceil_mode && (include_pad || no_pads) && is_floating(x.dtype());
  if (fast)
    for (size_t i = 0; i < 2; ++i) fast = fast && 2 * w.begin[i] <= w.kernel[i] && w.dilations[i] == 1;
  if (fast)
    return {avg_pool2d(x, {w.kernel[0], w.kernel[1]}, Pair{w.strides[0], w.strides[1]}, {w.begin[0], w.begin[1]})};
  // The divisor per window: the positions inside the input, or inside the
  // padded input when count_include_pad (never the ceil-mode overhang).
  std::vector<int64_t> ones_shape{1, 1};
  for (size_t i = 0; i < w.kernel.size(); ++i) ones_shape.push_back(x.shape()[int(i + 2)]);
  const Tensor mask = pad_spatial(ones(Shape::of(ones_shape), x.dtype()), w, include_pad ? 1 : 0, 0);
  return {div(window_sum(pad_spatial(x, w, 0, 0), w), window_sum(mask, w))};
}

std::vector<int64_t> spatial_axes(const Tensor& x) {
  std::vector<int64_t> axes;
  for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
  return axes;
}
Outs global_average_pool(const NodeContext& n) { return {mean(n.input(0), spatial_axes(n.input(0)), true)}; }
Outs global_max_pool(const NodeContext& n) { return {max(n.input(0), spatial_axes(n.input(0)), true)}; }

// x [N, C, ...], w [O, C/group, k...]: 2-d through conv2d (asymmetric pads
// padded first), other ranks as a sum over kernel positions of a batched
// matmul per group.
Outs conv(const NodeContext& n) {
  const Tensor &x = n.input(0), &wt = n.input(1);
  if (wt.ndim() != x.ndim()) n.fail("the weight's rank differs from the input's");
  std::vector<int64_t> kernel;
  for (int i = 2; i < wt.ndim(); ++i) kernel.push_back(wt.shape()[i]);
  if (n.has_attr("kernel_shape") && n.attr_ints("kernel_shape") != kernel) n.fail("kernel_shape differs from the weight's");
  const Window w = window_of(n, x, kernel, false);
  const int64_t g = n.attr_int("group", 1);
  const int64_t N = x.shape()[0], C = x.shape()[1], O = wt.shape()[0];
  if (g < 1 || C % g || O % g || wt.shape()[1] * g != C) n.fail("channels do not match group=" + std::to_string(g));
  const Tensor b = n.has_input(2) ? n.input(2) : Tensor();
  if (kernel.size() == 2) {
    Tensor xp = x;
    Pair padding{0, 0};
    if (symmetric_2d(w)) padding = {w.begin[0], w.begin[1]};
    else xp = pad(x, {{0, 0}, {0, 0}, {w.begin[0], w.end[0]}, {w.begin[1], w.end[1]}}, 0);
    return {conv2d(xp, wt, b, {w.strides[0], w.strides[1]}, padding, {w.dilations[0], w.dilations[1]}, g)};
  }
  const Tensor padded = pad_spatial(x, w, 0, 0);
  int64_t P = 1;
  for (int64_t o : w.out) P *= o;
  // The weight as [g, O/g, C/g, positions].
  const Tensor wg = reshape(wt, {g, O / g, C / g, -1});
  Tensor y;
  int64_t k = 0;
  for_each_offset(padded, w, [&](const Tensor& v, const std::vector<int64_t>&) {
    const Tensor xs = reshape(v, {N, g, C / g, P});
    std::vector<IndexItem> items(4);
    items[3] = at(k++);
    const Tensor term = matmul(index(wg, items), xs);  // [g, O/g, C/g] @ [N, g, C/g, P] -> [N, g, O/g, P]
    y = y.defined() ? add(y, term) : term;
  });
  std::vector<int64_t> out{N, O};
  out.insert(out.end(), w.out.begin(), w.out.end());
  y = reshape(y, out);
  if (b.defined()) {
    std::vector<int64_t> bshape(out.size(), 1);
    bshape[1] = O;
    y = add(y, reshape(b, bshape));
  }
  return {y};
}

Outs gemm(const NodeContext& n) {
  Tensor a = n.input(0), b = n.input(1);
  if (a.ndim() != 2 || b.ndim() != 2) n.fail("A and B must be 2-d");
  if (n.attr_int("transA", 0)) a = transpose(a);
  if (n.attr_int("transB", 0)) b = transpose(b);
  Tensor y = matmul(a, b);
  const double alpha = n.attr_float("alpha", 1), beta = n.attr_float("beta", 1);
  if (alpha != 1) y = mul(y, like(alpha, y));
  if (n.has_input(2)) {
    const Tensor c = n.input(2);
    y = add(y, beta == 1 ? c : mul(c, like(beta, c)));
  }
  return {y};
}

const ImportEntry entries[] = {
    {"Conv", conv},
    {"MaxPool", max_pool},
    {"AveragePool", average_pool},
    {"GlobalAveragePool", global_average_pool},
    {"GlobalMaxPool", global_max_pool},
    {"Gemm", gemm},
};

}  // namespace

std::span<const ImportEntry> conv_imports() { return entries; }

}  // namespace nn::onnx_io
