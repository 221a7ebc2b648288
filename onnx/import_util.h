// Helpers the import families share (import_*.cpp): axis normalisation,
// constants of an input's dtype, and ONNX's broadcasting of shapes.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "backend/ops.h"
#include "onnx/import_table.h"

namespace nn::onnx_io {

using Outs = std::vector<backend::Tensor>;

// An entry that is one nn op of the node's inputs.
template <backend::Tensor (*F)(const backend::Tensor&, const backend::Tensor&)>
Outs binary(const NodeContext& n) {
  return {F(n.input(0), n.input(1))};
}
template <backend::Tensor (*F)(const backend::Tensor&)>
Outs unary(const NodeContext& n) {
  return {F(n.input(0))};
}

// An axis in [-rank, rank) as one in [0, rank); anything else fails the node.
inline int64_t norm_axis(const NodeContext& n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    n.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// A 0-d constant of x's dtype (not weak: it takes part in promotion as x does).
inline backend::Tensor like(double v, const backend::Tensor& x) { return backend::scalar(v, x.dtype()); }

// NumPy broadcasting of two shapes; fails the node when they do not broadcast.
inline std::vector<int64_t> broadcast_dims(const NodeContext& n, std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() < b.size()) std::swap(a, b);
  std::vector<int64_t> out = a;
  const size_t off = a.size() - b.size();
  for (size_t i = 0; i < b.size(); ++i) {
    int64_t x = a[off + i], y = b[i];
    if (x != y && x != 1 && y != 1) n.fail("shapes do not broadcast");
    out[off + i] = x == 1 ? y : x;
  }
  return out;
}

// The one number an input holds (Range's start, TopK's k); fails otherwise.
inline double one_number(const NodeContext& n, size_t i) {
  const auto v = n.numbers(i);
  if (v.size() != 1) n.fail("input " + std::to_string(i) + " must hold one number, not " + std::to_string(v.size()));
  return v[0];
}
inline int64_t one_int(const NodeContext& n, size_t i) {
  const auto v = n.ints(i);
  if (v.size() != 1) n.fail("input " + std::to_string(i) + " must hold one number, not " + std::to_string(v.size()));
  return v[0];
}

// An i64 host tensor made without dispatch: Shape and Size give known
// values even while a graph is traced, so the shape arithmetic after them
// folds (imported_model.cpp).
inline backend::Tensor host_ints(const std::vector<int64_t>& v, const backend::Shape& shape) {
  backend::Tensor t = backend::Tensor::empty(shape, backend::DType::i64, backend::cpu_device());
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

// An index item picking one position (dropping the axis).
inline backend::IndexItem at(int64_t i) {
  backend::IndexItem it;
  it.kind = backend::IndexItem::index;
  it.i = i;
  return it;
}

inline std::vector<int64_t> dims_of(const backend::Tensor& t) {
  const auto d = t.shape().dims();
  return {d.begin(), d.end()};
}

}  // namespace nn::onnx_io
