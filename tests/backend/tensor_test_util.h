// Small helpers shared by the backend op tests (test_*.cpp here, and through
// nn_test_util.h the neural-network op tests): tensors from host values
// (make, iota, t32/t64/tint/tbool), their values read back (vals), an
// element-by-element comparison with a tolerance (check_values), index items
// as Python writes them (at, sl), a copy that owns its memory (copy_of), and
// the NaN and infinity constants.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "backend/ops.h"

namespace nntest {
using namespace nn::backend;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A T tensor of shape s holding v in row-major order.
template <class T>
Tensor make(const std::vector<T>& v, const Shape& s) {
  REQUIRE(size_t(s.numel()) == v.size());
  Tensor t = Tensor::empty(s, dtype_of<T>());
  if (!v.empty()) std::copy(v.begin(), v.end(), t.data<T>());
  return t;
}

// 0, 1, ..., n-1 as f32 in the given shape.
inline Tensor iota(const Shape& s) {
  std::vector<float> v(size_t(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  return make(v, s);
}

// 1-d tensors (or f32 of shape s) from host numbers, cast to the dtype.
inline Tensor t32(const std::vector<double>& v, Shape s) { return from_doubles(v, s, DType::f32); }
inline Tensor t32(const std::vector<double>& v) { return t32(v, Shape{int64_t(v.size())}); }
inline Tensor t64(const std::vector<double>& v) { return from_doubles(v, Shape{int64_t(v.size())}, DType::f64); }
inline Tensor tint(const std::vector<int64_t>& v, DType d = DType::i64) {
  return from_ints(v, Shape{int64_t(v.size())}, d);
}
inline Tensor tbool(const std::vector<int64_t>& v) { return tint(v, DType::boolean); }

// vals<T>(t): the elements of a T tensor, exactly (t's dtype must be T).
template <class T>
std::vector<T> vals(const Tensor& t) {
  REQUIRE(t.dtype() == dtype_of<T>());
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

// vals(t): the elements of a tensor of any dtype, as doubles.
inline std::vector<double> vals(const Tensor& t) {
  std::vector<double> v(size_t(t.numel()));
  visit_dtype(t.dtype(), [&]<class T>() {
    for (size_t i = 0; i < v.size(); ++i) v[i] = double(t.data<T>()[i]);
  });
  return v;
}

// Element by element, NaN matching NaN and infinities exactly, the rest
// within a relative tolerance (absolute below 1).
inline void check_values(const Tensor& t, const std::vector<double>& expect, double tol = 1e-6) {
  std::vector<double> got = vals(t);
  REQUIRE(got.size() == expect.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expect[i]);
    if (std::isnan(expect[i])) CHECK(std::isnan(got[i]));
    else if (std::isinf(expect[i])) CHECK(got[i] == expect[i]);
    else CHECK(std::abs(got[i] - expect[i]) <= tol * std::max(1.0, std::abs(expect[i])));
  }
}

// A copy of a contiguous tensor, with memory of its own.
inline Tensor copy_of(const Tensor& t) {
  Tensor c = Tensor::empty(t.shape(), t.dtype());
  if (t.nbytes()) std::memcpy(c.raw_data(), t.raw_data(), t.nbytes());
  return c;
}

// The index item i.
inline IndexItem at(int64_t i) {
  IndexItem it;
  it.kind = IndexItem::index;
  it.i = i;
  return it;
}

// Python's start:stop:step; std::nullopt leaves a bound out.
inline IndexItem sl(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
                    std::optional<int64_t> step = std::nullopt) {
  IndexItem it;
  it.kind = IndexItem::slice;
  it.start = start;
  it.stop = stop;
  it.step = step;
  return it;
}

}  // namespace nntest
