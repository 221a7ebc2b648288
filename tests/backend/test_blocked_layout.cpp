// The nChw16c layout (backend/ops/blocked_layout.h): to_blocked and
// from_blocked put every element where the layout's formula says; the
// convolutions and batch norms with `blocked` give, reordered, what their
// NCHW forms give: through oneDNN, which takes the blocked activations as
// they are, and with oneDNN off (their NCHW kernels on reordered copies, or
// nn's blocked kernels).
#include "backend/onednn.h"
#include "backend/ops/batch_norm_onednn.h"
#include "backend/ops/blocked_layout.h"

#include "nn_test_util.h"

using namespace nntest;

namespace {

Tensors run(OpId id, const std::vector<Tensor>& in, const Attrs& a) { return dispatch(op(id), in, a); }
Tensor blocked(const Tensor& t) { return run(OpId::to_blocked, {t}, {})[0]; }
Tensor plain(const Tensor& t) { return run(OpId::from_blocked, {t}, {})[0]; }

Attrs with_blocked(Attrs a) {
  a.set("blocked", true);
  return a;
}

// An activation's blocked form, or the tensor itself where its channels do not allow one.
Tensor blocked_if(const Tensor& t) { return blockable(t.shape()) ? blocked(t) : t; }
std::vector<double> plain_vals(const Tensor& t) { return vals(plain_shape(t.shape()) == t.shape() ? t : plain(t)); }

}  // namespace

TEST_CASE("to_blocked / from_blocked: element (n, c, h, w) at [n, c/16, h, w, c%16]") {
  const Shape s{2, 32, 3, 5};
  const Tensor x = iota(s);
  const Tensor b = blocked(x);
  CHECK(b.shape() == Shape{2, 2, 3, 5, 16});
  const std::vector<double> xv = vals(x), bv = vals(b);
  int64_t misplaced = 0;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 32; ++c)
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t w = 0; w < 5; ++w) {
          const size_t from = size_t(((n * 32 + c) * 3 + h) * 5 + w);
          const size_t to = size_t((((n * 2 + c / 16) * 3 + h) * 5 + w) * 16 + c % 16);
          misplaced += bv[to] != xv[from];
        }
  CHECK(misplaced == 0);
  CHECK(vals(plain(b)) == xv);
  CHECK(blocked_shape(Shape{2, 20, 3, 3}) == Shape{2, 20, 3, 3});  // 20 channels: not blockable
  CHECK(plain_shape(Shape{2, 2, 3, 5, 16}) == s);
  CHECK(error_of([] { blocked(iota(Shape{1, 8, 2, 2})); }).rfind("internal: to_blocked takes", 0) == 0);
}

TEST_CASE("conv2d and its backward ops with blocked activations equal the NCHW ones") {
  struct Case {
    int64_t n, c, h, w, o, k, stride, pad;
  };
  const Case cases[] = {
      {2, 3, 9, 9, 16, 3, 1, 1},   // a stem: plain input, blocked output
      {2, 16, 8, 8, 32, 3, 2, 1},  // blocked in and out, stride 2
      {3, 32, 5, 6, 16, 1, 1, 0},  // pointwise
      {2, 16, 6, 6, 8, 3, 1, 0},   // blocked input, plain output
  };
  const bool was_on = onednn_enabled();
  for (bool onednn : {true, false})
    for (const Case& k : cases) {
      INFO("onednn=", onednn, " c=", k.c, " o=", k.o, " stride=", k.stride);
      set_onednn_enabled(onednn);
      const Tensor x = rnd(Shape{k.n, k.c, k.h, k.w}, DType::f32, 1);
      const Tensor w = rnd(Shape{k.o, k.c, k.k, k.k}, DType::f32, 2);
      const Attrs conv{{"stride", pr(k.stride, k.stride)}, {"padding", pr(k.pad, k.pad)}, {"dilation", pr(1, 1)},
                       {"groups", int64_t(1)}};
      const Tensor y = run(OpId::conv2d, {x, w}, conv)[0];
      const Tensor yb = run(OpId::conv2d, {blocked_if(x), w}, with_blocked(conv))[0];
      CHECK(yb.shape() == blocked_shape(y.shape()));
      check_close(plain_vals(yb), vals(y));

      const Tensor dy = rnd(y.shape(), DType::f32, 3);
      Attrs input = conv;
      input.set("input_shape", x.shape());
      const Tensor dx = run(OpId::conv2d_backward_input, {dy, w}, input)[0];
      const Tensor dxb = run(OpId::conv2d_backward_input, {blocked_if(dy), w}, with_blocked(input))[0];
      CHECK(dxb.shape() == blocked_shape(x.shape()));
      check_close(plain_vals(dxb), vals(dx));

      Attrs weight = conv;
      weight.set("weight_shape", w.shape());
      const Tensor dw = run(OpId::conv2d_backward_weight, {dy, x}, weight)[0];
      const Tensor dwb = run(OpId::conv2d_backward_weight, {blocked_if(dy), blocked_if(x)}, with_blocked(weight))[0];
      CHECK(dwb.shape() == w.shape());
      check_close(vals(dwb), vals(dw), 1e-5, 1e-5);
    }
  set_onednn_enabled(was_on);
}

TEST_CASE("batch norm with blocked activations equals the NCHW kernels") {
  for (DType dt : {DType::f32, DType::f64}) {
    INFO("dtype=", dtype_name(dt));
    const Shape s{3, 32, 4, 5};
    // Channels off centre and of different spreads: the statistics matter.
    const Tensor x = rnd(s, dt, 4, 0.5, 3.0), gamma = rnd(Shape{32}, dt, 5), beta = rnd(Shape{32}, dt, 6);
    const Attrs eps{{"eps", 1e-5}};
    const Tensors train = run(OpId::batch_norm_train, {x, gamma, beta}, eps);
    const Tensors trainb = run(OpId::batch_norm_train, {blocked(x), gamma, beta}, with_blocked(eps));
    CHECK(trainb[0].shape() == blocked_shape(s));
    check_close(plain_vals(trainb[0]), vals(train[0]));
    check_close(vals(trainb[1]), vals(train[1]));
    check_close(vals(trainb[2]), vals(train[2]));
    // Normalised: each channel of y has mean beta (checked on channel 17).
    double sum = 0;
    const std::vector<double> y = vals(train[0]);
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t i = 0; i < 20; ++i) sum += y[size_t((n * 32 + 17) * 20 + i)];
    CHECK(sum / 60 == doctest::Approx(vals(beta)[17]).epsilon(1e-4));

    const Tensor applied = run(OpId::batch_norm_apply, {blocked(x), gamma, beta, train[1], train[2]}, with_blocked(eps))[0];
    check_close(plain_vals(applied), vals(train[0]));

    const Tensor dy = rnd(s, dt, 7);
    const Tensors back = run(OpId::batch_norm_backward, {dy, x, gamma, train[1], train[2]}, eps);
    const Tensors backb =
        run(OpId::batch_norm_backward, {blocked(dy), blocked(x), gamma, train[1], train[2]}, with_blocked(eps));
    check_close(plain_vals(backb[0]), vals(back[0]), 1e-5, 1e-5);
    check_close(vals(backb[1]), vals(back[1]), 1e-5, 1e-5);
    check_close(vals(backb[2]), vals(back[2]), 1e-5, 1e-5);
  }
}

TEST_CASE("batch norm's f32 backward (NCHW; blocked, through oneDNN and without) equals the NCHW kernel in f64") {
  const bool was_on = onednn_enabled();
  // Small and odd; 16 channels of 32x32 (1024 values each), where f32 sums
  // in another order show; values far from 0 beside a small spread, where
  // dx computed as a dy + b x + k would cancel.
  for (const Shape& s : {Shape{3, 32, 4, 5}, Shape{4, 16, 32, 32}, Shape{1, 48, 1, 1}})
    for (double lo : {0.5, 1000.0})
      for (bool onednn : {true, false}) {
        INFO("shape=", s.str(), " x from ", lo, " onednn=", onednn);
        set_onednn_enabled(onednn);
        const int64_t c = s[1];
        const Tensor x = rnd(s, DType::f32, 11, lo, lo + 2.5), dy = rnd(s, DType::f32, 12);
        const Tensor gamma = rnd(Shape{c}, DType::f32, 13), beta = rnd(Shape{c}, DType::f32, 14);
        const Attrs eps{{"eps", 1e-5}};
        const Tensors stats = run(OpId::batch_norm_train, {x, gamma, beta}, eps);
        auto f64 = [](const Tensor& t) { return from_doubles(vals(t), t.shape(), DType::f64); };
        const Tensors want =
            run(OpId::batch_norm_backward, {f64(dy), f64(x), f64(gamma), f64(stats[1]), f64(stats[2])}, eps);
        const Tensors nchw = run(OpId::batch_norm_backward, {dy, x, gamma, stats[1], stats[2]}, eps);
        const Tensors got =
            run(OpId::batch_norm_backward, {blocked(dy), blocked(x), gamma, stats[1], stats[2]}, with_blocked(eps));
        if (onednn && onednn_built()) CHECK(onednn_batch_norm_cached() > 0);  // oneDNN took it
        for (const Tensor& dx : {plain(got[0]), nchw[0]}) check_close(vals(dx), vals(want[0]), 1e-5, 2e-5);
        for (const Tensors* r : {&got, &nchw}) {
          check_close(vals((*r)[1]), vals(want[1]), 1e-5, 1e-4);
          check_close(vals((*r)[2]), vals(want[2]), 1e-5, 1e-4);
        }
      }
  set_onednn_enabled(was_on);
}

TEST_CASE("max_pool2d and its backward with blocked activations equal the NCHW ones, indices and all") {
  struct Case {
    int64_t h, w, k, stride, pad;
  };
  const Case cases[] = {
      {8, 8, 2, 2, 0},  // the common 2x2 windows
      {5, 7, 2, 2, 0},  // odd: the last row and column in no window
      {6, 6, 3, 2, 1},  // padded, overlapping windows
      {4, 5, 2, 1, 0},  // stride 1: every inner pixel in four windows
  };
  for (DType dt : {DType::f32, DType::f64})  // f64: the NCHW kernel on reordered copies
    for (const Case& k : cases) {
      INFO("dtype=", dtype_name(dt), " h=", k.h, " w=", k.w, " k=", k.k, " stride=", k.stride, " pad=", k.pad);
      const Shape s{2, 32, k.h, k.w};
      // Values from a few levels: windows with ties; a NaN in some lanes.
      std::vector<double> xv = vals(rnd(s, DType::f64, 21));
      for (double& v : xv) v = std::round(v * 2);
      xv[5] = xv[200] = xv[size_t(s.numel() - 1)] = NAN;
      const Tensor x = from_doubles(xv, s, dt);
      const Attrs pool{{"kernel", pr(k.k, k.k)}, {"stride", pr(k.stride, k.stride)}, {"padding", pr(k.pad, k.pad)}};
      const Tensors y = run(OpId::max_pool2d, {x}, pool);
      const Tensors yb = run(OpId::max_pool2d, {blocked(x)}, with_blocked(pool));
      CHECK(yb[0].shape() == blocked_shape(y[0].shape()));
      CHECK(yb[1].shape() == blocked_shape(y[1].shape()));
      const std::vector<double> want = vals(y[0]), got = plain_vals(yb[0]);
      REQUIRE(got.size() == want.size());
      int64_t differ = 0;
      for (size_t i = 0; i < got.size(); ++i) differ += !(got[i] == want[i] || (got[i] != got[i] && want[i] != want[i]));
      CHECK(differ == 0);
      CHECK(plain_vals(yb[1]) == vals(y[1]));  // the same first maximum (or first NaN) of every window

      Attrs back = pool;
      back.set("input_shape", s);
      const Tensor dy = rnd(y[0].shape(), dt, 22);
      const Tensor dx = run(OpId::max_pool2d_backward, {dy, y[1]}, back)[0];
      const Tensor dxb = run(OpId::max_pool2d_backward, {blocked(dy), yb[1]}, with_blocked(back))[0];
      CHECK(dxb.shape() == blocked_shape(s));
      check_close(plain_vals(dxb), vals(dx));
    }
}

TEST_CASE("blocked max_pool2d_backward writes every pixel: windows that tile the plane skip the zero fill") {
  // 2x2 windows with stride 2 over even sizes cover each pixel once, so the
  // kernel writes the plane without zeroing it first; over odd sizes the
  // last row and column are in no window and must still be zeroed. The
  // output starts as NaN: a pixel left unwritten shows.
  for (int64_t h : {8, 7}) {
    INFO("h=w=", h);
    const Shape s{2, 16, h, h};
    const Tensor x = rnd(s, DType::f32, 31);
    const Attrs pool{{"kernel", pr(2, 2)}, {"stride", pr(2, 2)}, {"padding", pr(0, 0)}};
    const Tensors y = run(OpId::max_pool2d, {blocked(x)}, with_blocked(pool));
    Attrs back = with_blocked(pool);
    back.set("input_shape", s);
    const Tensor dy = rnd(plain_shape(y[0].shape()), DType::f32, 32);
    Tensor dx = Tensor::empty(blocked_shape(s), DType::f32);
    std::fill(dx.data<float>(), dx.data<float>() + dx.numel(), NAN);
    const std::vector<Tensor> in{blocked(dy), y[1]};
    std::vector<Tensor> out{dx};
    op(OpId::max_pool2d_backward).cpu(in, out, back);
    // Each window's gradient lands on its maximum; a pixel in no window is 0.
    const std::vector<double> got = plain_vals(dx), xs = vals(x), dys = vals(dy);
    const int64_t oh = h / 2;
    std::vector<double> want(got.size(), 0.0);
    for (int64_t p = 0; p < 2 * 16; ++p)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < oh; ++ox) {
          int64_t at = (2 * oy) * h + 2 * ox;
          for (int64_t a = 2 * oy; a < 2 * oy + 2; ++a)
            for (int64_t b = 2 * ox; b < 2 * ox + 2; ++b)
              if (xs[size_t(p * h * h + a * h + b)] > xs[size_t(p * h * h + at)]) at = a * h + b;
          want[size_t(p * h * h + at)] = dys[size_t((p * oh + oy) * oh + ox)];
        }
    CHECK(got == want);
  }
}
