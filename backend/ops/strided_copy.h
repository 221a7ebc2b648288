// strided_copy: the one loop behind the data-movement kernels (permute,
// broadcast_to, slice, slice assignment). It copies the elements of an n-d
// index space from one strided layout to another; strides are in elements
// and may be 0 (broadcast) or negative (a slice walking backwards).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/parallel.h"
#include "backend/shape.h"

namespace nn::backend {

struct StridedCopy {
  int ndim = 0;
  std::array<int64_t, kMaxDims> shape{};
  std::array<int64_t, kMaxDims> src_strides{};
  std::array<int64_t, kMaxDims> dst_strides{};

  void push(int64_t size, int64_t src_stride, int64_t dst_stride) {
    shape[ndim] = size;
    src_strides[ndim] = src_stride;
    dst_strides[ndim] = dst_stride;
    ++ndim;
  }
};

// Contiguous x into a contiguous y whose axis i is x's axis dims[i].
inline StridedCopy permute_copy(const Shape& x, const Shape& y, const std::vector<int64_t>& dims) {
  auto src = contiguous_strides(x);
  auto dst = contiguous_strides(y);
  StridedCopy c;
  for (size_t i = 0; i < dims.size(); ++i) c.push(x[int(dims[i])], src[size_t(dims[i])], dst[i]);
  return c;
}

// Contiguous x repeated into a contiguous tensor of shape target (NumPy
// broadcasting: x's dims line up with the target's from the right).
inline StridedCopy broadcast_copy(const Shape& x, const Shape& target) {
  auto src = contiguous_strides(x);
  auto dst = contiguous_strides(target);
  const int nx = x.ndim(), nt = target.ndim();
  StridedCopy c;
  for (int d = 0; d < nt; ++d) {
    const int xd = d - (nt - nx);
    const bool repeated = xd < 0 || x[xd] == 1;
    c.push(target[d], repeated ? 0 : src[size_t(xd)], dst[size_t(d)]);
  }
  return c;
}

namespace strided_detail {

// Drops extent-1 dims and merges neighbours that are contiguous in both
// layouts, so that a copy that is really a memcpy (or a batch of rows) runs as
// one. Returns false when the index space is empty.
inline bool simplify(StridedCopy& c) {
  StridedCopy s;
  for (int k = 0; k < c.ndim; ++k) {
    if (c.shape[k] == 0) return false;
    if (c.shape[k] == 1) continue;
    if (s.ndim > 0) {
      int p = s.ndim - 1;
      if (s.src_strides[p] == c.src_strides[k] * c.shape[k] && s.dst_strides[p] == c.dst_strides[k] * c.shape[k]) {
        s.shape[p] *= c.shape[k];
        s.src_strides[p] = c.src_strides[k];
        s.dst_strides[p] = c.dst_strides[k];
        continue;
      }
    }
    s.push(c.shape[k], c.src_strides[k], c.dst_strides[k]);
  }
  if (s.ndim == 0) s.push(1, 1, 1);  // a single element
  c = s;
  return true;
}

// The offsets of the i-th point of the first `dims` dims (row-major).
inline void outer_offsets(const StridedCopy& c, int dims, int64_t i, int64_t& so, int64_t& dof) {
  so = dof = 0;
  for (int k = dims - 1; k >= 0; --k) {
    const int64_t idx = i % c.shape[k];
    i /= c.shape[k];
    so += idx * c.src_strides[k];
    dof += idx * c.dst_strides[k];
  }
}

// A transpose-like copy: the second-innermost dim is contiguous in the source
// while the innermost is not. Row-by-row, each row would touch one cache line
// per element; 32×32 tiles keep both sides' lines in L1 instead.
template <class E>
void copy_tiled(const E* src, E* dst, const StridedCopy& c) {
  constexpr int64_t kTile = 32;
  const int outer_dims = c.ndim - 2;
  const int64_t m = c.shape[outer_dims], n = c.shape[outer_dims + 1];
  const int64_t rs = c.src_strides[outer_dims], rd = c.dst_strides[outer_dims];
  const int64_t cs = c.src_strides[outer_dims + 1], cd = c.dst_strides[outer_dims + 1];
  const int64_t tm = (m + kTile - 1) / kTile, tn = (n + kTile - 1) / kTile;
  int64_t outer = 1;
  for (int k = 0; k < outer_dims; ++k) outer *= c.shape[k];
  parallel_for(outer * tm * tn, std::max<int64_t>(1, kParallelGrain / (kTile * kTile)), [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      int64_t so, dof;
      outer_offsets(c, outer_dims, item / (tm * tn), so, dof);
      const int64_t i0 = (item / tn % tm) * kTile, j0 = (item % tn) * kTile;
      const int64_t i1 = std::min(m, i0 + kTile), j1 = std::min(n, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i) {
        const E* s = src + so + i * rs;
        E* d = dst + dof + i * rd;
        for (int64_t j = j0; j < j1; ++j) d[j * cd] = s[j * cs];
      }
    }
  });
}

template <class E>
void copy_typed(const E* src, E* dst, const StridedCopy& c) {
  if (c.ndim >= 2 && c.src_strides[c.ndim - 1] != 1 && c.src_strides[c.ndim - 2] == 1 && c.shape[c.ndim - 1] >= 8 &&
      c.shape[c.ndim - 2] >= 8) {
    copy_tiled(src, dst, c);
    return;
  }
  const int outer_dims = c.ndim - 1;
  const int64_t n = c.shape[outer_dims];
  const int64_t ss = c.src_strides[outer_dims], ds = c.dst_strides[outer_dims];
  int64_t rows = 1;
  for (int k = 0; k < outer_dims; ++k) rows *= c.shape[k];
  // Each row is one run along the innermost dim; threads take whole rows.
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
    std::array<int64_t, kMaxDims> idx{};
    int64_t so, dof;
    outer_offsets(c, outer_dims, begin, so, dof);
    for (int64_t k = outer_dims - 1, r = begin; k >= 0; --k) {
      idx[size_t(k)] = r % c.shape[size_t(k)];
      r /= c.shape[size_t(k)];
    }
    for (int64_t row = begin; row < end; ++row) {
      const E* s = src + so;
      E* d = dst + dof;
      if (ss == 1 && ds == 1) {
        std::memcpy(d, s, size_t(n) * sizeof(E));
      } else if (ds == 1) {
        for (int64_t j = 0; j < n; ++j) d[j] = s[j * ss];
      } else {
        for (int64_t j = 0; j < n; ++j) d[j * ds] = s[j * ss];
      }
      for (int k = outer_dims - 1; k >= 0; --k) {  // odometer step to the next row
        so += c.src_strides[k];
        dof += c.dst_strides[k];
        if (++idx[k] < c.shape[k]) break;
        so -= c.src_strides[k] * c.shape[k];
        dof -= c.dst_strides[k] * c.shape[k];
        idx[k] = 0;
      }
    }
  });
}

}  // namespace strided_detail

// Copies elements of elem_size bytes; the bytes are moved as they are, so the
// two sides must have the same dtype. src and dst must not overlap.
inline void strided_copy(const void* src, void* dst, size_t elem_size, StridedCopy c) {
  if (!strided_detail::simplify(c)) return;
  using namespace strided_detail;
  switch (elem_size) {
    case 1: copy_typed(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), c); break;
    case 2: copy_typed(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), c); break;
    case 4: copy_typed(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), c); break;
    default: copy_typed(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), c); break;
  }
}

}  // namespace nn::backend
