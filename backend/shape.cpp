// Shapes, strides and broadcasting.
#include "backend/shape.h"

#include "backend/error.h"

namespace nn::backend {

Shape::Shape(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) push_back(d);
}
Shape::Shape(std::span<const int64_t> dims) {
  for (int64_t d : dims) push_back(d);
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < n_; ++i) n *= d_[i];
  return n;
}

void Shape::push_back(int64_t v) {
  if (n_ == kMaxDims) throw Error("tensors have at most " + std::to_string(kMaxDims) + " dimensions");
  d_[n_++] = v;
}

void Shape::erase(int axis) {
  for (int i = axis; i + 1 < n_; ++i) d_[i] = d_[i + 1];
  --n_;
}

void Shape::insert(int axis, int64_t v) {
  if (n_ == kMaxDims) throw Error("tensors have at most " + std::to_string(kMaxDims) + " dimensions");
  for (int i = n_; i > axis; --i) d_[i] = d_[i - 1];
  d_[axis] = v;
  ++n_;
}

bool Shape::operator==(const Shape& o) const {
  if (n_ != o.n_) return false;
  for (int i = 0; i < n_; ++i)
    if (d_[i] != o.d_[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < n_; ++i) {
    if (i) s += ", ";
    s += std::to_string(d_[i]);
  }
  return s + "]";
}

std::array<int64_t, kMaxDims> contiguous_strides(const Shape& s) {
  std::array<int64_t, kMaxDims> st{};
  int64_t acc = 1;
  for (int i = s.ndim() - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out, int* bad_dim) {
  int n = std::max(a.ndim(), b.ndim());
  std::array<int64_t, kMaxDims> r{};
  for (int i = 1; i <= n; ++i) {
    int64_t da = i <= a.ndim() ? a[a.ndim() - i] : 1;
    int64_t db = i <= b.ndim() ? b[b.ndim() - i] : 1;
    if (da != db && da != 1 && db != 1) {
      if (bad_dim) *bad_dim = -i;
      return false;
    }
    r[n - i] = da == 1 ? db : da;
  }
  out = Shape(std::span<const int64_t>(r.data(), size_t(n)));
  return true;
}

bool normalize_axis(int64_t axis, int ndim, int& out) {
  if (axis < -ndim || axis >= ndim) return false;
  out = int(axis < 0 ? axis + ndim : axis);
  return true;
}

}  // namespace nn::backend
