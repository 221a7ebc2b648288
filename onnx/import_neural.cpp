// Import entries of the neural ops nn has no kernel for (import_table.h):
// ConvTranspose, composed per kernel position as a batched matmul whose
// result is spread out by the stride and added in at its offset.
#include "backend/nn_ops.h"
#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

// t with s - 1 zeros after each element along `axis` (the last one's dropped).
Tensor spread(const Tensor& t, int64_t axis, int64_t s) {
  if (s == 1) return t;
  const int64_t len = t.shape()[int(axis)];
  Tensor u = unsqueeze(t, axis + 1);
  std::vector<std::pair<int64_t, int64_t>> widths(size_t(axis + 2), {0, 0});
  widths[size_t(axis + 1)] = {0, s - 1};
  auto dims = dims_of(t);
  dims[size_t(axis)] = len * s;
  u = reshape(pad(u, widths, 0), dims);
  std::vector<IndexItem> items(size_t(axis + 1));
  items[size_t(axis)].stop = (len - 1) * s + 1;
  return index(u, items);
}

// x [N, C, in...], w [C, O/group, k...] -> y [N, O, out...].
Outs conv_transpose(const NodeContext& n) {
  const Tensor &x = n.input(0), &w = n.input(1);
  const int64_t sp = x.ndim() - 2;
  if (sp < 1 || w.ndim() != x.ndim()) n.fail("needs x [N, C, ...] and a weight of the same rank");
  const int64_t N = x.shape()[0], C = x.shape()[1], g = n.attr_int("group", 1);
  if (g < 1 || C % g || w.shape()[0] != C) n.fail("channels do not match group=" + std::to_string(g));
  const int64_t O = w.shape()[1] * g;
  std::vector<int64_t> kernel, in;
  for (int64_t i = 0; i < sp; ++i) kernel.push_back(w.shape()[int(i + 2)]), in.push_back(x.shape()[int(i + 2)]);
  if (n.has_attr("kernel_shape") && n.attr_ints("kernel_shape") != kernel) n.fail("kernel_shape differs from the weight's");
  const auto ones_sp = std::vector<int64_t>(size_t(sp), 1);
  const auto strides = n.attr_ints("strides", ones_sp), dil = n.attr_ints("dilations", ones_sp);
  const auto out_pad = n.attr_ints("output_padding", std::vector<int64_t>(size_t(sp), 0));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(size_t(2 * sp), 0));
  if (int64_t(strides.size()) != sp || int64_t(dil.size()) != sp || int64_t(out_pad.size()) != sp ||
      int64_t(pads.size()) != 2 * sp)
    n.fail("strides, dilations, output_padding and pads must match the spatial rank");
  const std::string auto_pad = n.attr_str("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    n.fail("attribute auto_pad=" + auto_pad + " is not supported");
  std::vector<int64_t> full(static_cast<size_t>(sp)), out_shape = n.attr_ints("output_shape");
  if (out_shape.size() == size_t(sp + 2)) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && int64_t(out_shape.size()) != sp) n.fail("output_shape must match the spatial rank");
  for (int64_t i = 0; i < sp; ++i) {
    full[size_t(i)] = strides[size_t(i)] * (in[size_t(i)] - 1) + out_pad[size_t(i)] + (kernel[size_t(i)] - 1) * dil[size_t(i)] + 1;
    int64_t want = -1;
    if (!out_shape.empty()) want = out_shape[size_t(i)];
    else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") want = in[size_t(i)] * strides[size_t(i)];
    if (auto_pad == "VALID") pads[size_t(i)] = pads[size_t(i + sp)] = 0;
    if (want >= 0) {  // ONNX's rule: the extra padding goes at the end unless SAME_UPPER
      const int64_t total = full[size_t(i)] - want;
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor, as ONNX's reference
      pads[size_t(i)] = auto_pad == "SAME_UPPER" ? half : total - half;
      pads[size_t(i + sp)] = total - pads[size_t(i)];
    }
  }
  // Per kernel position: [g, O/g, C/g] @ [N, g, C/g, P] -> [N, g, O/g, P].
  int64_t P = 1, K = 1;
  for (int64_t i = 0; i < sp; ++i) P *= in[size_t(i)], K *= kernel[size_t(i)];
  const Tensor xs = reshape(x, {N, g, C / g, P});
  const Tensor wk = permute(reshape(w, {g, C / g, O / g, K}), {3, 0, 2, 1});  // [K, g, O/g, C/g]
  std::vector<int64_t> y_dims{N, O};
  y_dims.insert(y_dims.end(), full.begin(), full.end());
  Tensor y = zeros(Shape::of(y_dims), x.dtype());
  std::vector<int64_t> pos(size_t(sp), 0);
  for (int64_t k = 0; k < K; ++k) {
    std::vector<int64_t> t_dims{N, O};
    t_dims.insert(t_dims.end(), in.begin(), in.end());
    Tensor t = reshape(matmul(index(wk, {at(k)}), xs), t_dims);
    std::vector<std::pair<int64_t, int64_t>> widths{{0, 0}, {0, 0}};
    for (int64_t i = 0; i < sp; ++i) {
      t = spread(t, i + 2, strides[size_t(i)]);
      const int64_t before = pos[size_t(i)] * dil[size_t(i)];
      widths.push_back({before, full[size_t(i)] - before - t.shape()[int(i + 2)]});
    }
    y = add(y, pad(t, widths, 0));
    for (int64_t i = sp - 1; i >= 0 && ++pos[size_t(i)] == kernel[size_t(i)]; --i) pos[size_t(i)] = 0;
  }
  // Crop the pads (a negative pad adds zeros).
  std::vector<IndexItem> crop(static_cast<size_t>(sp + 2));
  std::vector<std::pair<int64_t, int64_t>> grow{{0, 0}, {0, 0}};
  bool growing = false;
  for (int64_t i = 0; i < sp; ++i) {
    const int64_t b = pads[size_t(i)], e = pads[size_t(i + sp)];
    crop[size_t(i + 2)].start = std::max<int64_t>(b, 0);
    crop[size_t(i + 2)].stop = full[size_t(i)] - std::max<int64_t>(e, 0);
    grow.push_back({std::max<int64_t>(-b, 0), std::max<int64_t>(-e, 0)});
    growing = growing || b < 0 || e < 0;
  }
  y = index(y, crop);
  if (growing) y = pad(y, grow, 0);
  if (n.has_input(2)) {
    std::vector<int64_t> bshape(size_t(x.ndim()), 1);
    bshape[1] = O;
    y = add(y, reshape(n.input(2), bshape));
  }
  return {y};
}

const ImportEntry entries[] = {
    {"ConvTranspose", conv_transpose},
};

}  // namespace

std::span<const ImportEntry> neural_imports() { return entries; }

}  // namespace nn::onnx_io
