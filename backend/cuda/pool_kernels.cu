// Pooling kernels (pool_kernels.h), written to give the CPU kernels'
// results (backend/ops/nn_pool.cpp): windows clipped to the input, the first
// maximum (and the first NaN) winning, padding counted in the average's
// divisor; the gradients are gathered per input pixel, adding in the CPU's
// order (row-major over the outputs), so there are no atomics. f16 and bf16
// compare and add in float (M), rounding each result once. Flat indices
// split with 32-bit dividers below 2^31 elements (index_divider.h).
#include "backend/cuda/device_math.cuh"
#include "backend/cuda/pool_kernels.h"

namespace nn::backend::cuda {
namespace {

// ---- pooling ----
struct Window {
  int64_t y0, y1, x0, x1;
};
__device__ inline Window window(const PoolLaunch& g, int64_t oy, int64_t ox) {
  const int64_t ys = oy * g.sh - g.ph, xs = ox * g.sw - g.pw;
  return {ys > 0 ? ys : 0, ys + g.kh < g.h ? ys + g.kh : g.h, xs > 0 ? xs : 0, xs + g.kw < g.w ? xs + g.kw : g.w};
}

// The outputs whose windows hold input row (or column) i: [lo, hi).
__device__ inline void covering(int64_t i, int64_t pad, int64_t k, int64_t stride, int64_t out, int64_t& lo,
                                int64_t& hi) {
  const int64_t a = i + pad - k + 1;  // the first output's window start must be >= i - k + 1
  lo = a <= 0 ? 0 : (a + stride - 1) / stride;
  hi = (i + pad) / stride + 1;
  if (hi > out) hi = out;
}

// Flat index i of planes x rows x cols as its plane, row and column: with
// the 32-bit dividers div when the launch has them, else with 64-bit `/`.
struct PlaneIndex {
  int64_t p, r, c;
};
__device__ inline PlaneIndex split_plane(const PoolLaunch& g, const IndexDivider* div, int64_t rows, int64_t cols,
                                         int64_t i) {
  int64_t part[3];
  auto put = [&](int d, int64_t v) { part[d] = v; };
  if (g.index32) {
    split_index32(div, 3, uint32_t(i), put);
  } else {
    const int64_t size[3] = {0, rows, cols};
    split_index(size, 3, i, put);
  }
  return {part[0], part[1], part[2]};
}

// Calls f(o) for the position o (in its plane) of every output whose window
// holds input pixel (iy, ix), in row-major order.
template <class F>
__device__ inline void for_each_covering(const PoolLaunch& g, int64_t iy, int64_t ix, F f) {
  int64_t oy0, oy1, ox0, ox1;
  covering(iy, g.ph, g.kh, g.sh, g.oh, oy0, oy1);
  covering(ix, g.pw, g.kw, g.sw, g.ow, ox0, ox1);
  for (int64_t oy = oy0; oy < oy1; ++oy)
    for (int64_t ox = ox0; ox < ox1; ++ox) f(oy * g.ow + ox);
}

template <class T, class I>
__global__ void max_pool(PoolLaunch g, const T* x, T* y, I* idx) {
  const int64_t total = g.planes * g.oh * g.ow;
  for (int64_t o = global_index(); o < total; o += grid_stride()) {
    const PlaneIndex at = split_plane(g, g.out_div, g.oh, g.ow, o);
    const T* xp = x + at.p * g.h * g.w;
    const Window win = window(g, at.r, at.c);
    int64_t best_i = win.y0 * g.w + win.x0;
    math_t<T> best = widen(xp[best_i]);
    bool nan = false;
    for (int64_t a = win.y0; a < win.y1; ++a)
      for (int64_t b = win.x0; b < win.x1; ++b) {
        const math_t<T> v = widen(xp[a * g.w + b]);
        if (v > best) best = v, best_i = a * g.w + b;
        nan |= v != v;
      }
    if (nan) {  // the first NaN wins
      bool found = false;
      for (int64_t a = win.y0; a < win.y1 && !found; ++a)
        for (int64_t b = win.x0; b < win.x1; ++b)
          if (widen(xp[a * g.w + b]) != widen(xp[a * g.w + b])) {
            best_i = a * g.w + b, best = widen(xp[best_i]), found = true;
            break;
          }
    }
    y[o] = narrow<T>(best);
    idx[o] = I(best_i);
  }
}

template <class T, class I>
__global__ void max_pool_grad(PoolLaunch g, const T* dy, const I* idx, T* dx) {
  const int64_t total = g.planes * g.h * g.w;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const PlaneIndex at = split_plane(g, g.in_div, g.h, g.w, e);
    const T* dyp = dy + at.p * g.oh * g.ow;
    const I* ip = idx + at.p * g.oh * g.ow;
    const int64_t pix = at.r * g.w + at.c;
    math_t<T> s = 0;
    for_each_covering(g, at.r, at.c, [&](int64_t o) {
      if (int64_t(ip[o]) == pix) s += widen(dyp[o]);
    });
    dx[e] = narrow<T>(s);
  }
}

template <class T>
__global__ void avg_pool(PoolLaunch g, const T* x, T* y) {
  const double scale = 1.0 / double(g.kh * g.kw);
  const int64_t total = g.planes * g.oh * g.ow;
  for (int64_t o = global_index(); o < total; o += grid_stride()) {
    const PlaneIndex at = split_plane(g, g.out_div, g.oh, g.ow, o);
    const T* xp = x + at.p * g.h * g.w;
    const Window win = window(g, at.r, at.c);
    math_t<T> s = 0;
    for (int64_t a = win.y0; a < win.y1; ++a)
      for (int64_t b = win.x0; b < win.x1; ++b) s += widen(xp[a * g.w + b]);
    y[o] = narrow<T>(double(s) * scale);
  }
}

template <class T>
__global__ void avg_pool_grad(PoolLaunch g, const T* dy, T* dx) {
  using M = math_t<T>;
  const M scale = M(1.0 / double(g.kh * g.kw));
  const int64_t total = g.planes * g.h * g.w;
  for (int64_t e = global_index(); e < total; e += grid_stride()) {
    const PlaneIndex at = split_plane(g, g.in_div, g.h, g.w, e);
    const T* dyp = dy + at.p * g.oh * g.ow;
    M s = M(0);
    for_each_covering(g, at.r, at.c, [&](int64_t o) { s += widen(dyp[o]) * scale; });
    dx[e] = narrow<T>(s);
  }
}

}  // namespace

void max_pool_launch(const PoolLaunch& g, const void* x, void* y, void* idx, cudaStream_t s) {
  const int64_t total = g.planes * g.oh * g.ow;
  if (total == 0) return;
  with_float_type(g.dtype, [&]<class T>() {
    if (g.wide_index)
      max_pool<T, int64_t><<<blocks_for(total), kThreads, 0, s>>>(g, static_cast<const T*>(x), static_cast<T*>(y),
                                                                  static_cast<int64_t*>(idx));
    else
      max_pool<T, int32_t><<<blocks_for(total), kThreads, 0, s>>>(g, static_cast<const T*>(x), static_cast<T*>(y),
                                                                  static_cast<int32_t*>(idx));
  });
}

void max_pool_backward_launch(const PoolLaunch& g, const void* dy, const void* idx, void* dx, cudaStream_t s) {
  const int64_t total = g.planes * g.h * g.w;
  if (total == 0) return;
  with_float_type(g.dtype, [&]<class T>() {
    if (g.wide_index)
      max_pool_grad<T, int64_t><<<blocks_for(total), kThreads, 0, s>>>(
          g, static_cast<const T*>(dy), static_cast<const int64_t*>(idx), static_cast<T*>(dx));
    else
      max_pool_grad<T, int32_t><<<blocks_for(total), kThreads, 0, s>>>(
          g, static_cast<const T*>(dy), static_cast<const int32_t*>(idx), static_cast<T*>(dx));
  });
}

void avg_pool_launch(const PoolLaunch& g, const void* x, void* y, cudaStream_t s) {
  const int64_t total = g.planes * g.oh * g.ow;
  if (total == 0) return;
  with_float_type(g.dtype, [&]<class T>() {
    avg_pool<T><<<blocks_for(total), kThreads, 0, s>>>(g, static_cast<const T*>(x), static_cast<T*>(y));
  });
}

void avg_pool_backward_launch(const PoolLaunch& g, const void* dy, void* dx, cudaStream_t s) {
  const int64_t total = g.planes * g.h * g.w;
  if (total == 0) return;
  with_float_type(g.dtype, [&]<class T>() {
    avg_pool_grad<T><<<blocks_for(total), kThreads, 0, s>>>(g, static_cast<const T*>(dy), static_cast<T*>(dx));
  });
}

}  // namespace nn::backend::cuda
