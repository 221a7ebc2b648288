// Import entries of the indexing ops (import_table.h): slices, gathers,
// padding, one-hot, triangles and running sums.
#include <limits>

#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

// ONNX clamps a start to [0, dim] ([0, dim - 1] stepping back) and an end to
// [0, dim] ([-1, dim - 1] stepping back, -1 meaning before the first): given
// to nn's Python-style slice as non-negative numbers, or no stop for -1.
IndexItem slice_item(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  IndexItem it;
  it.step = step;
  if (step > 0) {
    it.start = std::clamp(start, int64_t(0), dim);
    it.stop = std::clamp(end, int64_t(0), dim);
  } else {
    it.start = std::clamp(start, int64_t(0), std::max<int64_t>(dim - 1, 0));
    const int64_t stop = std::clamp(end, int64_t(-1), dim - 1);
    if (dim == 0) it.start = it.stop = 0;
    else if (stop >= 0) it.stop = stop;
  }
  return it;
}

Outs slice_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset() < 10) {
    starts = n.attr_ints("starts"), ends = n.attr_ints("ends"), axes = n.attr_ints("axes");
  } else {
    starts = n.ints(1), ends = n.ints(2);
    if (n.has_input(3)) axes = n.ints(3);
    if (n.has_input(4)) steps = n.ints(4);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    n.fail("starts, ends, axes and steps differ in length");
  std::vector<IndexItem> items(size_t(x.ndim()));
  std::vector<bool> seen(size_t(x.ndim()), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = norm_axis(n, axes[i], x.ndim());
    if (seen[size_t(a)]) n.fail("axis " + std::to_string(axes[i]) + " is repeated");
    seen[size_t(a)] = true;
    if (steps[i] == 0) n.fail("step must not be 0");
    items[size_t(a)] = slice_item(starts[i], ends[i], steps[i], x.shape()[int(a)]);
  }
  return {index(x, items)};
}

// Negative indices count from the end of the axis. One below -dim is left
// as written, so that the op's range error names the index the model gave.
Tensor wrap_ids(const Tensor& ids, int64_t dim) {
  const Tensor i = astype(ids, DType::i64);
  return where(logical_and(lt(i, scalar_int(0)), ge(i, scalar_int(-dim))), add(i, scalar_int(dim)), i);
}

// np.take: x.shape[:axis] + ids.shape + x.shape[axis+1:].
Outs gather_entry(const NodeContext& n) {
  const Tensor &x = n.input(0), &ids = n.input(1);
  const int64_t axis = norm_axis(n, n.attr_int("axis", 0), x.ndim());
  const Tensor picked = index_select(x, reshape(wrap_ids(ids, x.shape()[int(axis)]), {ids.numel()}), axis);
  std::vector<int64_t> out;
  const auto xd = dims_of(x), id = dims_of(ids);
  out.insert(out.end(), xd.begin(), xd.begin() + axis);
  out.insert(out.end(), id.begin(), id.end());
  out.insert(out.end(), xd.begin() + axis + 1, xd.end());
  return {reshape(picked, out)};
}

// The indices' shape is the result's; along the other axes they may be
// shorter than x, which takes x's leading part there.
Outs gather_elements(const NodeContext& n) {
  const Tensor &x = n.input(0), &ids = n.input(1);
  if (ids.ndim() != x.ndim()) n.fail("indices must have the data's rank");
  const int64_t axis = norm_axis(n, n.attr_int("axis", 0), x.ndim());
  std::vector<IndexItem> items(size_t(x.ndim()));
  for (int d = 0; d < x.ndim(); ++d) {
    if (d == axis) continue;
    if (ids.shape()[d] > x.shape()[d]) n.fail("indices are larger than the data along axis " + std::to_string(d));
    items[size_t(d)].stop = ids.shape()[d];
  }
  return {gather(index(x, items), wrap_ids(ids, x.shape()[int(axis)]), axis)};
}

// One axis padded by picking source positions: edge repeats the border,
// reflect mirrors without repeating it.
Tensor pad_by_index(const NodeContext& n, const Tensor& x, int64_t axis, int64_t before, int64_t after,
                    const std::string& mode) {
  const int64_t dim = x.shape()[int(axis)];
  if (dim == 0) n.fail("cannot pad an empty axis in " + mode + " mode");
  if (mode == "reflect" && dim == 1) n.fail("cannot reflect an axis of size 1");
  int64_t rows = 0;
  if (__builtin_add_overflow(dim, before, &rows) || __builtin_add_overflow(rows, after, &rows))
    n.fail("pads of " + std::to_string(before) + " and " + std::to_string(after) + " make axis " +
           std::to_string(axis) + " longer than 2^63");
  // The positions' own memory is counted as a tensor's: a pad too large for
  // it is out of memory, said before any of it is filled.
  Tensor src = Tensor::empty(Shape{rows}, DType::i64);
  int64_t* at = src.data<int64_t>();
  for (int64_t k = 0; k < rows; ++k) {
    const int64_t i = k - before;
    int64_t j = i;
    if (mode == "edge") {
      j = std::clamp(i, int64_t(0), dim - 1);
    } else {
      const int64_t period = 2 * (dim - 1);
      j = ((i % period) + period) % period;
      if (j >= dim) j = period - j;
    }
    at[k] = j;
  }
  return index_select(x, src, axis);
}

Outs pad_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const std::string mode = n.attr_str("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") n.fail("attribute mode=" + mode + " is not supported");
  std::vector<int64_t> pads = n.opset() < 11 ? n.attr_ints("pads") : n.ints(1);
  double value = n.attr_float("value", 0);
  if (n.opset() >= 11 && n.has_input(2)) value = one_number(n, 2);
  const int64_t r = x.ndim();
  if (int64_t(pads.size()) != 2 * r) n.fail("pads must hold 2 * rank numbers");
  // Negative pads crop first.
  std::vector<IndexItem> crop(static_cast<size_t>(r));
  bool cropping = false;
  for (int64_t d = 0; d < r; ++d) {
    const int64_t dim = x.shape()[int(d)];
    // A crop of more than the axis holds (-2^63 included, which cannot be
    // negated) leaves nothing of it to pad.
    for (int64_t side : {d, d + r})
      if (pads[size_t(side)] < -dim)
        n.fail("pad " + std::to_string(pads[size_t(side)]) + " crops more than axis " + std::to_string(d) + "'s " +
               std::to_string(dim));
    if (pads[size_t(d)] < 0) crop[size_t(d)].start = -pads[size_t(d)], cropping = true, pads[size_t(d)] = 0;
    if (pads[size_t(d + r)] < 0) crop[size_t(d)].stop = dim + pads[size_t(d + r)], cropping = true, pads[size_t(d + r)] = 0;
  }
  Tensor y = cropping ? index(x, crop) : x;
  if (mode == "constant") {
    std::vector<std::pair<int64_t, int64_t>> widths;
    for (int64_t d = 0; d < r; ++d) widths.push_back({pads[size_t(d)], pads[size_t(d + r)]});
    return {pad(y, widths, value)};
  }
  for (int64_t d = 0; d < r; ++d)
    if (pads[size_t(d)] || pads[size_t(d + r)]) y = pad_by_index(n, y, d, pads[size_t(d)], pads[size_t(d + r)], mode);
  return {y};
}

// values = [off, on]; an index outside [-depth, depth) gives a row of off.
Outs one_hot_entry(const NodeContext& n) {
  const Tensor &ids = n.input(0), &values = n.input(2);
  const auto depths = n.numbers(1);
  if (depths.size() != 1) n.fail("depth must hold one number");
  const int64_t depth = int64_t(depths[0]);
  if (depth < 1) n.fail("depth must be positive");
  if (values.numel() != 2) n.fail("values must hold two numbers");
  const int64_t axis = norm_axis(n, n.attr_int("axis", -1), ids.ndim() + 1);
  const Tensor i = wrap_ids(astype(ids, DType::i64), depth);
  std::vector<int64_t> shape(size_t(ids.ndim() + 1), 1);
  shape[size_t(axis)] = depth;
  const Tensor classes = reshape(arange(0, double(depth), 1, DType::i64), shape);
  const Tensor hit = eq(unsqueeze(i, axis), classes);
  const Tensor off = reshape(index(values, {at(0)}), {});
  const Tensor on = reshape(index(values, {at(1)}), {});
  return {where(hit, on, off)};
}

Outs trilu_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const int64_t k = n.has_input(1) ? one_int(n, 1) : 0;
  return {n.attr_int("upper", 1) ? triu(x, k) : tril(x, k)};
}

Tensor flip(const Tensor& x, int64_t axis) {
  IndexItem it;
  it.step = -1;
  std::vector<IndexItem> items(size_t(axis + 1));
  items[size_t(axis)] = it;
  return index(x, items);
}

// exclusive shifts the input one place along the axis (a zero first).
Outs cumsum_entry(const NodeContext& n) {
  Tensor x = n.input(0);
  const auto a = n.ints(1);
  if (a.size() != 1) n.fail("axis must hold one number");
  const int64_t axis = norm_axis(n, a[0], x.ndim());
  const bool reverse = n.attr_int("reverse", 0) != 0, exclusive = n.attr_int("exclusive", 0) != 0;
  if (reverse) x = flip(x, axis);
  if (exclusive && x.shape()[int(axis)] > 0) {
    std::vector<IndexItem> items(size_t(axis + 1));
    items[size_t(axis)].stop = x.shape()[int(axis)] - 1;
    std::vector<std::pair<int64_t, int64_t>> widths(size_t(axis + 1), {0, 0});
    widths[size_t(axis)] = {1, 0};
    x = pad(index(x, items), widths, 0);
  }
  Tensor y = astype(cumsum(x, axis), x.dtype());
  if (reverse) y = flip(y, axis);
  return {y};
}

// The slices along axis where condition holds (condition may be shorter).
Outs compress_entry(const NodeContext& n) {
  Tensor x = n.input(0);
  const auto cond = n.ints(1);
  int64_t axis = 0;
  if (n.has_attr("axis")) {
    axis = norm_axis(n, n.attr_int("axis", 0), x.ndim());
  } else {
    x = reshape(x, {x.numel()});
  }
  std::vector<int64_t> keep;
  for (size_t i = 0; i < cond.size() && int64_t(i) < x.shape()[int(axis)]; ++i)
    if (cond[i]) keep.push_back(int64_t(i));
  return {index_select(x, from_ints(keep, Shape{int64_t(keep.size())}, DType::i64), axis)};
}

const ImportEntry entries[] = {
    {"Slice", slice_entry},
    {"Gather", gather_entry},
    {"GatherElements", gather_elements},
    {"Pad", pad_entry},
    {"OneHot", one_hot_entry},
    {"Trilu", trilu_entry},
    {"CumSum", cumsum_entry},
    {"Compress", compress_entry},
};

}  // namespace

std::span<const ImportEntry> index_imports() { return entries; }

}  // namespace nn::onnx_io
