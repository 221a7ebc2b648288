// Indexing (SPEC §3): the registry ops slice (a strided gather), assign_slice
// (x[items] = v in place) and take (rows picked by integer ids), and the
// ops.h functions index, index_assign, take, and flip and roll made of
// slices. The functions turn Python
// style index items into one start, step and size per axis plus the list of
// axes an integer index drops; the ops only ever see those.
//
// Autodiff: slice's gradient is the op slice_backward (zeros with g written
// into the region), take's is take_backward (g's rows added into zeros at
// their ids). assign_slice writes in place and is never differentiated.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/ops.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/region.h"
#include "backend/ops/register.h"
#include "backend/ops/strided_copy.h"

namespace nn::backend {
namespace {

// Python's slice.indices(n) followed by the length of the range.
void resolve_slice(const IndexItem& it, int64_t n, int64_t& start, int64_t& step, int64_t& size) {
  step = it.step.value_or(1);
  if (step == 0) throw Error("slice step cannot be zero");
  // -2^63 has no negation; any step past the length takes the same one element.
  step = std::max(step, -INT64_MAX);
  auto clamp = [&](int64_t v) {  // a negative bound counts from the end, then clamps into range
    if (v < 0) {
      v += n;
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= n) {
      v = step < 0 ? n - 1 : n;
    }
    return v;
  };
  start = it.start ? clamp(*it.start) : (step < 0 ? n - 1 : 0);
  const int64_t stop = it.stop ? clamp(*it.stop) : (step < 0 ? -1 : n);
  if (step > 0) size = start < stop ? (stop - start - 1) / step + 1 : 0;
  else size = stop < start ? (start - stop - 1) / (-step) + 1 : 0;
  if (size == 0) start = 0;  // nothing is read; keep the offset inside the tensor
}

Region resolve(const Tensor& x, const std::vector<IndexItem>& items) {
  const int nd = x.ndim();
  if (int(items.size()) > nd)
    throw Error("too many indices for " + x.type().str() + ": " + std::to_string(items.size()) + " given, " +
                std::to_string(nd) + (nd == 1 ? " dimension" : " dimensions"));
  Region r;
  for (int d = 0; d < nd; ++d) {
    const int64_t n = x.shape()[d];
    int64_t start = 0, step = 1, size = n;
    if (d < int(items.size())) {
      const IndexItem& it = items[size_t(d)];
      if (it.kind == IndexItem::index) {
        // Out of range is an error, never a wrap (SPEC §3).
        if (it.i < -n || it.i >= n)
          throw Error("index " + std::to_string(it.i) + " is out of range for axis " + std::to_string(d) +
                      " of size " + std::to_string(n) + " in " + x.type().str());
        start = it.i < 0 ? it.i + n : it.i;
        size = 1;
        r.drop.push_back(d);
      } else {
        resolve_slice(it, n, start, step, size);
      }
      const bool open = it.kind == IndexItem::slice && it.start.value_or(0) == 0 && !it.stop && it.step.value_or(1) == 1;
      if (!open && start == 0 && step == 1 && size == n) r.pinned.push_back(d);
    }
    r.start.push_back(start);
    r.step.push_back(step);
    r.size.push_back(size);
  }
  return r;
}

// Checks that the attrs describe a region inside x (they come from resolve(),
// or from a graph pass that must respect the same contract).
void check_region(const char* op, const TensorType& x, const Region& r) {
  const int nd = x.shape.ndim();
  bool ok = int(r.start.size()) == nd && int(r.step.size()) == nd && int(r.size.size()) == nd;
  for (int d = 0; ok && d < nd; ++d) {
    const int64_t n = x.shape[d], size = r.size[size_t(d)];
    if (size < 0 || r.step[size_t(d)] == 0) ok = false;
    else if (size > 0) {
      const int64_t first = r.start[size_t(d)], last = first + (size - 1) * r.step[size_t(d)];
      ok = first >= 0 && first < n && last >= 0 && last < n;
    }
  }
  for (int64_t d : r.drop) ok = ok && d >= 0 && d < nd && r.size[size_t(d)] == 1;
  if (!ok) throw Error(std::string("internal: ") + op + " got a region outside " + x.str());
}

// ---- slice ---------------------------------------------------------------------
OutTypes slice_type(std::span<const TensorType> in, const Attrs& attrs) {
  Region r = region_of(attrs);
  check_region("slice", in[0], r);
  return {TensorType{in[0].dtype, region_shape(r), in[0].device}};
}

void slice_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& x = in[0];
  Region r = region_of(attrs);
  int64_t base;
  const StridedCopy c = slice_copy(x.shape(), r, base);
  const size_t esize = dtype_size(x.dtype());
  strided_copy(static_cast<const char*>(x.raw_data()) + size_t(base) * esize, out[0].raw_data(), esize, c);
}

// ---- slice_backward: input g (the region's gradient); attrs the region and
// the `shape` of the sliced tensor. The result is zeros of that shape with g
// in the region.
OutTypes slice_backward_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType& g = in[0];
  TensorType x{g.dtype, attrs.get<Shape>("shape"), g.device};
  Region r = region_of(attrs);
  check_region("slice_backward", x, r);
  if (g.shape != region_shape(r))
    throw Error("internal: slice_backward got " + g.str() + " for the region " + region_shape(r).str() + " of " +
                x.str());
  return {x};
}

void slice_backward_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor& g = in[0];
  Tensor& x = out[0];
  if (x.nbytes()) std::memset(x.raw_data(), 0, x.nbytes());  // all-zero bytes are 0 in every dtype
  Region r = region_of(attrs);
  int64_t base;
  const StridedCopy c = slice_backward_copy(x.shape(), r, base);
  const size_t esize = dtype_size(x.dtype());
  strided_copy(g.raw_data(), static_cast<char*>(x.raw_data()) + size_t(base) * esize, esize, c);
}

Tensor slice_backward(const Tensor& g, const Tensor& x, const Attrs& region) {
  static const OpDef& d = op(OpId::slice_backward);
  Attrs a = region;
  a.set("shape", x.shape());
  return call(d, {g}, a);
}

std::vector<Tensor> slice_grad(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor()};
  return {slice_backward(a.grads[0], x, a.attrs)};
}

// slice_backward is linear in g: its own gradient is the slice of the
// region (for a backward pass that is differentiated again).
std::vector<Tensor> slice_backward_grad(const BackwardArgs& a) {
  if (!bw::wants(a.inputs[0])) return {Tensor()};
  static const OpDef& slice = op(OpId::slice);
  return {call(slice, {a.grads[0]}, a.attrs)};
}

// ---- assign_slice: inputs (x, v); writes v into x's region -------------------------
OutTypes assign_slice_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType &x = in[0], &v = in[1];
  Region r = region_of(attrs);
  check_region("assign_slice", x, r);
  Shape region = region_shape(r);
  Shape b;
  if (!broadcast_shapes(v.shape, region, b) || b != region)
    throw Error("index assignment: cannot broadcast " + v.str() + " to the selected region " + region.str() +
                " of " + x.str());
  return {x};
}

void assign_slice_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  Tensor& x = out[0];  // the same tensor as in[0]: the op is stateful
  Region r = region_of(attrs);
  Tensor v = ew::converted(in[1], x.dtype());
  // A v that shares x's memory (x[1:] = x[:-1]) is read whole before x changes.
  if (v.block() == x.block()) {
    Tensor copy = Tensor::empty(v.shape(), v.dtype(), v.device());
    std::memcpy(copy.raw_data(), v.raw_data(), v.nbytes());
    v = copy;
  }
  int64_t base;
  const StridedCopy c = assign_copy(x.shape(), r, v.shape(), base);
  const size_t esize = dtype_size(x.dtype());
  strided_copy(v.raw_data(), static_cast<char*>(x.raw_data()) + size_t(base) * esize, esize, c);
}

// ---- take: inputs (x, ids) --------------------------------------------------------
OutTypes take_type(std::span<const TensorType> in, const Attrs&) {
  const TensorType &x = in[0], &ids = in[1];
  if (!is_integral(ids.dtype)) throw Error("take: ids must be an integer tensor, got " + ids.str());
  if (x.shape.ndim() == 0) throw Error("take: cannot take rows of a 0-d tensor " + x.str());
  Shape out = ids.shape;
  for (int d = 1; d < x.shape.ndim(); ++d) out.push_back(x.shape[d]);
  return {TensorType{x.dtype, out, x.device}};
}

// What an id out of range is called: take's by default, naming `of`, the
// tensor whose rows it picks; a composite calling take says what it picks
// (attribute `name`): accuracy its class ids, an index expression x[i, j]
// (take_index) the indexed tensor's axis.
std::string id_error(int64_t id, int64_t rows, const Tensor* of, const Attrs* attrs) {
  const std::string name = attrs ? attrs->get_or<std::string>("name", "") : "";
  const std::string at = std::to_string(id), size = std::to_string(rows);
  if (name == "accuracy") return "accuracy: class id " + at + " is out of range for " + size + " classes";
  if (name == "index") {
    const std::string indexed = attrs->get<std::string>("of");
    const int64_t axis = attrs->get<int64_t>("axis");
    if (axis >= 0)
      return "index " + at + " is out of range for axis " + std::to_string(axis) + " of size " + size + " in " + indexed;
    return "index out of range: an index tensor holds an id outside its axis of " + indexed;
  }
  return "take: id " + at + " is out of range for axis 0 of size " + size + (of ? " in " + of->type().str() : "");
}

// The ids as i64, all checked to lie in [0, rows) before the caller's
// parallel region (an exception must not leave one).
std::vector<int64_t> checked_ids(const Tensor& ids, int64_t rows, const Tensor* of = nullptr,
                                 const Attrs* attrs = nullptr) {
  const int64_t n = ids.numel();
  std::vector<int64_t> idv(static_cast<size_t>(n));
  visit_dtype(ids.dtype(), [&]<class T>() {
    const T* p = ids.data<T>();
    for (int64_t i = 0; i < n; ++i) idv[size_t(i)] = int64_t(p[i]);
  });
  for (int64_t id : idv)
    if (id < 0 || id >= rows) throw Error(id_error(id, rows, of, attrs));
  return idv;
}

void take_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor &x = in[0], &ids = in[1];
  const int64_t rows = x.shape()[0], n = ids.numel();
  const size_t row_bytes = x.numel() == 0 ? 0 : x.nbytes() / size_t(rows);
  const std::vector<int64_t> idv = checked_ids(ids, rows, &x, &attrs);
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  parallel_for(n, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, int64_t(row_bytes) / 4)),
               [&](int64_t b, int64_t e) {
                 for (int64_t i = b; i < e; ++i)
                   std::memcpy(dst + size_t(i) * row_bytes, src + size_t(idv[size_t(i)]) * row_bytes, row_bytes);
               });
}

// ---- take_backward: inputs (g, ids), attr `rows` ------------------------------------
OutTypes take_backward_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType &g = in[0], &ids = in[1];
  const int64_t rows = attrs.get<int64_t>("rows");
  const int ni = ids.shape.ndim();
  bool ok = is_integral(ids.dtype) && is_floating(g.dtype) && rows >= 0 && g.shape.ndim() >= ni;
  for (int d = 0; ok && d < ni; ++d) ok = g.shape[d] == ids.shape[d];
  if (!ok)
    throw Error("internal: take_backward got " + g.str() + " and ids " + ids.str() + " for " + std::to_string(rows) +
                " rows");
  Shape out{rows};
  for (int d = ni; d < g.shape.ndim(); ++d) out.push_back(g.shape[d]);
  return {TensorType{g.dtype, out, g.device}};
}

// Scatter-add without atomics and with a fixed order of additions: the ids
// are bucketed by target row (a stable counting sort), then each thread
// owns whole target rows and adds their source rows in the order the ids
// come in. The result
// does not depend on the thread count.
void take_backward_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor &g = in[0], &ids = in[1];
  Tensor& x = out[0];
  const int64_t rows = x.shape()[0], n = ids.numel();
  int64_t width = 1;
  for (int d = 1; d < x.ndim(); ++d) width *= x.shape()[d];
  const std::vector<int64_t> idv = checked_ids(ids, rows);
  std::vector<int64_t> first(static_cast<size_t>(rows) + 1, 0), order(static_cast<size_t>(n));
  for (int64_t id : idv) ++first[size_t(id) + 1];
  for (int64_t r = 0; r < rows; ++r) first[size_t(r) + 1] += first[size_t(r)];
  {
    std::vector<int64_t> fill(first.begin(), first.end() - 1);
    for (int64_t i = 0; i < n; ++i) order[size_t(fill[size_t(idv[size_t(i)])]++)] = i;
  }
  ew::check_cpu_dtype("take_backward", x.dtype());
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* src = g.data<T>();
      T* dst = x.data<T>();
      const int64_t per_row = std::max<int64_t>(1, width * std::max<int64_t>(1, n / std::max<int64_t>(1, rows)));
      parallel_for(rows, std::max<int64_t>(1, kParallelGrain / per_row), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          T* row = dst + r * width;
          std::fill(row, row + width, T(0));
          for (int64_t k = first[size_t(r)]; k < first[size_t(r) + 1]; ++k) {
            const T* s = src + order[size_t(k)] * width;
            for (int64_t j = 0; j < width; ++j) row[j] += s[j];
          }
        }
      });
    }
  });
}

std::vector<Tensor> take_grad(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0];
  if (!bw::wants(x)) return {Tensor(), Tensor()};
  return {take_backward(a.grads[0], a.inputs[1], x.shape()[0]), Tensor()};
}

// take_backward is linear in g: its own gradient gathers the rows back.
std::vector<Tensor> take_backward_grad(const BackwardArgs& a) {
  if (!bw::wants(a.inputs[0])) return {Tensor(), Tensor()};
  return {take(a.grads[0], a.inputs[1]), Tensor()};
}

}  // namespace

// ---- ops.h ---------------------------------------------------------------------
Tensor index(const Tensor& x, const std::vector<IndexItem>& items) {
  return call(op(OpId::slice), {x}, region_attrs(resolve(x, items)));
}

void index_assign(Tensor& x, const std::vector<IndexItem>& items, const Tensor& v) {
  const Region r = resolve(x, items);
  // Leading axes of size 1 beyond the region's go, as NumPy drops them
  // (x[0] = [[1, 2, 3]] for a row of 3).
  const int rank = region_shape(r).ndim();
  Tensor value = v;
  if (v.ndim() > rank) {
    bool ones = true;
    for (int d = 0; d < v.ndim() - rank; ++d) ones = ones && v.shape()[d] == 1;
    if (ones) value = reshape(v, std::vector<int64_t>(v.shape().dims().end() - rank, v.shape().dims().end()));
  }
  // Eagerly the op returns x itself; under a tracer it returns the new value
  // of x, which x then names.
  x = call(op(OpId::assign_slice), {x, value}, region_attrs(r));
}

Tensor flip(const Tensor& x, const std::optional<std::vector<int64_t>>& axes) {
  std::vector<IndexItem> items(size_t(x.ndim()));
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x.ndim(); ++d) all.push_back(d);
  for (int64_t a : axes.value_or(all)) {
    int d;
    if (!normalize_axis(a, x.ndim(), d))
      throw Error("flip: axis " + std::to_string(a) + " is out of range for " + x.type().str());
    if (items[size_t(d)].step) throw Error("flip: axis " + std::to_string(a) + " is named twice");
    items[size_t(d)].step = -1;
  }
  return index(x, items);
}

Tensor roll(const Tensor& x, int64_t shift, std::optional<int64_t> axis) {
  if (!axis) return reshape(roll(reshape(x, {-1}), shift, 0), x.shape().vec());
  int d;
  if (!normalize_axis(*axis, x.ndim(), d))
    throw Error("roll: axis " + std::to_string(*axis) + " is out of range for " + x.type().str());
  const int64_t n = x.shape()[d];
  const int64_t s = n == 0 ? 0 : (shift % n + n) % n;  // in [0, n): no overflow at -2^63
  std::vector<IndexItem> tail(size_t(d) + 1), head(size_t(d) + 1);
  tail[size_t(d)].start = n - s;
  head[size_t(d)].stop = n - s;
  return concat({index(x, tail), index(x, head)}, d);
}

Tensor take(const Tensor& x, const Tensor& ids) { return call(op(OpId::take), {x, ids}); }

Tensor take_index(const Tensor& x, const Tensor& ids, const std::string& of, int64_t axis) {
  return call(op(OpId::take), {x, ids}, Attrs{{"name", std::string("index")}, {"of", of}, {"axis", axis}});
}

Tensor take_backward(const Tensor& g, const Tensor& ids, int64_t rows) {
  static const OpDef& d = op(OpId::take_backward);
  return call(d, {g, ids}, Attrs{{"rows", rows}});
}

void register_index_ops(Registry& r) {
  r.add(OpDef{.id = OpId::slice, .num_inputs = 1, .type_rule = slice_type, .cpu = slice_kernel,
              .backward = slice_grad});
  r.add(OpDef{.id = OpId::slice_backward, .num_inputs = 1, .type_rule = slice_backward_type,
              .cpu = slice_backward_kernel, .backward = slice_backward_grad});
  r.add(OpDef{.id = OpId::assign_slice,
              .num_inputs = 2,
              .type_rule = assign_slice_type,
              .cpu = assign_slice_kernel,
              .effect = Effect::stateful});
  r.add(OpDef{.id = OpId::take, .num_inputs = 2, .type_rule = take_type, .cpu = take_kernel, .backward = take_grad});
  r.add(OpDef{.id = OpId::take_backward, .num_inputs = 2, .type_rule = take_backward_type,
              .cpu = take_backward_kernel, .backward = take_backward_grad});
}

}  // namespace nn::backend
