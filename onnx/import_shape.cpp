// Import entries of the shape ops (import_table.h): constants, shape
// queries, reshapes, permutations, joins and splits. Sizes that decide the
// result's shape are read with NodeContext::ints.
#include "backend/ops.h"
#include "onnx/import_table.h"
#include "onnx/import_util.h"
#include "onnx/tensor_proto.h"

namespace nn::onnx_io {
namespace {

using namespace backend;

Outs constant(const NodeContext& n) {
  if (n.has_attr("value")) return {n.attr_tensor("value")};
  if (n.has_attr("value_float")) return {scalar(n.attr_float("value_float", 0), DType::f32)};
  if (n.has_attr("value_int")) return {scalar_int(n.attr_int("value_int", 0), DType::i64)};
  if (n.has_attr("value_floats")) {
    const auto v = n.attr_floats("value_floats");
    return {from_doubles(v, Shape{int64_t(v.size())}, DType::f32)};
  }
  if (n.has_attr("value_ints")) {
    const auto v = n.attr_ints("value_ints");
    return {from_ints(v, Shape{int64_t(v.size())}, DType::i64)};
  }
  n.fail("only tensor, float and int values are supported (not strings or sparse tensors)");
}

Outs constant_of_shape(const NodeContext& n) {
  const auto dims = n.ints(0);
  for (int64_t d : dims)
    if (d < 0) n.fail("negative dimension in the shape");
  Tensor v = n.has_attr("value") ? n.attr_tensor("value") : scalar(0, DType::f32);
  if (v.numel() != 1) n.fail("attribute value must hold one element");
  const Tensor one = reshape(v, {});
  return {add(zeros(Shape::of(dims), v.dtype()), one)};
}

// Shape's start and end clamp to [0, rank] after adding rank to negatives.
Outs shape_entry(const NodeContext& n) {
  const auto dims = dims_of(n.input(0));
  const int64_t r = int64_t(dims.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t(0), r); };
  const int64_t start = clamp(n.attr_int("start", 0)), end = clamp(n.attr_int("end", r));
  std::vector<int64_t> out;
  for (int64_t i = start; i < end; ++i) out.push_back(dims[size_t(i)]);
  return {host_ints(out, Shape{int64_t(out.size())})};
}

Outs size_entry(const NodeContext& n) { return {host_ints({n.input(0).numel()}, Shape{})}; }

Outs reshape_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  std::vector<int64_t> shape = n.opset() < 5 ? n.attr_ints("shape") : n.ints(1);
  const bool allowzero = n.attr_int("allowzero", 0) != 0;
  const auto dims = dims_of(x);
  int minus = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= dims.size()) n.fail("shape has 0 at axis " + std::to_string(i) + ", past the input's rank");
      shape[i] = dims[i];
    }
    if (shape[i] == -1) ++minus;
    else if (shape[i] < 0) n.fail("shape holds " + std::to_string(shape[i]));
  }
  if (minus > 1) n.fail("shape has more than one -1");
  return {reshape(x, shape)};
}

Outs flatten_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const int64_t r = x.ndim();
  int64_t axis = n.attr_int("axis", 1);
  if (axis < -r || axis > r) n.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) *= x.shape()[int(i)];
  return {reshape(x, {a, b})};
}

std::vector<int64_t> axes_of(const NodeContext& n, bool& given) {
  given = true;
  if (n.opset() < 13) {
    given = n.has_attr("axes");
    return n.attr_ints("axes");
  }
  if (n.has_input(1)) return n.ints(1);
  given = false;
  return {};
}

Outs squeeze_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  bool given;
  auto axes = axes_of(n, given);
  const auto dims = dims_of(x);
  std::vector<bool> drop(dims.size(), false);
  if (!given)
    for (size_t i = 0; i < dims.size(); ++i) drop[i] = dims[i] == 1;
  for (int64_t a : axes) {
    const int64_t k = norm_axis(n, a, x.ndim());
    if (dims[size_t(k)] != 1) n.fail("axis " + std::to_string(a) + " has size " + std::to_string(dims[size_t(k)]));
    drop[size_t(k)] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < dims.size(); ++i)
    if (!drop[i]) out.push_back(dims[i]);
  return {reshape(x, out)};
}

Outs unsqueeze_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  bool given;
  auto axes = axes_of(n, given);
  if (!given) n.fail("axes are missing");
  const int64_t r = x.ndim() + int64_t(axes.size());
  std::vector<bool> added(size_t(r), false);
  for (int64_t a : axes) {
    const int64_t k = norm_axis(n, a, r);
    if (added[size_t(k)]) n.fail("axis " + std::to_string(a) + " is repeated");
    added[size_t(k)] = true;
  }
  std::vector<int64_t> out;
  const auto dims = dims_of(x);
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(added[size_t(i)] ? 1 : dims[j++]);
  return {reshape(x, out)};
}

Outs transpose_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = x.ndim() - 1; i >= 0; --i) perm.push_back(i);
  if (int64_t(perm.size()) != x.ndim()) n.fail("perm has " + std::to_string(perm.size()) + " axes for rank " +
                                               std::to_string(x.ndim()));
  return {permute(x, perm)};
}

Outs concat_entry(const NodeContext& n) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < n.num_inputs(); ++i) xs.push_back(n.input(i));
  if (xs.empty()) n.fail("needs at least one input");
  if (!n.has_attr("axis")) n.fail("attribute axis is missing");
  return {concat(xs, norm_axis(n, n.attr_int("axis", 0), xs[0].ndim()))};
}

Outs split_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const int64_t axis = norm_axis(n, n.attr_int("axis", 0), x.ndim());
  const int64_t dim = x.shape()[int(axis)];
  std::vector<int64_t> sizes = n.opset() < 13 ? n.attr_ints("split") : n.has_input(1) ? n.ints(1)
                                                                                        : std::vector<int64_t>{};
  if (sizes.empty()) {
    const int64_t parts = n.node().output_size();
    if (dim % parts) n.fail("axis of size " + std::to_string(dim) + " does not split into " + std::to_string(parts));
    sizes.assign(size_t(parts), dim / parts);
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != dim) n.fail("split sizes add up to " + std::to_string(total) + ", not " + std::to_string(dim));
  return split_sizes(x, sizes, axis);
}

Outs expand_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  return {broadcast_to(x, Shape::of(broadcast_dims(n, dims_of(x), n.ints(1))))};
}

// Each axis repeated: x viewed as [1, d0, 1, d1, ...], broadcast to
// [r0, d0, r1, d1, ...] and merged pairwise.
Outs tile_entry(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const auto reps = n.ints(1);
  if (int64_t(reps.size()) != x.ndim()) n.fail("repeats must have one entry per axis");
  std::vector<int64_t> split, big, out;
  for (int i = 0; i < x.ndim(); ++i) {
    if (reps[size_t(i)] < 0) n.fail("negative repeat");
    split.push_back(1), split.push_back(x.shape()[i]);
    big.push_back(reps[size_t(i)]), big.push_back(x.shape()[i]);
    out.push_back(reps[size_t(i)] * x.shape()[i]);
  }
  return {reshape(broadcast_to(reshape(x, split), Shape::of(big)), out)};
}

Outs depth_to_space(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const int64_t b = n.attr_int("blocksize", 0);
  if (x.ndim() != 4 || b <= 0 || x.shape()[1] % (b * b)) n.fail("needs a 4-d input whose channels divide by blocksize^2");
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const std::string mode = n.attr_str("mode", "DCR");
  Tensor y;
  if (mode == "DCR") y = permute(reshape(x, {N, b, b, C / (b * b), H, W}), {0, 3, 4, 1, 5, 2});
  else if (mode == "CRD") y = permute(reshape(x, {N, C / (b * b), b, b, H, W}), {0, 1, 4, 2, 5, 3});
  else n.fail("attribute mode=" + mode + " is not supported");
  return {reshape(y, {N, C / (b * b), H * b, W * b})};
}

Outs space_to_depth(const NodeContext& n) {
  const Tensor& x = n.input(0);
  const int64_t b = n.attr_int("blocksize", 0);
  if (x.ndim() != 4 || b <= 0 || x.shape()[2] % b || x.shape()[3] % b)
    n.fail("needs a 4-d input whose height and width divide by blocksize");
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const Tensor y = permute(reshape(x, {N, C, H / b, b, W / b, b}), {0, 3, 5, 1, 2, 4});
  return {reshape(y, {N, C * b * b, H / b, W / b})};
}

Outs range_entry(const NodeContext& n) {
  const DType dt = n.input(0).dtype();
  const double start = one_number(n, 0), limit = one_number(n, 1), delta = one_number(n, 2);
  if (delta == 0) n.fail("delta must not be 0");
  return {astype(arange(start, limit, delta, dt), dt)};
}

Outs eye_like(const NodeContext& n) {
  const Tensor& x = n.input(0);
  if (x.ndim() != 2) n.fail("needs a 2-d input");
  DType dt = x.dtype();
  if (n.has_attr("dtype")) {
    const auto d = dtype_of(int(n.attr_int("dtype", 0)));
    if (!d) n.fail("attribute dtype names a type nn has no dtype for");
    dt = *d;
  }
  const int64_t rows = x.shape()[0], cols = x.shape()[1], k = n.attr_int("k", 0);
  std::vector<double> v(size_t(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) v[size_t(i * cols + i + k)] = 1;
  return {from_doubles(v, x.shape(), dt)};
}

const ImportEntry entries[] = {
    {"Constant", constant},
    {"ConstantOfShape", constant_of_shape},
    {"Shape", shape_entry},
    {"Size", size_entry},
    {"Reshape", reshape_entry},
    {"Flatten", flatten_entry},
    {"Squeeze", squeeze_entry},
    {"Unsqueeze", unsqueeze_entry},
    {"Transpose", transpose_entry},
    {"Concat", concat_entry},
    {"Split", split_entry},
    {"Expand", expand_entry},
    {"Tile", tile_entry},
    {"DepthToSpace", depth_to_space},
    {"SpaceToDepth", space_to_depth},
    {"Range", range_entry},
    {"EyeLike", eye_like},
};

}  // namespace

std::span<const ImportEntry> shape_imports() { return entries; }

}  // namespace nn::onnx_io
