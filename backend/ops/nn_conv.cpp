// 2-d convolution (NCHW): the registry op conv2d and its backward ops
// conv2d_backward_input and conv2d_backward_weight, with CPU kernels built on
// im2col + gemm (OpenBLAS), and the ops.h-level function conv2d; also
// conv2d_relu, a conv2d and the relu reading it as one op (CPU graphs, pass
// fuse-conv-relu), and conv2d_relu_max_pool, that and the max pool reading
// it (inference graphs, pass fuse-conv-relu-pool).
//
// How the kernels run: one sample at a time per thread. A sample's im2col
// matrix [C*kh*kw, OH*OW] (one row per input channel and kernel offset, one
// column per output pixel) stays in the thread's L2 cache, and the gemm with
// the weight [O, C*kh*kw] writes the sample's output [O, OH*OW] in place: no
// transposes, no batch-sized buffers. Each thread makes single-threaded gemm
// calls; measured on the CNN benchmark's layers on 2 cores, this was 2x
// (conv 50@5x5) to 5x (conv 20@5x5) faster than one batch-wide im2col with
// one multi-threaded gemm and a transpose back to NCHW.
// A 1x1 convolution with stride 1 and no padding uses the input as its
// im2col matrix directly. Where nn is built with oneDNN, f32 convolutions
// run through its primitives instead (conv_onednn.cpp); f64 and builds
// without oneDNN keep these kernels.
//
// Backward: dx = col2im(w^T @ dy) per sample; dw = sum over samples of
// dy @ col^T, each thread summing its samples into its own buffer, the
// buffers added at the end (so dw's rounding depends on the thread count);
// db = sum(dy) over N, H, W. The backward ops are themselves differentiable
// (both are linear in each input), so second derivatives work.
#include <algorithm>
#include <string>

#include "backend/nn_ops.h"
#include "backend/interrupt.h"
#include "backend/ops/conv_geometry.h"
#include "backend/ops/blocked_layout.h"
#include "backend/ops/conv_onednn.h"
#include "backend/ops/nn_common.h"
#include "backend/ops/register.h"

namespace nn::backend {
namespace {
using namespace nnops;

std::string conv_attrs_str(const ConvGeom& g) {
  return "stride=" + pair_str(g.stride) + ", padding=" + pair_str(g.pad) + ", dilation=" + pair_str(g.dil);
}

// The single source of conv2d's shape errors (SPEC §11): every message names
// the op, the operands' full types and the dimension that differs. The
// backward ops report as conv2d too: their shapes come from a conv2d call.
ConvGeom conv_geometry(const TensorType& x, const TensorType& w, const Attrs& attrs) {
  const std::string both = "input " + x.str() + ", weight " + w.str();
  if (x.shape.ndim() != 4) throw Error("conv2d: input must be 4-d [N, C, H, W], got " + x.str());
  if (w.shape.ndim() != 4) throw Error("conv2d: weight must be 4-d [O, C/groups, kh, kw], got " + w.str());
  ConvGeom g;
  g.stride = get_pair(attrs, "stride");
  g.pad = get_pair(attrs, "padding");
  g.dil = get_pair(attrs, "dilation");
  g.groups = attrs.get<int64_t>("groups");
  if (g.groups < 1) throw Error("conv2d: groups must be positive, got " + std::to_string(g.groups));
  if (g.stride[0] < 1 || g.stride[1] < 1) throw Error("conv2d: stride must be positive, got " + pair_str(g.stride));
  if (g.dil[0] < 1 || g.dil[1] < 1) throw Error("conv2d: dilation must be positive, got " + pair_str(g.dil));
  if (g.pad[0] < 0 || g.pad[1] < 0) throw Error("conv2d: padding must be non-negative, got " + pair_str(g.pad));
  require_window_attr("conv2d", "stride", g.stride);
  require_window_attr("conv2d", "padding", g.pad);
  require_window_attr("conv2d", "dilation", g.dil);
  g.n = x.shape[0], g.c = x.shape[1], g.h = x.shape[2], g.w = x.shape[3];
  g.o = w.shape[0], g.kh = w.shape[2], g.kw = w.shape[3];
  if (g.kh < 1 || g.kw < 1) throw Error("conv2d: the weight's kernel is empty: " + both);
  require_window_attr("conv2d", "the weight's kernel", {g.kh, g.kw});
  const std::string gs = "groups=" + std::to_string(g.groups);
  if (g.c % g.groups)
    throw Error("conv2d: input " + x.str() + " has " + std::to_string(g.c) + " channels, which " + gs +
                " does not divide (weight " + w.str() + ")");
  if (g.o % g.groups)
    throw Error("conv2d: weight " + w.str() + " has " + std::to_string(g.o) + " output channels, which " + gs +
                " does not divide (input " + x.str() + ")");
  if (w.shape[1] * g.groups != g.c) {
    std::string expects = g.groups == 1 ? std::to_string(w.shape[1])
                                        : std::to_string(w.shape[1] * g.groups) + " (" + std::to_string(w.shape[1]) +
                                              " per group)";
    throw Error("conv2d: input " + x.str() + " has " + std::to_string(g.c) + " channels but weight " + w.str() +
                " expects " + expects + " (" + gs + ")");
  }
  // The kernel's extent with dilation, against the padded input.
  const int64_t eh = g.dil[0] * (g.kh - 1) + 1, ew = g.dil[1] * (g.kw - 1) + 1;
  const int64_t ph = g.h + 2 * g.pad[0], pw = g.w + 2 * g.pad[1];
  if (eh > ph || ew > pw)
    throw Error("conv2d: the kernel spans " + std::to_string(eh) + "x" + std::to_string(ew) +
                " but the padded input is " + std::to_string(ph) + "x" + std::to_string(pw) + " (" + both + ", " +
                conv_attrs_str(g) + ")");
  g.oh = (ph - eh) / g.stride[0] + 1;
  g.ow = (pw - ew) / g.stride[1] + 1;
  return g;
}

Shape out_shape(const ConvGeom& g) { return Shape{g.n, g.o, g.oh, g.ow}; }

// ---- type rules ----
// conv2d: inputs (x, w) or (x, w, b).
OutTypes conv2d_type(std::span<const TensorType> in, const Attrs& attrs) {
  if (in.size() != 2 && in.size() != 3) throw Error("internal: conv2d takes 2 or 3 inputs");
  const int which[] = {0, 1, 2};
  require_float("conv2d", in, std::span<const int>(which, in.size()));
  ConvGeom g = conv_geometry(in[0], in[1], attrs);
  if (in.size() == 3 && (in[2].shape.ndim() != 1 || in[2].shape[0] != g.o))
    throw Error("conv2d: bias " + in[2].str() + " does not fit weight " + in[1].str() + " (" + std::to_string(g.o) +
                " output channels)");
  return {TensorType{in[0].dtype, out_shape(g), in[0].device}};
}

// The gradient of a conv2d output must have that output's shape.
void check_grad(const char* op, const TensorType& grad, const ConvGeom& g, const TensorType& x, const TensorType& w) {
  if (grad.shape != out_shape(g))
    throw Error(std::string(op) + ": gradient " + grad.str() + " does not fit the output " +
                out_shape(g).str() + " of input " + x.str() + " and weight " + w.str());
}

// conv2d_backward_input: inputs (dy, w), attr input_shape -> dx.
OutTypes backward_input_type(std::span<const TensorType> in, const Attrs& attrs) {
  const int which[] = {0, 1};
  require_float("conv2d_backward_input", in, which);
  TensorType x{in[0].dtype, attrs.get<Shape>("input_shape"), in[0].device};
  ConvGeom g = conv_geometry(x, in[1], attrs);
  check_grad("conv2d_backward_input", in[0], g, x, in[1]);
  return {x};
}

// conv2d_backward_weight: inputs (dy, x), attr weight_shape -> dw.
OutTypes backward_weight_type(std::span<const TensorType> in, const Attrs& attrs) {
  const int which[] = {0, 1};
  require_float("conv2d_backward_weight", in, which);
  TensorType w{in[0].dtype, attrs.get<Shape>("weight_shape"), in[0].device};
  ConvGeom g = conv_geometry(in[1], w, attrs);
  check_grad("conv2d_backward_weight", in[0], g, in[1], w);
  return {w};
}

// ---- im2col / col2im for one sample ----
// Output columns ow in [lo, hi) read input columns ow*s + off inside [0, W).
void valid_range(int64_t off, int64_t s, int64_t width, int64_t ow, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = width - off <= 0 ? 0 : (width - off + s - 1) / s;
  hi = std::clamp<int64_t>(hi, 0, ow);
  lo = std::min(lo, hi);
}

// col[(c, i, j), (oy, ox)] = x[c, oy*sh - ph + i*dh, ox*sw - pw + j*dw], 0 in the padding.
// Each (c, i, j) row of col is an OH x OW block: the output rows that read
// padding are zeroed whole, the others copied (with the columns that read
// padding zeroed); rows without horizontal padding at stride 1 are plain
// copies, the common case, kept free of per-row bookkeeping.
template <class T>
void im2col(const T* x, const ConvGeom& g, T* col) {
  const int64_t P = g.p(), OW = g.ow, sy = g.stride[0], sx = g.stride[1];
  for (int64_t c = 0; c < g.c; ++c) {
    const T* xc = x + c * g.h * g.w;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t yoff = i * g.dil[0] - g.pad[0];
      int64_t ylo, yhi;
      valid_range(yoff, sy, g.h, g.oh, ylo, yhi);
      for (int64_t j = 0; j < g.kw; ++j) {
        T* dst = col + ((c * g.kh + i) * g.kw + j) * P;
        const int64_t xoff = j * g.dil[1] - g.pad[1];
        int64_t lo, hi;
        valid_range(xoff, sx, g.w, OW, lo, hi);
        std::fill(dst, dst + ylo * OW, T(0));
        const T* src = xc + (ylo * sy + yoff) * g.w + xoff;
        T* d = dst + ylo * OW;
        if (sx == 1 && lo == 0 && hi == OW) {
          for (int64_t oy = ylo; oy < yhi; ++oy, d += OW, src += sy * g.w)
            for (int64_t ox = 0; ox < OW; ++ox) d[ox] = src[ox];
        } else {
          for (int64_t oy = ylo; oy < yhi; ++oy, d += OW, src += sy * g.w) {
            for (int64_t ox = 0; ox < lo; ++ox) d[ox] = T(0);
            for (int64_t ox = lo; ox < hi; ++ox) d[ox] = src[ox * sx];
            for (int64_t ox = hi; ox < OW; ++ox) d[ox] = T(0);
          }
        }
        std::fill(dst + yhi * OW, dst + P, T(0));
      }
    }
  }
}

// The adjoint of im2col: x (zeroed here) gets the sum of the columns that read each pixel.
template <class T>
void col2im(const T* col, const ConvGeom& g, T* x) {
  std::fill(x, x + g.in_sample(), T(0));
  const int64_t P = g.p(), OW = g.ow, sy = g.stride[0], sx = g.stride[1];
  for (int64_t c = 0; c < g.c; ++c) {
    T* xc = x + c * g.h * g.w;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t yoff = i * g.dil[0] - g.pad[0];
      int64_t ylo, yhi;
      valid_range(yoff, sy, g.h, g.oh, ylo, yhi);
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t xoff = j * g.dil[1] - g.pad[1];
        int64_t lo, hi;
        valid_range(xoff, sx, g.w, OW, lo, hi);
        const T* src = col + ((c * g.kh + i) * g.kw + j) * P + ylo * OW;
        T* d = xc + (ylo * sy + yoff) * g.w + xoff;
        if (sx == 1) {
          for (int64_t oy = ylo; oy < yhi; ++oy, src += OW, d += sy * g.w)
            for (int64_t ox = lo; ox < hi; ++ox) d[ox] += src[ox];
        } else {
          for (int64_t oy = ylo; oy < yhi; ++oy, src += OW, d += sy * g.w)
            for (int64_t ox = lo; ox < hi; ++ox) d[ox * sx] += src[ox];
        }
      }
    }
  }
}

// ---- kernels ----
// split_batch over the samples with `threads` threads, f(t, lo, hi, col)
// getting thread t's im2col buffer of K*P elements as col, or nullptr for a
// pointwise convolution, which needs none.
template <class T, class F>
void split_batch_with_cols(const ConvGeom& g, int threads, F&& f) {
  const int64_t KP = g.k() * g.p();
  const bool direct = g.pointwise();
  Tensor cols = direct ? Tensor() : scratch(threads * KP, dtype_of<T>());
  split_batch(threads, g.n, [&](int t, int64_t lo, int64_t hi) {
    f(t, lo, hi, direct ? nullptr : cols.data<T>() + t * KP);
  });
}

template <class T>
void conv2d_forward(const Tensor& xt, const Tensor& wt, const Tensor* bt, Tensor& yt, const ConvGeom& g) {
  const T* x = xt.data<T>();
  const T* w = wt.data<T>();
  const T* b = bt ? bt->data<T>() : nullptr;
  T* y = yt.data<T>();
  const int64_t P = g.p(), og = g.og(), kg = g.kg();
  auto bias_or_zero = [&](T* yn) {
    for (int64_t o = 0; o < g.o; ++o) std::fill(yn + o * P, yn + (o + 1) * P, b ? b[o] : T(0));
  };
  if (kg == 0) {  // no input channels: an empty sum
    for (int64_t s = 0; s < g.n; ++s) bias_or_zero(y + s * g.out_sample());
    return;
  }
  const bool direct = g.pointwise();
  const InterruptCheck interrupted;
  split_batch_with_cols<T>(g, batch_threads(g.n), [&](int, int64_t lo, int64_t hi, T* col) {
    for (int64_t s = lo; s < hi && !interrupted(); ++s) {
      const T* xs = x + s * g.in_sample();
      T* ys = y + s * g.out_sample();
      const T* cs = xs;
      if (!direct) {
        im2col(xs, g, col);
        cs = col;
      }
      // The bias goes in as gemm's C with beta = 1: no extra pass over y.
      if (b) bias_or_zero(ys);
      for (int64_t gi = 0; gi < g.groups; ++gi)
        gemm(false, false, og, P, kg, w + gi * og * kg, kg, cs + gi * kg * P, P, b ? T(1) : T(0), ys + gi * og * P, P);
    }
  });
}

// conv2d, and with relu conv2d_relu: relu(conv2d(...)) in one op.
// With `blocked` (backend/ops/blocked_layout.h) oneDNN takes the blocked
// activations as they are; where it does not run, the NCHW kernel runs on
// reordered copies.
template <bool Relu>
void conv2d_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const bool blocked = blocked_attr(attrs);
  ConvGeom g = conv_geometry(plain_type(in[0].type()), in[1].type(), attrs);
  if (out[0].numel() == 0) return;
  const Tensor* b = in.size() == 3 ? &in[2] : nullptr;
  if (out[0].dtype() == DType::f32 &&
      onednn_conv_forward(g, in[0].data<float>(), in[1].data<float>(), b ? b->data<float>() : nullptr,
                          out[0].data<float>(), Relu, blocked))
    return;
  if (blocked) return run_unblocked(conv2d_cpu<Relu>, in, out, attrs);
  if (out[0].dtype() == DType::f64) conv2d_forward<double>(in[0], in[1], b, out[0], g);
  else conv2d_forward<float>(in[0], in[1], b, out[0], g);
  if constexpr (Relu) {
    if (out[0].dtype() == DType::f64) relu_in_place(out[0].data<double>(), out[0].numel());
    else relu_in_place(out[0].data<float>(), out[0].numel());
  }
}

// ---- conv2d_relu_max_pool: max_pool2d(relu(conv2d(x, w[, b]))), the pool's
// attrs named pool_kernel, pool_stride and pool_padding; only the pooled
// values (no indices: nothing differentiates it).
Attrs pool_attrs(const Attrs& a) {
  return Attrs{{"kernel", a.get<std::vector<int64_t>>("pool_kernel")},
               {"stride", a.get<std::vector<int64_t>>("pool_stride")},
               {"padding", a.get<std::vector<int64_t>>("pool_padding")}};
}

OutTypes conv_relu_pool_type(std::span<const TensorType> in, const Attrs& attrs) {
  const OutTypes conv = conv2d_type(in, attrs);
  return {op(OpId::max_pool2d).type_rule(conv, pool_attrs(attrs))[0]};
}

void conv_relu_pool_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  ConvGeom g = conv_geometry(in[0].type(), in[1].type(), attrs);
  Tensor& y = out[0];
  if (y.numel() == 0) return;
  const Tensor* b = in.size() == 3 ? &in[2] : nullptr;
  const PoolWindow window{get_pair(attrs, "pool_kernel"), get_pair(attrs, "pool_stride"),
                          get_pair(attrs, "pool_padding"), y.shape()[2], y.shape()[3]};
  if (y.dtype() == DType::f32 &&
      onednn_conv_relu_max_pool(g, window, in[0].data<float>(), in[1].data<float>(), b ? b->data<float>() : nullptr,
                                y.data<float>()))
    return;
  // Otherwise the two ops' own kernels, one after the other.
  const Attrs pool = pool_attrs(attrs);
  Tensor conv[] = {Tensor::empty(out_shape(g), y.dtype())};
  conv2d_cpu<true>(in, conv, attrs);
  const TensorType conv_type[] = {conv[0].type()};
  const OutTypes pooled_types = op(OpId::max_pool2d).type_rule(std::span<const TensorType>(conv_type), pool);
  Tensor pooled[] = {y, Tensor::empty(y.shape(), pooled_types[1].dtype)};
  op(OpId::max_pool2d).cpu(std::span<const Tensor>(conv), std::span<Tensor>(pooled), pool);
}

// dx[s] = col2im(w^T @ dy[s]), per group.
template <class T>
void conv2d_dx(const Tensor& dyt, const Tensor& wt, Tensor& dxt, const ConvGeom& g) {
  const T* dy = dyt.data<T>();
  const T* w = wt.data<T>();
  T* dx = dxt.data<T>();
  const int64_t P = g.p(), og = g.og(), kg = g.kg();
  if (kg == 0) return;
  if (og == 0 || P == 0) {  // nothing flows back
    std::fill(dx, dx + dxt.numel(), T(0));
    return;
  }
  const bool direct = g.pointwise();
  const InterruptCheck interrupted;
  split_batch_with_cols<T>(g, batch_threads(g.n), [&](int, int64_t lo, int64_t hi, T* col) {
    for (int64_t s = lo; s < hi && !interrupted(); ++s) {
      T* dxs = dx + s * g.in_sample();
      T* cs = direct ? dxs : col;  // pointwise: the columns are dx itself
      for (int64_t gi = 0; gi < g.groups; ++gi)
        gemm(true, false, kg, P, og, w + gi * og * kg, kg, dy + s * g.out_sample() + gi * og * P, P, T(0),
             cs + gi * kg * P, P);
      if (!direct) col2im(col, g, dxs);
    }
  });
}

void backward_input_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const bool blocked = blocked_attr(attrs);
  ConvGeom g = conv_geometry(plain_type(out[0].type()), in[1].type(), attrs);
  if (out[0].numel() == 0) return;
  if (out[0].dtype() == DType::f32 &&
      onednn_conv_backward_input(g, in[0].data<float>(), in[1].data<float>(), out[0].data<float>(), blocked))
    return;
  if (blocked) return run_unblocked(backward_input_cpu, in, out, attrs);
  if (out[0].dtype() == DType::f64) conv2d_dx<double>(in[0], in[1], out[0], g);
  else conv2d_dx<float>(in[0], in[1], out[0], g);
}

// dw = sum over samples of dy[s] @ col[s]^T, per group. Thread 0 sums into
// dw, the others into buffers of their own, added to dw at the end.
template <class T>
void conv2d_dw(const Tensor& dyt, const Tensor& xt, Tensor& dwt, const ConvGeom& g) {
  const T* dy = dyt.data<T>();
  const T* x = xt.data<T>();
  T* dw = dwt.data<T>();
  const int64_t P = g.p(), og = g.og(), kg = g.kg(), wsize = dwt.numel();
  if (g.n == 0 || P == 0) {
    std::fill(dw, dw + wsize, T(0));
    return;
  }
  const int threads = batch_threads(g.n);
  const bool direct = g.pointwise();
  Tensor partial = threads > 1 ? scratch((threads - 1) * wsize, dtype_of<T>()) : Tensor();
  std::vector<char> used(size_t(threads), 0);
  const InterruptCheck interrupted;
  split_batch_with_cols<T>(g, threads, [&](int t, int64_t lo, int64_t hi, T* col) {
    T* acc = t == 0 ? dw : partial.data<T>() + (t - 1) * wsize;
    for (int64_t s = lo; s < hi && !interrupted(); ++s) {
      const T* cs = x + s * g.in_sample();
      if (!direct) {
        im2col(cs, g, col);
        cs = col;
      }
      for (int64_t gi = 0; gi < g.groups; ++gi)
        gemm(false, true, og, kg, P, dy + s * g.out_sample() + gi * og * P, P, cs + gi * kg * P, P,
             s == lo ? T(0) : T(1), acc + gi * og * kg, kg);
    }
    used[size_t(t)] = 1;
  });
  for (int t = 1; t < threads; ++t) {
    if (!used[size_t(t)]) continue;
    const T* p = partial.data<T>() + (t - 1) * wsize;
    for (int64_t i = 0; i < wsize; ++i) dw[i] += p[i];
  }
}

void backward_weight_cpu(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const bool blocked = blocked_attr(attrs);
  ConvGeom g = conv_geometry(plain_type(in[1].type()), out[0].type(), attrs);
  if (out[0].numel() == 0) return;
  if (out[0].dtype() == DType::f32 &&
      onednn_conv_backward_weight(g, in[0].data<float>(), in[1].data<float>(), out[0].data<float>(), blocked))
    return;
  if (blocked) return run_unblocked(backward_weight_cpu, in, out, attrs);
  if (out[0].dtype() == DType::f64) conv2d_dw<double>(in[0], in[1], out[0], g);
  else conv2d_dw<float>(in[0], in[1], out[0], g);
}

// ---- backward rules ----
// The attributes of a conv2d call, without the backward ops' extra shape.
Attrs conv_attrs(const Attrs& a) {
  return Attrs{{"stride", a.get<std::vector<int64_t>>("stride")},
               {"padding", a.get<std::vector<int64_t>>("padding")},
               {"dilation", a.get<std::vector<int64_t>>("dilation")},
               {"groups", a.get<int64_t>("groups")}};
}

Tensor backward_input(const Tensor& dy, const Tensor& w, const Shape& x_shape, const Attrs& conv) {
  static const OpDef& d = op(OpId::conv2d_backward_input);
  Attrs a = conv;
  a.set("input_shape", x_shape);
  return call(d, {dy, w}, a);
}

Tensor backward_weight(const Tensor& dy, const Tensor& x, const Shape& w_shape, const Attrs& conv) {
  static const OpDef& d = op(OpId::conv2d_backward_weight);
  Attrs a = conv;
  a.set("weight_shape", w_shape);
  return call(d, {dy, x}, a);
}

Tensor conv_call(const Tensor& x, const Tensor& w, const Attrs& conv) {
  static const OpDef& d = op(OpId::conv2d);
  return call(d, {x, w}, conv);
}

// Only the gradients the tape asks for are made (BackwardArgs::needs): the
// input gradient of a first layer, whose input is data, is skipped, a gemm
// and a col2im per sample.
std::vector<Tensor> conv2d_backward(const BackwardArgs& a) {
  const Tensor &x = a.inputs[0], &w = a.inputs[1], &dy = a.grads[0];
  Attrs conv = conv_attrs(a.attrs);
  std::vector<Tensor> g{a.needs_grad(0) ? backward_input(dy, w, x.shape(), conv) : Tensor(),
                        a.needs_grad(1) ? backward_weight(dy, x, w.shape(), conv) : Tensor()};
  if (a.inputs.size() == 3) g.push_back(a.needs_grad(2) ? sum(dy, std::vector<int64_t>{0, 2, 3}) : Tensor());
  return g;
}

// dx = B(dy, w) is linear in dy and in w: <G, B(dy, w)> = <conv(G, w), dy>
// = <dw-of-conv(dy; G), w>, so the gradients are a conv2d and a weight grad.
std::vector<Tensor> backward_input_backward(const BackwardArgs& a) {
  const Tensor &dy = a.inputs[0], &w = a.inputs[1], &G = a.grads[0];
  Attrs conv = conv_attrs(a.attrs);
  return {a.needs_grad(0) ? conv_call(G, w, conv) : Tensor(),
          a.needs_grad(1) ? backward_weight(dy, G, w.shape(), conv) : Tensor()};
}

// dw = B(dy, x): <G, B(dy, x)> = <conv(x, G), dy> = <dx-of-conv(dy; G), x>.
std::vector<Tensor> backward_weight_backward(const BackwardArgs& a) {
  const Tensor &dy = a.inputs[0], &x = a.inputs[1], &G = a.grads[0];
  Attrs conv = conv_attrs(a.attrs);
  return {a.needs_grad(0) ? conv_call(x, G, conv) : Tensor(),
          a.needs_grad(1) ? backward_input(dy, G, x.shape(), conv) : Tensor()};
}

}  // namespace

// ---- nn_ops.h ------------------------------------------------------------------
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, Pair stride, Pair padding, Pair dilation,
              int64_t groups) {
  static const OpDef& d = op(OpId::conv2d);
  // An unbatched [C, H, W] input is a batch of one, as in PyTorch.
  if (x.ndim() == 3) {
    Tensor y = conv2d(unsqueeze(x, 0), w, b, stride, padding, dilation, groups);
    return reshape(y, {y.shape()[1], y.shape()[2], y.shape()[3]});
  }
  // Promote in the open (astype ops) so a trace and autodiff see the casts.
  DType t = promote(x.dtype(), w.dtype());
  if (b.defined()) t = promote(t, b.dtype());
  if (!is_floating(t)) t = DType::f32;
  Attrs a{{"stride", pair_attr(stride)}, {"padding", pair_attr(padding)}, {"dilation", pair_attr(dilation)},
          {"groups", groups}};
  if (b.defined()) return call(d, {astype(x, t), astype(w, t), astype(b, t)}, a);
  return call(d, {astype(x, t), astype(w, t)}, a);
}

void register_nn_conv_ops(Registry& r) {
  // `blocked` is set by the pass blocked-layout alone, after autodiff: a
  // call with it has no backward.
  r.add(OpDef{.id = OpId::conv2d, .num_inputs = -1, .type_rule = layout_rule<conv2d_type, 0>,
              .cpu = conv2d_cpu<false>, .backward = conv2d_backward});
  // Made by the pass fuse-conv-relu in CPU graphs, after autodiff: no backward.
  r.add(OpDef{.id = OpId::conv2d_relu, .num_inputs = -1, .type_rule = layout_rule<conv2d_type, 0>,
              .cpu = conv2d_cpu<true>});
  // Made by the pass fuse-conv-relu-pool in CPU inference graphs.
  r.add(OpDef{.id = OpId::conv2d_relu_max_pool, .num_inputs = -1, .type_rule = conv_relu_pool_type,
              .cpu = conv_relu_pool_cpu});
  r.add(OpDef{.id = OpId::conv2d_backward_input, .num_inputs = 2, .type_rule = layout_rule<backward_input_type, 0>,
              .cpu = backward_input_cpu, .backward = backward_input_backward});
  r.add(OpDef{.id = OpId::conv2d_backward_weight, .num_inputs = 2, .type_rule = layout_rule<backward_weight_type>,
              .cpu = backward_weight_cpu, .backward = backward_weight_backward});
}

}  // namespace nn::backend
