// Shape ops: the registry ops reshape (a view: the result shares the input's
// block), permute and broadcast_to (strided copies), concat (any number of
// inputs, dtypes promoted), and the functions built on them: flatten,
// squeeze, unsqueeze (reshape), transpose (permute), stack (unsqueeze +
// concat). Each registry op's backward rule follows its kernel.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/register.h"
#include "backend/ops/type_rules.h"
#include "backend/ops/strided_copy.h"

namespace nn::backend {
namespace {

std::string list_str(const std::vector<int64_t>& v) { return Shape::of(v).str(); }

// "axis 3 is out of range for f32[2, 3] (valid axes are -2..1)": the axis
// errors of the functions below, which each normalise their own axes. `ndim`
// is the number of places an axis may name (one more than x has for unsqueeze).
int normalized_axis(const char* op, int64_t axis, int ndim, const Tensor& x) {
  int r;
  if (!normalize_axis(axis, ndim, r))
    throw Error(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for " + x.type().str() +
                (ndim == 0 ? " (it has no axes)"
                           : " (valid axes are " + std::to_string(-ndim) + ".." + std::to_string(ndim - 1) + ")"));
  return r;
}

// ---- reshape --------------------------------------------------------------------
OutTypes reshape_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType& x = in[0];
  const Shape& target = attrs.get<Shape>("shape");
  for (int64_t d : target)
    if (d < 0) throw Error("reshape: negative dimension " + std::to_string(d) + " in " + target.str());
  if (target.numel() != x.shape.numel())
    throw Error("reshape: cannot reshape " + x.str() + " (" + std::to_string(x.shape.numel()) + " elements) to " +
                target.str() + " (" + std::to_string(target.numel()) + " elements)");
  return {TensorType{x.dtype, target, x.device}};
}

// Dispatch makes a view without calling a kernel; this one serves an executor
// that gave the result its own memory.
void reshape_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  if (in[0].raw_data() != out[0].raw_data()) std::memcpy(out[0].raw_data(), in[0].raw_data(), in[0].nbytes());
}

std::vector<Tensor> reshape_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  return {reshape(a.grads[0], x.shape().vec())};
}

// ---- permute --------------------------------------------------------------------
OutTypes permute_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType& x = in[0];
  const auto& dims = attrs.get<std::vector<int64_t>>("dims");
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  bool ok = int(dims.size()) == x.shape.ndim();
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == int64_t(i);
  if (!ok)
    throw Error("permute: dims " + list_str(dims) + " are not a permutation of the " +
                std::to_string(x.shape.ndim()) + " axes of " + x.str());
  Shape out;
  for (int64_t d : dims) out.push_back(x.shape[int(d)]);
  return {TensorType{x.dtype, out, x.device}};
}

void permute_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& x = in[0];
  const StridedCopy c = permute_copy(x.shape(), out[0].shape(), attrs.get<std::vector<int64_t>>("dims"));
  strided_copy(x.raw_data(), out[0].raw_data(), dtype_size(x.dtype()), c);
}

// The inverse permutation puts each axis back.
std::vector<Tensor> permute_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  const auto& dims = a.attrs.get<std::vector<int64_t>>("dims");
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[size_t(dims[i])] = int64_t(i);
  return {permute(a.grads[0], inverse)};
}

// ---- broadcast_to -----------------------------------------------------------------
OutTypes broadcast_to_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType& x = in[0];
  const Shape& target = attrs.get<Shape>("shape");
  auto fail = [&](const std::string& why) {
    return Error("broadcast_to: cannot broadcast " + x.str() + " to " + target.str() + " (" + why + ")");
  };
  for (int64_t d : target)
    if (d < 0) throw Error("broadcast_to: negative dimension " + std::to_string(d) + " in " + target.str());
  const int nx = x.shape.ndim(), nt = target.ndim();
  if (nx > nt)
    throw fail("the target has fewer dimensions: " + std::to_string(nt) + " < " + std::to_string(nx));
  for (int i = 1; i <= nx; ++i) {
    int64_t dx = x.shape[nx - i], dt = target[nt - i];
    if (dx != dt && dx != 1)
      throw fail("dimension " + std::to_string(nt - i) + ": " + std::to_string(dx) + " != " + std::to_string(dt));
  }
  return {TensorType{x.dtype, target, x.device}};
}

void broadcast_to_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor& x = in[0];
  strided_copy(x.raw_data(), out[0].raw_data(), dtype_size(x.dtype()), broadcast_copy(x.shape(), out[0].shape()));
}

std::vector<Tensor> broadcast_to_backward(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  return {sum_to(a.grads[0], x.shape())};
}

// ---- concat -----------------------------------------------------------------------
OutTypes concat_type(std::span<const TensorType> in, const Attrs& attrs) {
  if (in.empty()) throw Error("concat: needs at least one tensor");
  const TensorType& first = in[0];
  const int nd = first.shape.ndim();
  if (nd == 0) throw Error("concat: cannot concatenate 0-d tensors (operand 0 is " + first.str() + ")");
  const int64_t axis = attrs.get<int64_t>("axis");
  if (axis < 0 || axis >= nd) throw Error("internal: concat got axis " + std::to_string(axis) + " for " + first.str());
  Shape out = first.shape;
  for (size_t i = 1; i < in.size(); ++i) {
    const TensorType& t = in[i];
    auto mismatch = [&](const std::string& why) {
      return Error("concat: operand " + std::to_string(i) + " is " + t.str() + " but operand 0 is " + first.str() +
                   " (" + why + ")");
    };
    if (t.shape.ndim() != nd)
      throw mismatch("number of dimensions: " + std::to_string(t.shape.ndim()) + " != " + std::to_string(nd));
    for (int d = 0; d < nd; ++d)
      if (d != axis && t.shape[d] != first.shape[d])
        throw mismatch("dimension " + std::to_string(d) + ": " + std::to_string(t.shape[d]) +
                       " != " + std::to_string(first.shape[d]));
    if (__builtin_add_overflow(out[int(axis)], t.shape[int(axis)], &out[int(axis)]))
      throw Error("concat: the operands' dimension " + std::to_string(axis) + " adds up past 2^63 - 1");
  }
  Promoted p = promote_types(in);
  return {TensorType{p.dtype, out, first.device, p.weak}};
}

void concat_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const int axis = int(attrs.get<int64_t>("axis"));
  Tensor& y = out[0];
  int64_t outer = 1, after = 1;
  for (int d = 0; d < axis; ++d) outer *= y.shape()[d];
  for (int d = axis + 1; d < y.ndim(); ++d) after *= y.shape()[d];
  const int64_t width = y.shape()[axis] * after;  // elements of one output row
  const size_t esize = dtype_size(y.dtype());
  int64_t col = 0;
  for (const Tensor& t : in) {
    // Each operand is a block of columns of the [outer, width] output.
    const int64_t w = t.shape()[axis] * after;
    Tensor src = ew::converted(t, y.dtype());
    StridedCopy c;
    c.push(outer, w, width);
    c.push(w, 1, 1);
    strided_copy(src.raw_data(), static_cast<char*>(y.raw_data()) + size_t(col) * esize, esize, c);
    col += w;
  }
}

// Each operand gets its block of g along the axis, cast to its dtype (the
// operands were promoted to one).
std::vector<Tensor> concat_backward(const BackwardArgs& a) {
  const int64_t axis = a.attrs.get<int64_t>("axis");
  std::vector<Tensor> grads(a.inputs.size());
  std::vector<IndexItem> items(size_t(axis) + 1);  // whole slices up to the axis
  int64_t at = 0;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const Tensor& x = a.inputs[i];
    const int64_t size = x.shape()[int(axis)];
    if (bw::wants(x)) {
      items.back().start = at;
      items.back().stop = at + size;
      grads[i] = astype(index(a.grads[0], items), x.dtype());
    }
    at += size;
  }
  return grads;
}

}  // namespace

// ---- ops.h ---------------------------------------------------------------------
Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape) {
  // Resolve the one -1 here; the op's type rule sees a plain shape.
  int free_dim = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (free_dim >= 0) throw Error("reshape: only one dimension can be -1, got " + list_str(shape));
      free_dim = int(i);
    } else if (shape[i] < 0) {
      throw Error("reshape: negative dimension " + std::to_string(shape[i]) + " in " + list_str(shape));
    } else {
      known *= shape[i];
    }
  }
  std::vector<int64_t> resolved = shape;
  if (free_dim >= 0) {
    const int64_t n = x.numel();
    auto head = "reshape: cannot reshape " + x.type().str() + " (" + std::to_string(n) + " elements) to " +
                list_str(shape);
    if (known == 0) throw Error(head + " (the -1 is ambiguous next to a 0)");
    if (n % known != 0)
      throw Error(head + " (" + std::to_string(n) + " is not a multiple of " + std::to_string(known) + ")");
    resolved[size_t(free_dim)] = n / known;
  }
  // To its own shape: x itself, as the op would give a view of x with x's
  // history. No node then, in a trace (backward rules reshape gradients
  // back to their operand's shape, which they mostly have already).
  if (!x.weak() && x.ndim() == int(resolved.size()) && std::equal(resolved.begin(), resolved.end(), x.shape().begin()))
    return x;
  return call(op(OpId::reshape), {x}, Attrs{{"shape", Shape::of(resolved)}});
}

Tensor flatten(const Tensor& x, int64_t start, int64_t end) {
  // A 0-d tensor flattens like a 1-element 1-d one.
  const int n = std::max(x.ndim(), 1);
  const int s = normalized_axis("flatten", start, n, x), e = normalized_axis("flatten", end, n, x);
  if (e < s)
    throw Error("flatten: end axis " + std::to_string(end) + " comes before start axis " + std::to_string(start) +
                " of " + x.type().str());
  std::vector<int64_t> shape(x.shape().begin(), x.shape().begin() + std::min(s, x.ndim()));
  int64_t joined = 1;
  for (int d = s; d <= e && d < x.ndim(); ++d) joined *= x.shape()[d];
  shape.push_back(joined);
  for (int d = e + 1; d < x.ndim(); ++d) shape.push_back(x.shape()[d]);
  return reshape(x, shape);
}

Tensor squeeze(const Tensor& x, const std::optional<int64_t>& axis) {
  std::vector<int64_t> shape;
  if (!axis) {
    for (int64_t d : x.shape())
      if (d != 1) shape.push_back(d);
    return reshape(x, shape);
  }
  int a = normalized_axis("squeeze", *axis, x.ndim(), x);
  if (x.shape()[a] != 1)
    throw Error("squeeze: cannot squeeze axis " + std::to_string(*axis) + " of " + x.type().str() +
                ": its size is " + std::to_string(x.shape()[a]) + ", not 1");
  shape = x.shape().vec();
  shape.erase(shape.begin() + a);
  return reshape(x, shape);
}

Tensor unsqueeze(const Tensor& x, int64_t axis) {
  // The new axis may go anywhere from before the first to after the last.
  int a = normalized_axis("unsqueeze", axis, x.ndim() + 1, x);
  std::vector<int64_t> shape = x.shape().vec();
  shape.insert(shape.begin() + a, 1);
  return reshape(x, shape);
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> norm;
  for (int64_t d : dims) norm.push_back(normalized_axis("permute", d, x.ndim(), x));
  return call(op(OpId::permute), {x}, Attrs{{"dims", norm}});
}

Tensor transpose(const Tensor& x, int64_t a, int64_t b) {
  int na = normalized_axis("transpose", a, x.ndim(), x), nb = normalized_axis("transpose", b, x.ndim(), x);
  std::vector<int64_t> dims;
  for (int d = 0; d < x.ndim(); ++d) dims.push_back(d);
  std::swap(dims[size_t(na)], dims[size_t(nb)]);
  return call(op(OpId::permute), {x}, Attrs{{"dims", dims}});
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  return call(op(OpId::broadcast_to), {x}, Attrs{{"shape", shape}});
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) throw Error("concat: needs at least one tensor");
  if (xs[0].ndim() == 0) throw Error("concat: cannot concatenate 0-d tensors (operand 0 is " + xs[0].type().str() + ")");
  int a = normalized_axis("concat", axis, xs[0].ndim(), xs[0]);
  return call(op(OpId::concat), std::span<const Tensor>(xs), Attrs{{"axis", int64_t(a)}});
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) throw Error("stack: needs at least one tensor");
  for (size_t i = 1; i < xs.size(); ++i)
    if (xs[i].shape() != xs[0].shape())
      throw Error("stack: operand " + std::to_string(i) + " is " + xs[i].type().str() + " but operand 0 is " +
                  xs[0].type().str() + " (stacked tensors must have one shape)");
  int a = normalized_axis("stack", axis, xs[0].ndim() + 1, xs[0]);
  std::vector<Tensor> parts;
  parts.reserve(xs.size());
  for (const Tensor& x : xs) parts.push_back(unsqueeze(x, a));
  return concat(parts, a);
}

void register_shape_ops(Registry& r) {
  r.add(OpDef{.id = OpId::reshape, .num_inputs = 1, .type_rule = reshape_type, .cpu = reshape_kernel,
              .backward = reshape_backward, .view = true});
  r.add(OpDef{.id = OpId::permute, .num_inputs = 1, .type_rule = permute_type, .cpu = permute_kernel,
              .backward = permute_backward});
  r.add(OpDef{.id = OpId::broadcast_to, .num_inputs = 1, .type_rule = broadcast_to_type, .cpu = broadcast_to_kernel,
              .backward = broadcast_to_backward});
  r.add(OpDef{.id = OpId::concat, .num_inputs = -1, .type_rule = concat_type, .cpu = concat_kernel,
              .backward = concat_backward});
}

}  // namespace nn::backend
