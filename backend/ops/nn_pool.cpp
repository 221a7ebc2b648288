// 2-d pooling (NCHW): the registry ops max_pool2d and avg_pool2d, their
// backward ops max_pool2d_backward and avg_pool2d_backward, CPU kernels that
// run one (sample, channel) plane per task, and the nn_ops.h functions.
//
// Semantics, as PyTorch's defaults (ceil_mode off, dilation 1):
//  - output size (H + 2p - k) / s + 1, rounded down; padding at most k/2, so
//    every window holds at least one real pixel;
//  - max_pool2d pads with -inf (padding never wins). Ties go to the first
//    maximum in row-major order of the window, which is also where the
//    gradient goes; a NaN in a window wins (NaN propagates), the first one;
//  - avg_pool2d counts the padding's zeros in the divisor
//    (count_include_pad=True): every window divides by kh*kw.
//
// max_pool2d saves the argmax of each window as a second output (i32
// offsets within the H*W plane; i64 for planes of 2^31 pixels or more), so
// the backward is one scatter, with no second search through the input.
//
// In a CPU training graph the pass blocked-layout may give max_pool2d and
// its backward the attribute `blocked`: x, y, the indices and dx are then
// in nChw16c (backend/ops/blocked_layout.h), the indices still counting
// pixels within each channel's plane, and one kernel pools 16 channels at
// once, a lane each.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "backend/nn_ops.h"
#include "backend/ops/blocked_layout.h"
#include "backend/ops/nn_common.h"
#include "backend/ops/register.h"
#include "backend/parallel.h"
#include "backend/simd_clones.h"

namespace nn::backend {
namespace {
using namespace nnops;

struct PoolGeom {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  Pair k{1, 1}, stride{1, 1}, pad{0, 0};
  int64_t in_plane() const { return h * w; }
  int64_t out_plane() const { return oh * ow; }
};

// The single source of the pools' shape errors. `op` is max_pool2d or
// avg_pool2d (the backward ops report their forward's name).
PoolGeom pool_geometry(const char* op, const TensorType& x, const Attrs& attrs) {
  if (x.shape.ndim() != 4) throw Error(std::string(op) + ": input must be 4-d [N, C, H, W], got " + x.str());
  PoolGeom g;
  g.k = get_pair(attrs, "kernel");
  g.stride = get_pair(attrs, "stride");
  g.pad = get_pair(attrs, "padding");
  const std::string name = op;
  if (g.k[0] < 1 || g.k[1] < 1) throw Error(name + ": window must be positive, got " + pair_str(g.k));
  if (g.stride[0] < 1 || g.stride[1] < 1) throw Error(name + ": stride must be positive, got " + pair_str(g.stride));
  if (g.pad[0] < 0 || g.pad[1] < 0) throw Error(name + ": padding must be non-negative, got " + pair_str(g.pad));
  require_window_attr(op, "window", g.k);
  require_window_attr(op, "stride", g.stride);
  require_window_attr(op, "padding", g.pad);
  if (2 * g.pad[0] > g.k[0] || 2 * g.pad[1] > g.k[1])
    throw Error(name + ": padding " + pair_str(g.pad) + " is more than half the window " + pair_str(g.k));
  g.planes = x.shape[0] * x.shape[1];
  g.h = x.shape[2], g.w = x.shape[3];
  const int64_t ph = g.h + 2 * g.pad[0], pw = g.w + 2 * g.pad[1];
  if (g.k[0] > ph || g.k[1] > pw)
    throw Error(name + ": the window " + std::to_string(g.k[0]) + "x" + std::to_string(g.k[1]) +
                " is larger than the padded input " + std::to_string(ph) + "x" + std::to_string(pw) + " (input " +
                x.str() + ", padding=" + pair_str(g.pad) + ")");
  g.oh = (ph - g.k[0]) / g.stride[0] + 1;
  g.ow = (pw - g.k[1]) / g.stride[1] + 1;
  return g;
}

Shape pool_out_shape(const TensorType& x, const PoolGeom& g) { return Shape{x.shape[0], x.shape[1], g.oh, g.ow}; }

// Offsets within a plane fit i32 unless the plane has 2^31 pixels or more.
DType index_dtype(const PoolGeom& g) {
  return g.in_plane() <= int64_t(std::numeric_limits<int32_t>::max()) ? DType::i32 : DType::i64;
}

// ---- type rules ----
OutTypes max_pool_type(std::span<const TensorType> in, const Attrs& attrs) {
  const int which[] = {0};
  require_float("max_pool2d", in, which);
  PoolGeom g = pool_geometry("max_pool2d", in[0], attrs);
  Shape s = pool_out_shape(in[0], g);
  return {TensorType{in[0].dtype, s, in[0].device}, TensorType{index_dtype(g), s, in[0].device}};
}

OutTypes avg_pool_type(std::span<const TensorType> in, const Attrs& attrs) {
  const int which[] = {0};
  require_float("avg_pool2d", in, which);
  PoolGeom g = pool_geometry("avg_pool2d", in[0], attrs);
  return {TensorType{in[0].dtype, pool_out_shape(in[0], g), in[0].device}};
}

// Backward ops: (dy[, indices]) with attr input_shape -> dx.
TensorType pool_backward_input(const char* op, const char* forward, std::span<const TensorType> in,
                               const Attrs& attrs, PoolGeom& g) {
  TensorType x{in[0].dtype, attrs.get<Shape>("input_shape"), in[0].device};
  g = pool_geometry(forward, x, attrs);
  if (in[0].shape != pool_out_shape(x, g))
    throw Error(std::string(op) + ": gradient " + in[0].str() + " does not fit the output " +
                pool_out_shape(x, g).str() + " of input " + x.str());
  return x;
}

OutTypes max_pool_backward_type(std::span<const TensorType> in, const Attrs& attrs) {
  const int which[] = {0};
  require_float("max_pool2d_backward", in, which);
  PoolGeom g;
  TensorType x = pool_backward_input("max_pool2d_backward", "max_pool2d", in, attrs, g);
  if (in[1].shape != in[0].shape || in[1].dtype != index_dtype(g))
    throw Error("max_pool2d_backward: indices " + in[1].str() + " do not fit the gradient " + in[0].str());
  return {x};
}

OutTypes avg_pool_backward_type(std::span<const TensorType> in, const Attrs& attrs) {
  const int which[] = {0};
  require_float("avg_pool2d_backward", in, which);
  PoolGeom g;
  return {pool_backward_input("avg_pool2d_backward", "avg_pool2d", in, attrs, g)};
}

// ---- kernels ----
// Runs f(plane) over all planes, split over the kernel threads when the
// work (about `per_plane` element visits each) is big enough.
template <class F>
void over_planes(const PoolGeom& g, int64_t per_plane, F f) {
  parallel_for(g.planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, per_plane)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) f(p);
               });
}

// The window of output (oy, ox), clipped to the input: rows [y0, y1), cols [x0, x1).
struct Window {
  int64_t y0, y1, x0, x1;
};
inline Window window(const PoolGeom& g, int64_t oy, int64_t ox) {
  const int64_t ys = oy * g.stride[0] - g.pad[0], xs = ox * g.stride[1] - g.pad[1];
  return {std::max<int64_t>(ys, 0), std::min(ys + g.k[0], g.h), std::max<int64_t>(xs, 0), std::min(xs + g.k[1], g.w)};
}

// KH, KW > 0: a window of that size and no padding (the common 2x2 and
// 3x3), so the window loops have constant trip counts and unroll; 0: any
// window, clipped to the input.
template <int KH, int KW>
inline Window window_of(const PoolGeom& g, int64_t oy, int64_t ox) {
  if constexpr (KH > 0) {
    const int64_t ys = oy * g.stride[0], xs = ox * g.stride[1];
    return {ys, ys + KH, xs, xs + KW};
  } else {
    return window(g, oy, ox);
  }
}

template <class T, class I, int KH, int KW>
void max_pool_forward(const T* x, T* y, I* idx, const PoolGeom& g) {
  over_planes(g, g.out_plane() * g.k[0] * g.k[1], [&](int64_t p) {
    const T* xp = x + p * g.in_plane();
    T* yp = y + p * g.out_plane();
    I* ip = idx + p * g.out_plane();
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const Window win = window_of<KH, KW>(g, oy, ox);
        const int64_t nh = KH > 0 ? KH : win.y1 - win.y0, nw = KW > 0 ? KW : win.x1 - win.x0;
        // Start from the window's first real pixel: an all -inf window still
        // names a pixel for the gradient. The scan selects without branches
        // (random data would mispredict every other compare); a NaN, rare,
        // is looked for again afterwards.
        const int64_t first = win.y0 * g.w + win.x0;
        int64_t best_i = first;
        T best = xp[first];
        bool nan = false;
        for (int64_t a = 0; a < nh; ++a)
          for (int64_t b = 0; b < nw; ++b) {
            const int64_t i = first + a * g.w + b;
            const T v = xp[i];
            // Strict: the first maximum wins. The index moves by a mask, as
            // GCC turns `take ? i : best_i` into a branch.
            const int64_t take = -int64_t(v > best);
            best_i ^= (best_i ^ i) & take;
            best = v > best ? v : best;
            nan |= v != v;
          }
        if (nan) {  // the first NaN wins
          for (int64_t a = 0; a < nh && best == best; ++a)
            for (int64_t b = 0; b < nw; ++b)
              if (xp[first + a * g.w + b] != xp[first + a * g.w + b]) {
                best_i = first + a * g.w + b, best = xp[best_i];
                break;
              }
        }
        yp[oy * g.ow + ox] = best;
        ip[oy * g.ow + ox] = I(best_i);
      }
  });
}

// 2x2 windows without padding (the common case). Planes go in groups of a
// few (at least 64 windows a group: a 4x4 plane has 4, and the setup of
// each plane cost more than its windows), and every group has its windows
// at the same offsets from its first plane, listed once (`from_x`; and
// `from_plane`, within their own plane, which the saved indices count
// from). Four windows at a time run as an SSE2 tournament: the top pair's
// first maximum, then the bottom pair's if strictly larger, which is the
// first maximum in row-major order; a NaN among the four (caught by the
// windows' sums; inf - inf raises a harmless false alarm) sends them to
// the scan, as do the last windows of a group. The general kernel spends
// ~4 ns a window in setup and branches.
template <class T, class I>
void max_window_2x2(const T* plane, I off, int64_t w, T& y, I& idx) {
  const I at[4] = {off, I(off + 1), I(off + w), I(off + w + 1)};
  I best = at[0];
  for (I i : at) {
    if (plane[i] != plane[i]) {  // the first NaN wins
      best = i;
      break;
    }
    if (plane[i] > plane[best]) best = i;
  }
  y = plane[best], idx = best;
}

#if defined(__SSE2__)
// Four windows: their offsets from x in `at`, within their planes in
// `within`. Adjacent: the second and fourth windows start two pixels after
// the first and third (stride 2 and an even number of windows a row), so
// each two windows' top (or bottom) pixels are four in a row, one load.
template <bool Adjacent>
inline bool max_windows_sse(const float* x, const int32_t* at, const int32_t* within, int32_t w, float* y,
                            int32_t* idx) {
  auto pairs = [&](int32_t shift, __m128& left, __m128& right) {
    __m128 lo, hi;
    if constexpr (Adjacent) {
      lo = _mm_loadu_ps(x + at[0] + shift);
      hi = _mm_loadu_ps(x + at[2] + shift);
    } else {
      lo = _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(x + at[0] + shift));
      lo = _mm_loadh_pi(lo, reinterpret_cast<const __m64*>(x + at[1] + shift));
      hi = _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(x + at[2] + shift));
      hi = _mm_loadh_pi(hi, reinterpret_cast<const __m64*>(x + at[3] + shift));
    }
    left = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    right = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
  };
  __m128 a, b, c, d;
  pairs(0, a, b);
  pairs(w, c, d);
  const __m128 sum = _mm_add_ps(_mm_add_ps(a, b), _mm_add_ps(c, d));
  if (_mm_movemask_ps(_mm_cmpunord_ps(sum, sum))) return false;
  const __m128i off = _mm_loadu_si128(reinterpret_cast<const __m128i*>(within));
  const __m128 b_wins = _mm_cmpgt_ps(b, a), d_wins = _mm_cmpgt_ps(d, c);
  const __m128 m1 = _mm_max_ps(b, a), m2 = _mm_max_ps(d, c);
  // A true compare is -1 in every bit: subtracting it adds one.
  const __m128i i1 = _mm_sub_epi32(off, _mm_castps_si128(b_wins));
  const __m128i i2 = _mm_sub_epi32(_mm_add_epi32(off, _mm_set1_epi32(w)), _mm_castps_si128(d_wins));
  const __m128i bottom_wins = _mm_castps_si128(_mm_cmpgt_ps(m2, m1));
  _mm_storeu_ps(y, _mm_max_ps(m2, m1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(idx),
                   _mm_or_si128(_mm_and_si128(bottom_wins, i2), _mm_andnot_si128(bottom_wins, i1)));
  return true;
}
#endif

template <class T, class I>
void max_pool_2x2(const T* x, T* y, I* idx, const PoolGeom& g) {
  // Offsets from a group's first plane fit I.
  const int64_t fit = int64_t(std::numeric_limits<I>::max()) / std::max<int64_t>(1, g.in_plane());
  const int64_t per_group = std::clamp<int64_t>(64 / std::max<int64_t>(1, g.out_plane()), 1, std::max<int64_t>(1, fit));
  const int64_t windows = per_group * g.out_plane();
  std::vector<I> from_x(static_cast<size_t>(windows)), from_plane(static_cast<size_t>(windows));
  for (int64_t k = 0; k < windows; ++k) {
    const int64_t q = k / g.out_plane(), oy = k % g.out_plane() / g.ow, ox = k % g.ow;
    from_plane[size_t(k)] = I(oy * g.stride[0] * g.w + ox * g.stride[1]);
    from_x[size_t(k)] = I(q * g.in_plane()) + from_plane[size_t(k)];
  }
  const int64_t groups = (g.planes + per_group - 1) / per_group;
  parallel_for(groups, std::max<int64_t>(1, kParallelGrain / (4 * windows)), [&](int64_t gb, int64_t ge) {
    for (int64_t grp = gb; grp < ge; ++grp) {
      const int64_t p0 = grp * per_group;
      const T* xg = x + p0 * g.in_plane();
      T* yg = y + p0 * g.out_plane();
      I* ig = idx + p0 * g.out_plane();
      const int64_t n = std::min(per_group, g.planes - p0) * g.out_plane();
      auto scan = [&](int64_t k) {
        max_window_2x2(xg + (from_x[size_t(k)] - from_plane[size_t(k)]), from_plane[size_t(k)], g.w, yg[k], ig[k]);
      };
      int64_t k = 0;
#if defined(__SSE2__)
      if constexpr (std::is_same_v<T, float> && std::is_same_v<I, int32_t>) {
        const bool adjacent = g.stride[1] == 2 && g.ow % 2 == 0;
        for (; k + 4 <= n; k += 4) {
          const int32_t *a = &from_x[size_t(k)], *wi = &from_plane[size_t(k)];
          const bool done = adjacent ? max_windows_sse<true>(xg, a, wi, int32_t(g.w), yg + k, ig + k)
                                     : max_windows_sse<false>(xg, a, wi, int32_t(g.w), yg + k, ig + k);
          if (!done)
            for (int64_t j = k; j < k + 4; ++j) scan(j);
        }
      }
#endif
      for (; k < n; ++k) scan(k);
    }
  });
}

template <class T, class I>
void max_pool_forward(const T* x, T* y, I* idx, const PoolGeom& g) {
  const bool nopad = g.pad[0] == 0 && g.pad[1] == 0;
  if (nopad && g.k[0] == 2 && g.k[1] == 2) max_pool_2x2(x, y, idx, g);
  else if (nopad && g.k[0] == 3 && g.k[1] == 3) max_pool_forward<T, I, 3, 3>(x, y, idx, g);
  else max_pool_forward<T, I, 0, 0>(x, y, idx, g);
}

// ---- blocked kernels (nChw16c, f32, i32 indices) ----
// The planes of 16 channels, [H, W, 16] each, split over the threads.
template <class F>
void over_blocks(const PoolGeom& g, int64_t per_block, F f) {
  parallel_for(g.planes / kChannelBlock,
               std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, per_block * kChannelBlock)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) f(p);
               });
}

// One block's planes, [H, W, 16] -> [OH, OW, 16] and the indices, each
// lane as max_pool_forward's scan: the first maximum of the window in
// row-major order. The 16 lanes are one vector (GCC's vector extensions:
// four SSE2 registers, two AVX2 or one AVX-512, NN_SIMD_CLONES), where a
// loop over the lanes was not vectorised and ran 5x slower. NaN-aware, the
// first NaN wins, which costs two more compares a pixel; the plain scan
// only reports whether it met a NaN, and the block is then scanned again.
using Floats16 = float __attribute__((vector_size(64)));
using Ints16 = int32_t __attribute__((vector_size(64)));
static_assert(kChannelBlock == 16);

template <bool NanAware>
inline bool max_pool_block_of(const float* xp, float* yp, int32_t* ip, const PoolGeom& g) {
  Ints16 nan{};
  for (int64_t oy = 0; oy < g.oh; ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const Window win = window(g, oy, ox);
      const int64_t first = win.y0 * g.w + win.x0, o = (oy * g.ow + ox) * kChannelBlock;
      Floats16 best;
      std::memcpy(&best, xp + first * kChannelBlock, sizeof best);
      Ints16 at = Ints16{} + int32_t(first);
      nan |= best != best;
      for (int64_t a = win.y0; a < win.y1; ++a)
        for (int64_t b = win.x0; b < win.x1; ++b) {
          const int32_t i = int32_t(a * g.w + b);
          Floats16 z;
          std::memcpy(&z, xp + i * kChannelBlock, sizeof z);
          Ints16 take = z > best;
          if constexpr (NanAware) take |= (z != z) & (best == best);
          else nan |= z != z;
          best = take ? z : best;
          at = take ? Ints16{} + i : at;
        }
      std::memcpy(yp + o, &best, sizeof best);
      std::memcpy(ip + o, &at, sizeof at);
    }
  bool any = false;
  for (int l = 0; l < kChannelBlock; ++l) any |= nan[l] != 0;
  return any;
}

NN_SIMD_CLONES __attribute__((flatten)) void max_pool_block(const float* xp, float* yp, int32_t* ip, const PoolGeom& g) {
  if (max_pool_block_of<false>(xp, yp, ip, g)) max_pool_block_of<true>(xp, yp, ip, g);
}

void max_pool_blocked(const float* x, float* y, int32_t* idx, const PoolGeom& g) {
  over_blocks(g, g.out_plane() * g.k[0] * g.k[1], [&](int64_t p) {
    const int64_t in = p * g.in_plane() * kChannelBlock, out = p * g.out_plane() * kChannelBlock;
    max_pool_block(x + in, y + out, idx + out, g);
  });
}

// Windows that do not overlap (stride >= window) give each pixel of a
// window the gradient where the lane's index names it and 0 elsewhere, a
// vector at a time; overlapping ones add, a lane at a time. Windows that
// tile the plane (2x2, stride 2, even sizes) write every pixel: no fill.
NN_SIMD_CLONES __attribute__((flatten)) void max_pool_scatter_block(const float* dy, const int32_t* idx, float* dx,
                                                                   const PoolGeom& g) {
  const bool tiles = g.stride == g.k && g.pad == Pair{0, 0} && g.oh * g.k[0] == g.h && g.ow * g.k[1] == g.w;
  if (!tiles) std::fill(dx, dx + g.in_plane() * kChannelBlock, 0.0f);
  if (g.stride[0] < g.k[0] || g.stride[1] < g.k[1]) {
    for (int64_t j = 0; j < g.out_plane() * kChannelBlock; ++j) dx[idx[j] * kChannelBlock + j % kChannelBlock] += dy[j];
    return;
  }
  for (int64_t oy = 0; oy < g.oh; ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const Window win = window(g, oy, ox);
      const int64_t o = (oy * g.ow + ox) * kChannelBlock;
      Floats16 d;
      Ints16 at;
      std::memcpy(&d, dy + o, sizeof d);
      std::memcpy(&at, idx + o, sizeof at);
      for (int64_t a = win.y0; a < win.y1; ++a)
        for (int64_t b = win.x0; b < win.x1; ++b) {
          const int32_t i = int32_t(a * g.w + b);
          const Floats16 v = at == i ? d : Floats16{};
          std::memcpy(dx + i * kChannelBlock, &v, sizeof v);
        }
    }
}

void max_pool_scatter_blocked(const float* dy, const int32_t* idx, float* dx, const PoolGeom& g) {
  over_blocks(g, g.in_plane() + g.out_plane(), [&](int64_t p) {
    const int64_t in = p * g.in_plane() * kChannelBlock, out = p * g.out_plane() * kChannelBlock;
    max_pool_scatter_block(dy + out, idx + out, dx + in, g);
  });
}

// Whether the blocked kernels take the op's tensors; else run_unblocked.
bool blocked_kernel_fits(const Tensor& x, const Tensor& indices) {
  return x.dtype() == DType::f32 && indices.dtype() == DType::i32;
}

void max_pool_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  if (blocked_attr(attrs)) {
    if (!blocked_kernel_fits(in[0], out[1])) return run_unblocked(max_pool_cpu, in, out, attrs);
    const PoolGeom g = pool_geometry("max_pool2d", plain_type(in[0].type()), attrs);
    if (out[0].numel() != 0) max_pool_blocked(in[0].data<float>(), out[0].data<float>(), out[1].data<int32_t>(), g);
    return;
  }
  PoolGeom g = pool_geometry("max_pool2d", in[0].type(), attrs);
  if (out[0].numel() == 0) return;
  visit_dtype(in[0].dtype() == DType::f64 ? DType::f64 : DType::f32, [&]<class T>() {
    if (out[1].dtype() == DType::i32) max_pool_forward(in[0].data<T>(), out[0].data<T>(), out[1].data<int32_t>(), g);
    else max_pool_forward(in[0].data<T>(), out[0].data<T>(), out[1].data<int64_t>(), g);
  });
}

template <class T, class I>
void max_pool_scatter(const T* dy, const I* idx, T* dx, const PoolGeom& g) {
  over_planes(g, g.in_plane() + g.out_plane(), [&](int64_t p) {
    T* dxp = dx + p * g.in_plane();
    std::fill(dxp, dxp + g.in_plane(), T(0));
    const T* dyp = dy + p * g.out_plane();
    const I* ip = idx + p * g.out_plane();
    for (int64_t i = 0; i < g.out_plane(); ++i) dxp[ip[i]] += dyp[i];  // += : windows may overlap
  });
}

void max_pool_backward_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  if (blocked_attr(attrs)) {
    if (!blocked_kernel_fits(out[0], in[1])) return run_unblocked(max_pool_backward_cpu, in, out, attrs);
    const PoolGeom g = pool_geometry("max_pool2d", plain_type(out[0].type()), attrs);
    if (out[0].numel() != 0)
      max_pool_scatter_blocked(in[0].data<float>(), in[1].data<int32_t>(), out[0].data<float>(), g);
    return;
  }
  PoolGeom g = pool_geometry("max_pool2d", out[0].type(), attrs);
  if (out[0].numel() == 0) return;
  visit_dtype(out[0].dtype() == DType::f64 ? DType::f64 : DType::f32, [&]<class T>() {
    if (in[1].dtype() == DType::i32) max_pool_scatter(in[0].data<T>(), in[1].data<int32_t>(), out[0].data<T>(), g);
    else max_pool_scatter(in[0].data<T>(), in[1].data<int64_t>(), out[0].data<T>(), g);
  });
}

template <class T, int KH, int KW>
void avg_pool_forward(const T* x, T* y, const PoolGeom& g) {
  const double scale = 1.0 / double(g.k[0] * g.k[1]);  // padding counts (count_include_pad)
  over_planes(g, g.out_plane() * g.k[0] * g.k[1], [&](int64_t p) {
    const T* xp = x + p * g.in_plane();
    T* yp = y + p * g.out_plane();
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const Window win = window_of<KH, KW>(g, oy, ox);
        const int64_t nh = KH > 0 ? KH : win.y1 - win.y0, nw = KW > 0 ? KW : win.x1 - win.x0;
        const T* w0 = xp + win.y0 * g.w + win.x0;
        T s = 0;
        for (int64_t a = 0; a < nh; ++a)
          for (int64_t b = 0; b < nw; ++b) s += w0[a * g.w + b];
        yp[oy * g.ow + ox] = T(double(s) * scale);
      }
  });
}

template <class T>
void avg_pool_forward(const T* x, T* y, const PoolGeom& g) {
  const bool nopad = g.pad[0] == 0 && g.pad[1] == 0;
  if (nopad && g.k[0] == 2 && g.k[1] == 2) avg_pool_forward<T, 2, 2>(x, y, g);
  else if (nopad && g.k[0] == 3 && g.k[1] == 3) avg_pool_forward<T, 3, 3>(x, y, g);
  else avg_pool_forward<T, 0, 0>(x, y, g);
}

template <class T>
void avg_pool_scatter(const T* dy, T* dx, const PoolGeom& g) {
  const T scale = T(1.0 / double(g.k[0] * g.k[1]));
  over_planes(g, g.in_plane() + g.out_plane() * g.k[0] * g.k[1], [&](int64_t p) {
    T* dxp = dx + p * g.in_plane();
    std::fill(dxp, dxp + g.in_plane(), T(0));
    const T* dyp = dy + p * g.out_plane();
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const Window win = window(g, oy, ox);
        const T v = dyp[oy * g.ow + ox] * scale;
        for (int64_t iy = win.y0; iy < win.y1; ++iy)
          for (int64_t ix = win.x0; ix < win.x1; ++ix) dxp[iy * g.w + ix] += v;
      }
  });
}

void avg_pool_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  PoolGeom g = pool_geometry("avg_pool2d", in[0].type(), attrs);
  if (out[0].numel() == 0) return;
  if (out[0].dtype() == DType::f64) avg_pool_forward(in[0].data<double>(), out[0].data<double>(), g);
  else avg_pool_forward(in[0].data<float>(), out[0].data<float>(), g);
}

void avg_pool_backward_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  PoolGeom g = pool_geometry("avg_pool2d", out[0].type(), attrs);
  if (out[0].numel() == 0) return;
  if (out[0].dtype() == DType::f64) avg_pool_scatter(in[0].data<double>(), out[0].data<double>(), g);
  else avg_pool_scatter(in[0].data<float>(), out[0].data<float>(), g);
}

// ---- backward rules ----
Attrs pool_attrs(const Attrs& a) {
  return Attrs{{"kernel", a.get<std::vector<int64_t>>("kernel")},
               {"stride", a.get<std::vector<int64_t>>("stride")},
               {"padding", a.get<std::vector<int64_t>>("padding")}};
}

std::vector<Tensor> max_pool_backward(const BackwardArgs& a) {
  static const OpDef& d = op(OpId::max_pool2d_backward);
  Attrs attrs = pool_attrs(a.attrs);
  attrs.set("input_shape", a.inputs[0].shape());
  return {call(d, {a.grads[0], a.outputs[1]}, attrs)};  // the indices get no gradient
}

// max_pool2d_backward is linear in dy: its adjoint gathers G at the saved
// argmax of each window, written with take over the flattened G so that it
// needs no kernel of its own (and take's backward makes it differentiable).
std::vector<Tensor> max_pool_backward_backward(const BackwardArgs& a) {
  const Tensor &idx = a.inputs[1], &G = a.grads[0];
  const Shape& xs = G.shape();
  const int64_t planes = xs[0] * xs[1], plane = xs[2] * xs[3];
  Tensor base = reshape(arange(0.0, double(planes) * double(plane), double(plane), DType::i64), {xs[0], xs[1], 1, 1});
  Tensor ids = add(astype(idx, DType::i64), base);
  return {take(reshape(G, {planes * plane}), ids), Tensor()};
}

std::vector<Tensor> avg_pool_backward(const BackwardArgs& a) {
  static const OpDef& d = op(OpId::avg_pool2d_backward);
  Attrs attrs = pool_attrs(a.attrs);
  attrs.set("input_shape", a.inputs[0].shape());
  return {call(d, {a.grads[0]}, attrs)};
}

// avg_pool2d_backward is the adjoint of avg_pool2d, whose adjoint is avg_pool2d again.
std::vector<Tensor> avg_pool_backward_backward(const BackwardArgs& a) {
  static const OpDef& d = op(OpId::avg_pool2d);
  return {call(d, {a.grads[0]}, pool_attrs(a.attrs))};
}

Tensor pool_call(const OpDef& d, const Tensor& x, Pair k, std::optional<Pair> stride, Pair padding) {
  if (x.ndim() == 3) {  // unbatched [C, H, W], as in PyTorch
    Tensor y = pool_call(d, unsqueeze(x, 0), k, stride, padding);
    return reshape(y, {y.shape()[1], y.shape()[2], y.shape()[3]});
  }
  Attrs a{{"kernel", pair_attr(k)}, {"stride", pair_attr(stride.value_or(k))}, {"padding", pair_attr(padding)}};
  return dispatch(d, std::span<const Tensor>(&x, 1), a)[0];
}

}  // namespace

// ---- nn_ops.h ------------------------------------------------------------------
Tensor max_pool2d(const Tensor& x, Pair k, std::optional<Pair> stride, Pair padding) {
  static const OpDef& d = op(OpId::max_pool2d);
  return pool_call(d, as_float(x), k, stride, padding);
}

Tensor avg_pool2d(const Tensor& x, Pair k, std::optional<Pair> stride, Pair padding) {
  static const OpDef& d = op(OpId::avg_pool2d);
  return pool_call(d, as_float(x), k, stride, padding);
}

void register_nn_pool_ops(Registry& r) {
  // `blocked` is set by the pass blocked-layout alone, after autodiff.
  r.add(OpDef{.id = OpId::max_pool2d, .num_inputs = 1, .type_rule = layout_rule<max_pool_type, 0, 1>,
              .cpu = max_pool_cpu, .backward = max_pool_backward});
  r.add(OpDef{.id = OpId::max_pool2d_backward, .num_inputs = 2, .type_rule = layout_rule<max_pool_backward_type, 0>,
              .cpu = max_pool_backward_cpu, .backward = max_pool_backward_backward});
  r.add(OpDef{.id = OpId::avg_pool2d, .num_inputs = 1, .type_rule = avg_pool_type, .cpu = avg_pool_cpu,
              .backward = avg_pool_backward});
  r.add(OpDef{.id = OpId::avg_pool2d_backward, .num_inputs = 1, .type_rule = avg_pool_backward_type,
              .cpu = avg_pool_backward_cpu, .backward = avg_pool_backward_backward});
}

}  // namespace nn::backend
