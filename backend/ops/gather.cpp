// Picking and scattering along one axis (SPEC §13): gather (NumPy's
// take_along_axis: out[..., j, ...] = x[..., ids[..., j, ...], ...]) and
// scatter_add (x with v added at the ids along the axis), and index_select
// (whole slices at 1-d ids), a gather with ids broadcast along the other
// axes. ids and x have the same number of dims; along the other axes their
// extents are equal or 1 (broadcast), as NumPy's. Ids outside [0, n) are an
// error (no wrap), as PyTorch's.
//
// Autodiff: gather's gradient is a scatter_add of g into zeros, and
// scatter_add's is g for x and a gather of g for v; the ids get none.
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/ops.h"
#include "backend/ops/axis.h"
#include "backend/ops/backward.h"
#include "backend/ops/elementwise.h"
#include "backend/ops/register.h"
#include "backend/parallel.h"

namespace nn::backend {
namespace {

// The op's name in messages: index_select calls gather under its own name.
std::string name_of(const Attrs& a, const char* fallback) { return a.get_or<std::string>("name", fallback); }

void check_ids_type(const std::string& op, const TensorType& x, const TensorType& ids) {
  if (!is_integral(ids.dtype)) throw Error(op + ": ids must be an integer tensor, got " + ids.str());
  if (ids.shape.ndim() != x.shape.ndim())
    throw Error(op + ": ids " + ids.str() + " must have as many dimensions as " + x.str());
}

// An extent along an axis other than the op's: a and b equal, or one is 1.
int64_t joint_extent(const std::string& op, const TensorType& a, const TensorType& b, int d, int axis) {
  const int64_t m = a.shape[d], n = b.shape[d];
  if (m != n && m != 1 && n != 1)
    throw Error(op + ": " + a.str() + " and " + b.str() + " differ in axis " + std::to_string(d) +
                " (the axes other than axis " + std::to_string(axis) + " must be equal or 1)");
  return m == 1 ? n : m;
}

// Element strides of a contiguous shape, 0 along axes it is broadcast in.
std::vector<int64_t> strides_in(const Shape& s, const Shape& over) {
  std::vector<int64_t> st(size_t(s.ndim()));
  int64_t k = 1;
  for (int d = s.ndim() - 1; d >= 0; --d) {
    st[size_t(d)] = s[d] == 1 && over[d] != 1 ? 0 : k;
    k *= s[d];
  }
  return st;
}

// The ids as i64, each checked to lie in [0, n) before any parallel loop.
std::vector<int64_t> checked_ids(const std::string& op, const Tensor& ids, int64_t n, int axis, const Tensor& x) {
  std::vector<int64_t> v(size_t(ids.numel()));
  visit_dtype(ids.dtype(), [&]<class T>() {
    const T* p = ids.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(p[i]);
  });
  for (int64_t id : v)
    if (id < 0 || id >= n)
      throw Error(op + ": id " + std::to_string(id) + " is out of range for axis " + std::to_string(axis) +
                  " of size " + std::to_string(n) + " in " + x.type().str());
  return v;
}

// Calls f(p, index, a, b) for the elements p in [begin, end) of the
// contiguous shape `over`, in order: index is p's multi-index, a and b its
// offsets along the strides sa and sb.
template <class F>
void walk(const Shape& over, const std::vector<int64_t>& sa, const std::vector<int64_t>& sb, int64_t begin,
          int64_t end, F&& f) {
  const int nd = over.ndim();
  std::vector<int64_t> idx(static_cast<size_t>(nd));
  int64_t a = 0, b = 0, rest = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[size_t(d)] = over[d] ? rest % over[d] : 0;
    rest = over[d] ? rest / over[d] : 0;
    a += idx[size_t(d)] * sa[size_t(d)];
    b += idx[size_t(d)] * sb[size_t(d)];
  }
  for (int64_t p = begin; p < end; ++p) {
    f(p, idx, a, b);
    for (int d = nd - 1; d >= 0; --d) {  // the odometer's next step
      a += sa[size_t(d)];
      b += sb[size_t(d)];
      if (++idx[size_t(d)] < over[d]) break;
      a -= sa[size_t(d)] * over[d];
      b -= sb[size_t(d)] * over[d];
      idx[size_t(d)] = 0;
    }
  }
}

// ---- gather: inputs (x, ids), attr axis ------------------------------------------
OutTypes gather_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType &x = in[0], &ids = in[1];
  const std::string op = name_of(attrs, "gather");
  const int axis = checked_axis(op.c_str(), attrs.get<int64_t>("axis"), x);
  check_ids_type(op, x, ids);
  Shape out = ids.shape;
  for (int d = 0; d < x.shape.ndim(); ++d)
    if (d != axis) out[d] = joint_extent(op, x, ids, d, axis);
  return {TensorType{x.dtype, out, x.device}};
}

void gather_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor &x = in[0], &ids = in[1];
  Tensor& y = out[0];
  const std::string op = name_of(attrs, "gather");
  const int axis = checked_axis(op.c_str(), attrs.get<int64_t>("axis"), x.type());
  const std::vector<int64_t> idv = checked_ids(op, ids, x.shape()[axis], axis, x);
  std::vector<int64_t> sx = strides_in(x.shape(), y.shape()), si = strides_in(ids.shape(), y.shape());
  const int64_t step = sx[size_t(axis)];
  sx[size_t(axis)] = 0;  // the axis's offset comes from the id
  const size_t es = dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(y.raw_data());
  parallel_for(y.numel(), kParallelGrain / 4, [&](int64_t b, int64_t e) {
    walk(y.shape(), sx, si, b, e, [&](int64_t p, const std::vector<int64_t>&, int64_t xo, int64_t io) {
      std::memcpy(dst + size_t(p) * es, src + size_t(xo + idv[size_t(io)] * step) * es, es);
    });
  });
}

// ---- scatter_add: inputs (x, ids, v), attr axis ----------------------------------
// The shape the ids and v are walked over: x's, with ids' and v's joint
// extent along the axis.
Shape scatter_shape(const std::string& op, const TensorType& x, const TensorType& ids, const TensorType& v,
                    int axis) {
  Shape s = x.shape;
  const int64_t m = ids.shape[axis], n = v.shape[axis];
  if (m != n && m != 1 && n != 1)
    throw Error(op + ": ids " + ids.str() + " and values " + v.str() + " differ in axis " + std::to_string(axis));
  s[axis] = m == 1 ? n : m;
  for (int d = 0; d < x.shape.ndim(); ++d) {
    if (d == axis) continue;
    for (const TensorType* t : {&ids, &v})
      if (t->shape[d] != 1 && t->shape[d] != x.shape[d])
        throw Error(op + ": " + t->str() + " does not fit " + x.str() + " in axis " + std::to_string(d) +
                    " (the axes other than axis " + std::to_string(axis) + " must be equal or 1)");
  }
  return s;
}

OutTypes scatter_add_type(std::span<const TensorType> in, const Attrs& attrs) {
  const TensorType &x = in[0], &ids = in[1], &v = in[2];
  const int axis = checked_axis("scatter_add", attrs.get<int64_t>("axis"), x);
  check_ids_type("scatter_add", x, ids);
  if (v.shape.ndim() != x.shape.ndim())
    throw Error("scatter_add: values " + v.str() + " must have as many dimensions as " + x.str());
  if (v.dtype == DType::boolean && x.dtype != DType::boolean)
    throw Error("scatter_add: cannot add bool values " + v.str() + " into " + x.str());
  if (is_floating(v.dtype) && !is_floating(x.dtype))
    throw Error("scatter_add: cannot add float values " + v.str() + " into " + x.str() + " (astype it first)");
  scatter_shape("scatter_add", x, ids, v, axis);
  return {TensorType{x.dtype, x.shape, x.device}};
}

// Adds in the order of the walk, on one thread: the sums do not depend on
// the thread count.
void scatter_add_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const Tensor &x = in[0], &ids = in[1];
  Tensor& y = out[0];
  const int axis = checked_axis("scatter_add", attrs.get<int64_t>("axis"), x.type());
  const Tensor v = ew::converted(in[2], x.dtype());
  const Shape s = scatter_shape("scatter_add", x.type(), ids.type(), v.type(), axis);
  const std::vector<int64_t> idv = checked_ids("scatter_add", ids, x.shape()[axis], axis, x);
  std::vector<int64_t> sy = strides_in(y.shape(), s), si = strides_in(ids.shape(), s),
                       sv = strides_in(v.shape(), s);
  const int64_t step = contiguous_strides(y.shape())[size_t(axis)];
  sy[size_t(axis)] = 0;
  if (y.raw_data() != x.raw_data()) std::memcpy(y.raw_data(), x.raw_data(), x.nbytes());
  ew::check_cpu_dtype("scatter_add", y.dtype());
  visit_dtype(y.dtype(), [&]<class T>() {
    T* dst = y.data<T>();
    const T* src = v.data<T>();
    // Two walks share one odometer: y's and ids' offsets, then v's from the index.
    walk(s, sy, si, 0, s.numel(), [&](int64_t, const std::vector<int64_t>& idx, int64_t yo, int64_t io) {
      int64_t vo = 0;
      for (size_t d = 0; d < idx.size(); ++d) vo += idx[d] * sv[d];
      T& t = dst[yo + idv[size_t(io)] * step];
      if constexpr (std::is_same_v<T, bool>) t = t || src[vo];
      else t = T(t + src[vo]);
    });
  });
}

Tensor zeros_on(const Shape& s, const Tensor& like) {
  return to_device(zeros(s, like.dtype()), like.device());
}

std::vector<Tensor> gather_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &ids = a.inputs[1], &g = a.grads[0];
  if (!bw::wants(x)) return {Tensor(), Tensor()};
  const int axis = checked_axis("gather", a.attrs.get<int64_t>("axis"), x.type());
  Shape xe = g.shape();  // x broadcast to the result's extents along the other axes
  xe[axis] = x.shape()[axis];
  return {bw::fit(scatter_add(zeros_on(xe, g), ids, g, axis), x), Tensor()};
}

std::vector<Tensor> scatter_add_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &ids = a.inputs[1], &v = a.inputs[2], &g = a.grads[0];
  Tensor gv;
  if (bw::wants(v)) {
    const int axis = checked_axis("scatter_add", a.attrs.get<int64_t>("axis"), x.type());
    const Shape s = scatter_shape("scatter_add", x.type(), ids.type(), v.type(), axis);
    gv = bw::fit(broadcast_to(gather(g, ids, axis), s), v);
  }
  return {bw::fit(g, x), Tensor(), gv};
}

}  // namespace

Tensor gather(const Tensor& x, const Tensor& ids, int64_t axis) {
  return call(op(OpId::gather), {x, ids}, Attrs{{"axis", axis}});
}

Tensor scatter_add(const Tensor& x, const Tensor& ids, const Tensor& v, int64_t axis) {
  // A single value (a host number) is added at every id: it broadcasts.
  const Tensor values = v.ndim() == 0 && x.ndim() > 0 ? reshape(v, std::vector<int64_t>(size_t(x.ndim()), 1)) : v;
  return call(op(OpId::scatter_add), {x, ids, values}, Attrs{{"axis", axis}});
}

// A gather whose ids lie along `axis` and broadcast along the others.
Tensor index_select(const Tensor& x, const Tensor& ids, int64_t axis) {
  const int a = checked_axis("index_select", axis, x.type());
  if (!is_integral(ids.dtype())) throw Error("index_select: ids must be an integer tensor, got " + ids.type().str());
  if (ids.ndim() > 1) throw Error("index_select: ids must be a 1-d tensor, got " + ids.type().str());
  std::vector<int64_t> shape(size_t(x.ndim()), 1);
  shape[size_t(a)] = ids.numel();
  return call(op(OpId::gather), {x, reshape(ids, shape)}, Attrs{{"axis", int64_t(a)}, {"name", std::string("index_select")}});
}

void register_gather_ops(Registry& r) {
  r.add(OpDef{.id = OpId::gather, .num_inputs = 2, .type_rule = gather_type, .cpu = gather_kernel,
              .backward = gather_backward});
  r.add(OpDef{.id = OpId::scatter_add, .num_inputs = 3, .type_rule = scatter_add_type, .cpu = scatter_add_kernel,
              .backward = scatter_add_backward});
}

}  // namespace nn::backend
