// Import entries of the ops that address elements by index lists
// (import_table.h): ScatterElements, GatherND, ReverseSequence, NonZero,
// Unique, MaxUnpool and NonMaxSuppression.
// Positions are turned into flat offsets into the data, worked out from the
// shapes on the host, so one 1-d scatter or gather does the work.
#include <algorithm>
#include <array>

#include "backend/ops.h"
#include "backend/untraced.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Negative indices count from the end of their axis.
Tensor wrap(const Tensor& ids, const Tensor& dims) {
  const Tensor i = astype(ids, DType::i64);
  return where(lt(i, scalar_int(0)), add(i, dims), i);
}

// Whether an index, negative ones counted from the end, lies outside its
// axis (dims: the axes' lengths, broadcast against ids). Out-of-range
// indices would land in another row, so they are refused; the check reads
// them on the host, eagerly, which a graph being traced allows for constant
// indices and not for ones computed from its inputs.
bool out_of_range(const NodeContext& n, const Tensor& ids, const std::vector<int64_t>& dims) {
  if (ids.is_traced())
    n.fail("its indices are computed from the graph's inputs: nn checks their range on the host, so it runs this "
           "node eagerly only");
  backend::Untraced eager;
  const Tensor d = from_ints(dims, Shape{int64_t(dims.size())}, DType::i64);
  const Tensor w = wrap(ids, d);
  return max(astype(logical_or(lt(w, scalar_int(0)), ge(w, d)), DType::i64)).item_int() != 0;
}

// data with updates written (reduction none) or added (add) at the
// positions that indices name along `axis`; elsewhere indices' position.
Outs scatter_elements(const NodeContext& n) {
  const Tensor &data = n.input(0), &ids = n.input(1), &upd = n.input(2);
  const int64_t r = data.ndim();
  if (ids.ndim() != r || upd.shape() != ids.shape()) n.fail("indices and updates must have one shape, of data's rank");
  const int64_t axis = norm_axis(n, n.attr_int("axis", 0), r);
  const std::string reduction = n.attr_str("reduction", "none");
  if (reduction != "none" && reduction != "add") n.fail("attribute reduction=" + reduction + " is not supported");
  const auto dd = dims_of(data), id = dims_of(ids);
  for (int64_t k = 0; k < r; ++k)
    if (k != axis && id[size_t(k)] > dd[size_t(k)]) n.fail("indices are larger than data along axis " + std::to_string(k));
  // The flat offset of each index element, less its own axis's part.
  const auto ds = strides_of(dd);
  std::vector<int64_t> base(size_t(ids.numel()));
  std::vector<int64_t> c(size_t(r), 0);
  for (size_t e = 0; e < base.size(); ++e) {
    int64_t off = 0;
    for (int64_t k = 0; k < r; ++k)
      if (k != axis) off += c[size_t(k)] * ds[size_t(k)];
    base[e] = off;
    for (int64_t k = r - 1; k >= 0 && ++c[size_t(k)] == id[size_t(k)]; --k) c[size_t(k)] = 0;
  }
  const Tensor w = wrap(ids, scalar_int(dd[size_t(axis)]));
  if (ids.numel() && out_of_range(n, ids, {dd[size_t(axis)]}))
    n.fail("an index is out of range for axis " + std::to_string(axis));
  const Tensor lin = add(from_ints(base, Shape{ids.numel()}, DType::i64),
                         mul(reshape(w, {ids.numel()}), scalar_int(ds[size_t(axis)])));
  const Tensor flat = reshape(data, {data.numel()}), u = reshape(astype(upd, data.dtype()), {upd.numel()});
  if (reduction == "add") return {reshape(scatter_add(flat, lin, u, 0), dd)};
  const Tensor hit = gt(scatter_add(zeros(flat.shape(), DType::i64), lin, ones(u.shape(), DType::i64), 0), scalar_int(0));
  return {reshape(where(hit, scatter_add(zeros(flat.shape(), data.dtype()), lin, u, 0), flat), dd)};
}

// data [B..., d..., rest...], indices [B..., m..., k] (B the batch_dims
// axes): out[B, m] = data[B, indices[B, m]], [B..., m..., rest...].
Outs gather_nd(const NodeContext& n) {
  const Tensor &data = n.input(0), &ids = n.input(1);
  const int64_t b = n.attr_int("batch_dims", 0);
  if (ids.ndim() < 1) n.fail("indices must have rank 1 or more");
  const int64_t k = ids.shape()[ids.ndim() - 1];
  if (b < 0 || b >= ids.ndim() || b + k > data.ndim()) n.fail("batch_dims and the index length do not fit the data");
  const auto dd = dims_of(data), id = dims_of(ids);
  int64_t batches = 1, block = 1;
  for (int64_t i = 0; i < b; ++i) {
    if (dd[size_t(i)] != id[size_t(i)]) n.fail("data and indices differ along batch axis " + std::to_string(i));
    batches *= dd[size_t(i)];
  }
  std::vector<int64_t> indexed(dd.begin() + b, dd.begin() + b + k), rest(dd.begin() + b + k, dd.end());
  for (int64_t d : indexed) block *= d;
  const int64_t lookups = ids.numel() / std::max<int64_t>(k, 1);
  // Each lookup's batch offset, then its position inside the batch.
  std::vector<int64_t> batch_off(static_cast<size_t>(lookups));
  const int64_t per_batch = batches ? lookups / batches : 0;
  for (int64_t i = 0; i < lookups; ++i) batch_off[size_t(i)] = per_batch ? (i / per_batch) * block : 0;
  Tensor lin = from_ints(batch_off, Shape{lookups}, DType::i64);
  if (k > 0) {
    const Tensor dims_t = from_ints(indexed, Shape{k}, DType::i64);
    const Tensor w = wrap(reshape(ids, {lookups, k}), dims_t);
    if (lookups && out_of_range(n, ids, indexed)) n.fail("an index is out of range");
    lin = add(lin, sum(mul(w, from_ints(strides_of(indexed), Shape{k}, DType::i64)), std::vector<int64_t>{1}));
  }
  std::vector<int64_t> flat_dims{batches * block};
  flat_dims.insert(flat_dims.end(), rest.begin(), rest.end());
  std::vector<int64_t> out(id.begin(), id.end() - 1);
  out.insert(out.end(), rest.begin(), rest.end());
  return {reshape(index_select(reshape(data, flat_dims), lin, 0), out)};
}

// The first sequence_lens[b] steps of each batch entry reversed in time.
Outs reverse_sequence(const NodeContext& n) {
  const Tensor& x = n.input(0);
  if (x.ndim() < 2) n.fail("needs an input of rank 2 or more");
  const int64_t ta = n.attr_int("time_axis", 0), ba = n.attr_int("batch_axis", 1);
  if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0))) n.fail("time_axis and batch_axis must be 0 and 1");
  const auto lens = n.ints(1);
  const int64_t T = x.shape()[int(ta)], B = x.shape()[int(ba)];
  if (int64_t(lens.size()) != B) n.fail("sequence_lens must have one entry per batch entry");
  std::vector<int64_t> ids(size_t(T * B));
  for (int64_t bi = 0; bi < B; ++bi) {
    if (lens[size_t(bi)] < 0 || lens[size_t(bi)] > T) n.fail("a sequence length is out of range");
    for (int64_t t = 0; t < T; ++t) {
      const int64_t src = t < lens[size_t(bi)] ? lens[size_t(bi)] - 1 - t : t;
      ids[size_t(ta == 0 ? t * B + bi : bi * T + t)] = src;
    }
  }
  std::vector<int64_t> shape(size_t(x.ndim()), 1);
  shape[size_t(ta)] = T, shape[size_t(ba)] = B;
  return {gather(x, from_ints(ids, Shape::of(shape), DType::i64), ta)};
}

// The positions of the non-zero elements, [rank, count]: the count depends
// on the values, so the input must be known (it is read on the host).
Outs non_zero(const NodeContext& n) {
  const Tensor& x = n.input(0);
  if (x.ndim() == 0) n.fail("needs an input of rank 1 or more");
  const auto v = n.numbers(0);
  const auto dims = dims_of(x);
  std::vector<std::vector<int64_t>> coords(dims.size());
  std::vector<int64_t> c(dims.size(), 0);
  for (size_t e = 0; e < v.size(); ++e) {
    if (v[e] != 0)
      for (size_t k = 0; k < dims.size(); ++k) coords[k].push_back(c[k]);
    for (size_t k = dims.size(); k-- > 0 && ++c[k] == dims[k];) c[k] = 0;
  }
  const int64_t count = int64_t(coords[0].size());
  std::vector<int64_t> flat;
  for (const auto& row : coords) flat.insert(flat.end(), row.begin(), row.end());
  return {from_ints(flat, Shape{int64_t(dims.size()), count}, DType::i64)};
}

// The distinct elements (or slices along `axis`), sorted or in order of
// first appearance, with each one's first position, each element's entry in
// the result, and the counts. Values decide the shapes: read on the host.
Outs unique_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const bool sorted = n.attr_int("sorted", 1) != 0;
  const bool has_axis = n.has_attr("axis");
  const int64_t axis = has_axis ? norm_axis(n, n.attr_int("axis", 0), x.ndim()) : 0;
  const Tensor flat = has_axis ? x : reshape(x, {x.numel()});
  const auto dims = dims_of(flat);
  const int64_t len = dims.empty() ? 1 : dims[size_t(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < int64_t(dims.size()); ++k) {
    if (k < axis) outer *= dims[size_t(k)];
    if (k > axis) inner *= dims[size_t(k)];
  }
  // Each slice's values as exact keys: integers as integers, floats as doubles.
  const bool ints = !is_floating(x.dtype());
  const auto iv = ints ? n.ints(0) : std::vector<int64_t>{};
  const auto dv = ints ? std::vector<double>{} : n.numbers(0);
  // Element k of slice s, in row-major order over (outer, inner).
  auto pos = [&](int64_t s, int64_t k) { return size_t(((k / inner) * len + s) * inner + k % inner); };
  const int64_t width = outer * inner;
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t k = 0; k < width; ++k) {
      const size_t pa = pos(a, k), pb = pos(b, k);
      if (ints ? iv[pa] != iv[pb] : dv[pa] != dv[pb]) return ints ? iv[pa] < iv[pb] : dv[pa] < dv[pb];
    }
    return false;
  };
  auto same = [&](int64_t a, int64_t b) { return !less(a, b) && !less(b, a); };
  std::vector<int64_t> first;  // slice index of each distinct slice, by first appearance
  std::vector<int64_t> inverse(static_cast<size_t>(len)), counts;
  for (int64_t s = 0; s < len; ++s) {
    size_t j = 0;
    while (j < first.size() && !same(first[j], s)) ++j;
    if (j == first.size()) first.push_back(s), counts.push_back(0);
    inverse[size_t(s)] = int64_t(j);
    ++counts[j];
  }
  std::vector<size_t> order(first.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = j;
  if (sorted) std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return less(first[a], first[b]); });
  std::vector<int64_t> rank(order.size()), picks, idx, cnt;
  for (size_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = int64_t(r);
    picks.push_back(first[order[r]]), idx.push_back(first[order[r]]), cnt.push_back(counts[order[r]]);
  }
  for (auto& v : inverse) v = rank[size_t(v)];
  const int64_t u = int64_t(picks.size());
  const Tensor y = index_select(flat, from_ints(picks, Shape{u}, DType::i64), axis);
  return {y, from_ints(idx, Shape{u}, DType::i64), from_ints(inverse, Shape{len}, DType::i64),
          from_ints(cnt, Shape{u}, DType::i64)};
}

// x's values written at the flat positions of `indices` (MaxPool's second
// output) into zeros of the unpooled shape.
Outs max_unpool(const NodeContext& n) {
  const Tensor &x = n.input(0), &ids = n.input(1);
  if (x.ndim() < 3 || ids.shape() != x.shape()) n.fail("needs X [N, C, ...] and indices of its shape");
  const int64_t sp = x.ndim() - 2;
  const auto kernel = n.attr_ints("kernel_shape");
  const auto strides = n.attr_ints("strides", std::vector<int64_t>(size_t(sp), 1));
  const auto pads = n.attr_ints("pads", std::vector<int64_t>(size_t(2 * sp), 0));
  if (int64_t(kernel.size()) != sp || int64_t(strides.size()) != sp || int64_t(pads.size()) != 2 * sp)
    n.fail("kernel_shape, strides and pads must match the spatial rank");
  // The indices count in the unpooled shape the geometry gives; an explicit
  // output_shape keeps each position's coordinates.
  std::vector<int64_t> geo{x.shape()[0], x.shape()[1]};
  for (int64_t i = 0; i < sp; ++i)
    geo.push_back((x.shape()[int(i + 2)] - 1) * strides[size_t(i)] - pads[size_t(i)] - pads[size_t(i + sp)] +
                  kernel[size_t(i)]);
  const std::vector<int64_t> out = n.has_input(2) ? n.ints(2) : geo;
  if (int64_t(out.size()) != x.ndim()) n.fail("output_shape must have the input's rank");
  int64_t total = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k] < 0 || geo[k] < 0) n.fail("negative output size");
    if (k >= 2 && out[k] < geo[k]) n.fail("output_shape is smaller than the unpooled shape");
    total *= out[k];
  }
  Tensor flat_ids = reshape(astype(ids, DType::i64), {ids.numel()});
  if (out != geo) {
    Tensor rest = flat_ids, moved = scalar_int(0);
    int64_t scale = 1;
    for (int64_t k = x.ndim() - 1; k >= 2; --k) {
      moved = add(moved, mul(mod(rest, scalar_int(geo[size_t(k)])), scalar_int(scale)));
      rest = floordiv(rest, scalar_int(geo[size_t(k)]));
      scale *= out[size_t(k)];
    }
    flat_ids = add(moved, mul(rest, scalar_int(scale)));
  }
  return {reshape(scatter_add(zeros(Shape{total}, x.dtype()), flat_ids, reshape(x, {x.numel()}), 0), out)};
}

// Greedy non-maximum suppression per batch and class: boxes in descending
// score order, each kept unless its IoU with a kept one exceeds the
// threshold. The count depends on the values: computed on the host.
Outs non_max_suppression(const NodeContext& n) {
  const Tensor &boxes = n.input(0), &scores = n.input(1);
  if (boxes.ndim() != 3 || boxes.shape()[2] != 4 || scores.ndim() != 3 || scores.shape()[0] != boxes.shape()[0] ||
      scores.shape()[2] != boxes.shape()[1])
    n.fail("needs boxes [B, N, 4] and scores [B, C, N]");
  const int64_t B = boxes.shape()[0], N = boxes.shape()[1], C = scores.shape()[1];
  const int64_t max_out = n.has_input(2) ? one_int(n, 2) : 0;
  const double iou_max = n.has_input(3) ? one_number(n, 3) : 0;
  const bool has_min = n.has_input(4);
  const double score_min = has_min ? one_number(n, 4) : 0;
  const int64_t center = n.attr_int("center_point_box", 0);
  if (center != 0 && center != 1) n.fail("attribute center_point_box must be 0 or 1");
  const auto bx = n.numbers(0), sc = n.numbers(1);
  // A box as (y1, x1, y2, x2) with y1 <= y2, x1 <= x2.
  auto corners = [&](int64_t b, int64_t i) {
    const double* v = &bx[size_t((b * N + i) * 4)];
    if (center) return std::array<double, 4>{v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
    return std::array<double, 4>{std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
  };
  auto iou = [](const std::array<double, 4>& a, const std::array<double, 4>& c) {
    const double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_c = (c[2] - c[0]) * (c[3] - c[1]);
    if (area_a <= 0 || area_c <= 0) return 0.0;
    const double h = std::max(0.0, std::min(a[2], c[2]) - std::max(a[0], c[0]));
    const double w = std::max(0.0, std::min(a[3], c[3]) - std::max(a[1], c[1]));
    const double inter = h * w;
    return inter / (area_a + area_c - inter);
  };
  std::vector<int64_t> out;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      std::vector<int64_t> order;
      for (int64_t i = 0; i < N; ++i)
        if (!has_min || sc[size_t((b * C + c) * N + i)] > score_min) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
        return sc[size_t((b * C + c) * N + i)] > sc[size_t((b * C + c) * N + j)];
      });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= max_out) break;
        bool keep = true;
        for (int64_t k : kept) keep = keep && !(iou(corners(b, i), corners(b, k)) > iou_max);
        if (keep) kept.push_back(i), out.insert(out.end(), {b, c, i});
      }
    }
  return {from_ints(out, Shape{int64_t(out.size() / 3), 3}, DType::i64)};
}

const ImportEntry entries[] = {
    {"ScatterElements", scatter_elements},
    {"Scatter", scatter_elements},  // deprecated: ScatterElements without reduction
    {"GatherND", gather_nd},
    {"ReverseSequence", reverse_sequence},
    {"NonZero", non_zero},
    {"Unique", unique_entry},
    {"MaxUnpool", max_unpool},
    {"NonMaxSuppression", non_max_suppression},
};

}  // namespace

std::span<const ImportEntry> scatter_imports() { return entries; }

}  // namespace nn::onnx_io
