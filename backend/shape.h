// Shapes: up to kMaxDims extents held inline, so making a tensor allocates
// nothing for its shape.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace nn::backend {

constexpr int kMaxDims = 8;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);
  static Shape of(const std::vector<int64_t>& v) { return Shape(std::span<const int64_t>(v)); }

  int ndim() const { return n_; }
  int64_t operator[](int i) const { return d_[i]; }
  int64_t& operator[](int i) { return d_[i]; }
  const int64_t* begin() const { return d_.data(); }
  const int64_t* end() const { return d_.data() + n_; }
  std::span<const int64_t> dims() const { return {d_.data(), size_t(n_)}; }
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  int64_t numel() const;
  void push_back(int64_t v);  // throws Error past kMaxDims
  void erase(int axis);
  void insert(int axis, int64_t v);
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;  // "[2, 3]"

 private:
  std::array<int64_t, kMaxDims> d_{};
  int n_ = 0;
};

// Row-major strides in elements.
std::array<int64_t, kMaxDims> contiguous_strides(const Shape& s);

// NumPy broadcasting of two shapes; returns false when they do not fit and
// sets *bad_dim to the (negative, from the end) dimension that differs.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out, int* bad_dim = nullptr);

// Normalises a possibly negative axis for a tensor of ndim dims; returns
// false when out of range.
bool normalize_axis(int64_t axis, int ndim, int& out);

}  // namespace nn::backend
