// conv2d, max_pool2d and avg_pool2d: small cases by hand, every option
// (stride, padding, dilation, groups, (h, w) pairs, bias, unbatched input)
// against direct loops written here, f32 and f64, the error messages, and
// finite-difference checks of the backward rules (OpDef::backward called
// directly) including those of the backward ops themselves.
#include <limits>

#include "backend/onednn.h"
#include "backend/ops/conv_onednn.h"

#include "nn_test_util.h"

using namespace nntest;

namespace {

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  Pair stride{1, 1}, pad{0, 0}, dil{1, 1};
  int64_t groups = 1;
  bool bias = true;
};

// The convolution by its definition, in double.
std::vector<double> direct_conv(const ConvCase& k, const std::vector<double>& x, const std::vector<double>& w,
                                const std::vector<double>& b, int64_t& oh, int64_t& ow) {
  oh = (k.h + 2 * k.pad[0] - k.dil[0] * (k.kh - 1) - 1) / k.stride[0] + 1;
  ow = (k.w + 2 * k.pad[1] - k.dil[1] * (k.kw - 1) - 1) / k.stride[1] + 1;
  const int64_t cg = k.c / k.groups, og = k.o / k.groups;
  std::vector<double> y(size_t(k.n * k.o * oh * ow));
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = b.empty() ? 0.0 : b[size_t(o)];
          const int64_t g = o / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t p = 0; p < k.kh; ++p)
              for (int64_t q = 0; q < k.kw; ++q) {
                const int64_t y0 = i * k.stride[0] - k.pad[0] + p * k.dil[0];
                const int64_t x0 = j * k.stride[1] - k.pad[1] + q * k.dil[1];
                if (y0 < 0 || y0 >= k.h || x0 < 0 || x0 >= k.w) continue;
                const int64_t c = g * cg + ci;
                s += x[size_t(((n * k.c + c) * k.h + y0) * k.w + x0)] * w[size_t(((o * cg + ci) * k.kh + p) * k.kw + q)];
              }
          y[size_t(((n * k.o + o) * oh + i) * ow + j)] = s;
        }
  return y;
}

void check_conv_case(const ConvCase& k, DType dt) {
  Tensor x = rnd({k.n, k.c, k.h, k.w}, dt, 1), w = rnd({k.o, k.c / k.groups, k.kh, k.kw}, dt, 2);
  Tensor b = k.bias ? rnd({k.o}, dt, 3) : Tensor();
  int64_t oh, ow;
  std::vector<double> want = direct_conv(k, vals(x), vals(w), k.bias ? vals(b) : std::vector<double>{}, oh, ow);
  Tensor y = conv2d(x, w, b, k.stride, k.pad, k.dil, k.groups);
  CHECK(y.dtype() == dt);
  REQUIRE(y.shape() == Shape{k.n, k.o, oh, ow});
  check_close(vals(y), want, dt == DType::f32 ? 1e-4 : 1e-12, dt == DType::f32 ? 1e-4 : 1e-12);
}

const ConvCase kConvCases[] = {
    {2, 3, 7, 6, 4, 3, 3},                                        // plain, batch split over threads
    {1, 3, 7, 6, 4, 3, 3},                                        // batch of one: BLAS threads
    {5, 2, 8, 9, 3, 3, 2, {2, 1}, {1, 0}, {1, 1}, 1, false},      // stride pair, padding pair, no bias
    {3, 2, 9, 9, 4, 3, 3, {1, 1}, {2, 2}, {2, 2}},                // dilation with padding
    {2, 3, 10, 8, 3, 2, 3, {3, 2}, {1, 1}, {2, 1}},               // everything uneven
    {4, 4, 6, 6, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2},             // groups
    {3, 4, 5, 5, 8, 3, 3, {2, 2}, {1, 1}, {1, 1}, 4},             // depthwise, channel multiplier 2
    {3, 6, 5, 4, 4, 1, 1},                                        // pointwise: input as im2col
    {2, 6, 5, 4, 4, 1, 1, {2, 2}, {0, 0}, {1, 1}, 2},             // 1x1 with stride: not pointwise
    {2, 2, 3, 3, 2, 3, 3, {1, 1}, {1, 1}},                        // kernel as big as the input
};

// A case's inputs (x with a NaN at `nan_at`, w, b when the case has one)
// and its attrs.
std::vector<Tensor> conv_inputs_with_nan(const ConvCase& k, DType dt, size_t nan_at) {
  const Tensor x = rnd({k.n, k.c, k.h, k.w}, dt, 1), w = rnd({k.o, k.c / k.groups, k.kh, k.kw}, dt, 2);
  std::vector<double> xv = vals(x);
  xv[nan_at] = std::nan("");
  std::vector<Tensor> in{dt == DType::f32 ? make<float>(std::vector<float>(xv.begin(), xv.end()), x.shape())
                                         : make<double>(xv, x.shape()),
                         w};
  if (k.bias) in.push_back(rnd({k.o}, dt, 3));
  return in;
}

// got equals want value for value (a NaN for a NaN, a zero of the same
// sign); counts the NaNs and zeros seen.
void check_same_bits(const std::vector<double>& got, const std::vector<double>& want, size_t& nans, size_t& zeros) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
      ++nans;
    } else {
      CHECK(got[i] == want[i]);
      CHECK(std::signbit(got[i]) == std::signbit(want[i]));
      zeros += want[i] == 0;
    }
  }
}

Attrs conv_attrs(const ConvCase& k) {
  return Attrs{{"stride", pr(k.stride[0], k.stride[1])}, {"padding", pr(k.pad[0], k.pad[1])},
               {"dilation", pr(k.dil[0], k.dil[1])}, {"groups", k.groups}};
}

}  // namespace

TEST_CASE("conv2d by hand") {
  // 4x4 ramp, 2x2 kernel of ones, stride 2: sums of the 2x2 blocks.
  Tensor x = reshape(arange(0, 16, 1, DType::f32), {1, 1, 4, 4});
  Tensor y = conv2d(x, ones({1, 1, 2, 2}), Tensor(), pair(2));
  CHECK(y.shape() == Shape{1, 1, 2, 2});
  CHECK(vals(y) == std::vector<double>{10, 18, 42, 50});
  // Padding 1 with a 3x3 kernel of ones and a bias of 1: a corner sees 4 pixels.
  Tensor z = conv2d(ones({1, 1, 3, 3}, DType::f64), ones({1, 1, 3, 3}, DType::f64), make<double>({1}, {1}),
                    pair(1), pair(1));
  CHECK(vals(z) == std::vector<double>{5, 7, 5, 7, 10, 7, 5, 7, 5});
}

TEST_CASE("conv2d against a direct loop, f32 and f64") {
  for (DType dt : {DType::f32, DType::f64})
    for (const ConvCase& k : kConvCases) {
      INFO("case n=", k.n, " c=", k.c, " o=", k.o, " k=", k.kh, "x", k.kw, " groups=", k.groups);
      check_conv_case(k, dt);
    }
}

TEST_CASE("conv2d: unbatched input, promotion, empty batch") {
  Tensor x = rnd({3, 6, 5}, DType::f32), w = rnd({2, 3, 3, 3}, DType::f32);
  Tensor y = conv2d(x, w);
  CHECK(y.shape() == Shape{2, 4, 3});
  check_close(vals(y), vals(conv2d(unsqueeze(x, 0), w)));
  // Integer input with f32 weights computes in f32; f32 with f64 in f64.
  Tensor xi = astype(reshape(arange(0, 16, 1, DType::i64), {1, 1, 4, 4}), DType::i64);
  CHECK(conv2d(xi, ones({1, 1, 2, 2})).dtype() == DType::f32);
  CHECK(conv2d(ones({1, 1, 2, 2}), ones({1, 1, 2, 2}, DType::f64)).dtype() == DType::f64);
  CHECK(conv2d(zeros({0, 2, 4, 4}), ones({3, 2, 2, 2})).shape() == Shape{0, 3, 3, 3});
}

TEST_CASE("conv2d errors name the operands and the dimension") {
  CHECK(error_of([] { conv2d(zeros({8, 3, 32, 32}), zeros({16, 4, 3, 3})); }) ==
        "conv2d: input f32[8, 3, 32, 32] has 3 channels but weight f32[16, 4, 3, 3] expects 4 (groups=1)");
  CHECK(error_of([] { conv2d(zeros({8, 6, 32, 32}), zeros({16, 2, 3, 3}), Tensor(), pair(1), pair(0), pair(1), 2); }) ==
        "conv2d: input f32[8, 6, 32, 32] has 6 channels but weight f32[16, 2, 3, 3] expects 4 (2 per group) (groups=2)");
  CHECK(error_of([] { conv2d(zeros({1, 6, 8, 8}), zeros({4, 2, 3, 3}), Tensor(), pair(1), pair(0), pair(1), 4); }) ==
        "conv2d: input f32[1, 6, 8, 8] has 6 channels, which groups=4 does not divide (weight f32[4, 2, 3, 3])");
  CHECK(error_of([] { conv2d(zeros({1, 4, 8, 8}), zeros({6, 1, 3, 3}), Tensor(), pair(1), pair(0), pair(1), 4); }) ==
        "conv2d: weight f32[6, 1, 3, 3] has 6 output channels, which groups=4 does not divide (input f32[1, 4, 8, 8])");
  CHECK(error_of([] { conv2d(zeros({1, 3, 8, 8}), zeros({16, 3, 3, 3}), zeros({8})); }) ==
        "conv2d: bias f32[8] does not fit weight f32[16, 3, 3, 3] (16 output channels)");
  CHECK(error_of([] { conv2d(zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3}), Tensor(), pair(1), pair(0), pair(2)); }) ==
        "conv2d: the kernel spans 5x5 but the padded input is 4x4 (input f32[1, 1, 4, 4], weight f32[1, 1, 3, 3], "
        "stride=(1, 1), padding=(0, 0), dilation=(2, 2))");
  CHECK(error_of([] { conv2d(zeros({1, 3, 8, 8}), zeros({3, 3, 3})); }) ==
        "conv2d: weight must be 4-d [O, C/groups, kh, kw], got f32[3, 3, 3]");
  CHECK(error_of([] { conv2d(zeros({8, 8}), zeros({3, 3, 3, 3})); }) ==
        "conv2d: input must be 4-d [N, C, H, W], got f32[8, 8]");
  CHECK(error_of([] { conv2d(zeros({1, 3, 8, 8}), zeros({3, 3, 3, 3}), Tensor(), {0, 1}); }) ==
        "conv2d: stride must be positive, got (0, 1)");
  CHECK(error_of([] { conv2d(zeros({1, 3, 8, 8}), zeros({3, 3, 3, 3}), Tensor(), pair(1), {-1, 0}); }) ==
        "conv2d: padding must be non-negative, got (-1, 0)");
  CHECK(error_of([] { conv2d(zeros({1, 3, 8, 8}), zeros({3, 3, 3, 3}), Tensor(), pair(1), pair(0), pair(1), 0); }) ==
        "conv2d: groups must be positive, got 0");
}

// conv2d_relu (made by the pass fuse-conv-relu) is relu(conv2d(...)) bit for
// bit, through oneDNN (its ReLU applied to the blocked output before the
// reorder) and through im2col, in f32 and f64: negatives become 0, and a
// NaN stays NaN (oneDNN's own ReLU post-op would make it 0).
TEST_CASE("conv2d_relu: relu(conv2d) in one op, NaN kept") {
  const bool was_on = onednn_enabled();
  size_t nans = 0, zeros = 0;
  for (bool onednn : {true, false})
    for (DType dt : {DType::f32, DType::f64})
      for (const ConvCase& k : kConvCases) {
        INFO("onednn=", onednn, " dtype=", dtype_name(dt), " case n=", k.n, " c=", k.c, " o=", k.o);
        set_onednn_enabled(onednn);
        const std::vector<Tensor> in = conv_inputs_with_nan(k, dt, 0);
        const Attrs a = conv_attrs(k);
        const std::vector<double> want = vals(relu(call(op("conv2d"), in, a)));
        const std::vector<double> got = vals(call(op("conv2d_relu"), in, a));
        check_same_bits(got, want, nans, zeros);
      }
  set_onednn_enabled(was_on);
  CHECK(nans > 0);   // the NaN pixel reaches outputs
  CHECK(zeros > 0);  // and ReLU cut some
}

// conv2d_relu_max_pool (pass fuse-conv-relu-pool) is max_pool2d(relu(conv2d))
// bit for bit: through oneDNN, where the pool reads the primitive's blocked
// (nChw16c, 8c) or channels-last output, and through the separate kernels
// (f64, oneDNN off); with windows that pad and overlap, a NaN kept, and the
// sign of a zero as the first maximum of its window has it.
TEST_CASE("conv2d_relu_max_pool: max_pool2d(relu(conv2d)) in one op") {
  {  // By hand: x = [1, -2; 3, -4], w = +-1 (1x1), no bias: the pool of relu(+-x).
    const Tensor x = make<float>({1, -2, 3, -4}, Shape{1, 1, 2, 2});
    const Attrs a{{"stride", pr(1, 1)}, {"padding", pr(0, 0)}, {"dilation", pr(1, 1)}, {"groups", int64_t(1)},
                  {"pool_kernel", pr(2, 2)}, {"pool_stride", pr(2, 2)}, {"pool_padding", pr(0, 0)}};
    CHECK(vals(call(op("conv2d_relu_max_pool"), {x, make<float>({1}, Shape{1, 1, 1, 1})}, a)) ==
          std::vector<double>{3});
    CHECK(vals(call(op("conv2d_relu_max_pool"), {x, make<float>({-1}, Shape{1, 1, 1, 1})}, a)) ==
          std::vector<double>{4});
  }
  struct PoolCase {
    int64_t k, stride, pad;
  };
  const ConvCase convs[] = {
      {4, 1, 8, 8, 16, 3, 3, {1, 1}, {1, 1}},   // blocked output, one input channel
      {4, 16, 6, 5, 32, 3, 3, {1, 1}, {1, 1}},  // blocked in and out
      {2, 20, 9, 9, 50, 3, 3},                  // channels-last inside oneDNN
      {3, 3, 7, 6, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, false},  // few channels, no bias
      {2, 4, 6, 6, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2},         // groups
  };
  const bool was_on = onednn_enabled();
  size_t nans = 0, zeros = 0, checked = 0;
  for (bool onednn : {true, false})
    for (DType dt : {DType::f32, DType::f64})
      for (const ConvCase& k : convs)
        for (PoolCase p : {PoolCase{2, 2, 0}, PoolCase{3, 2, 1}, PoolCase{2, 1, 0}}) {
          INFO("onednn=", onednn, " dtype=", dtype_name(dt), " c=", k.c, " o=", k.o, " pool=", p.k, "/", p.stride,
               "/", p.pad);
          set_onednn_enabled(onednn);
          const std::vector<Tensor> in = conv_inputs_with_nan(k, dt, 5);
          const Attrs conv = conv_attrs(k);
          const Attrs pool{{"kernel", pr(p.k, p.k)}, {"stride", pr(p.stride, p.stride)}, {"padding", pr(p.pad, p.pad)}};
          Attrs both = conv;
          both.set("pool_kernel", pr(p.k, p.k));
          both.set("pool_stride", pr(p.stride, p.stride));
          both.set("pool_padding", pr(p.pad, p.pad));
          const std::vector<double> want = vals(call(op("max_pool2d"), {relu(call(op("conv2d"), in, conv))}, pool));
          const std::vector<double> got = vals(call(op("conv2d_relu_max_pool"), in, both));
          check_same_bits(got, want, nans, zeros);
          checked += got.size();
        }
  set_onednn_enabled(was_on);
  CHECK(nans > 0);   // the NaN pixel reaches outputs
  CHECK(zeros > 0);  // and some windows are all cut by ReLU
  CHECK(checked > 10000);
}

TEST_CASE("conv2d backward rules against finite differences (f64)") {
  const ConvCase cases[] = {
      {2, 3, 5, 4, 2, 3, 2, {1, 1}, {1, 0}},
      {3, 2, 7, 6, 2, 3, 3, {2, 1}, {1, 2}, {1, 2}},
      {2, 4, 4, 5, 6, 2, 2, {1, 2}, {1, 1}, {1, 1}, 2},
      {2, 4, 3, 3, 4, 1, 1},  // pointwise
      {1, 2, 5, 5, 2, 3, 3, {2, 2}, {1, 1}, {1, 1}, 1, false},
  };
  for (const ConvCase& k : cases) {
    INFO("case n=", k.n, " c=", k.c, " o=", k.o, " groups=", k.groups);
    Attrs a{{"stride", pr(k.stride[0], k.stride[1])}, {"padding", pr(k.pad[0], k.pad[1])},
            {"dilation", pr(k.dil[0], k.dil[1])}, {"groups", k.groups}};
    Tensor x = rnd({k.n, k.c, k.h, k.w}, DType::f64, 4), w = rnd({k.o, k.c / k.groups, k.kh, k.kw}, DType::f64, 5);
    std::vector<Tensor> in{x, w};
    if (k.bias) in.push_back(rnd({k.o}, DType::f64, 6));
    check_backward("conv2d", in, a);
    // The backward ops are linear in each input; their own rules give second derivatives.
    Tensor y = conv2d(x, w, Tensor(), k.stride, k.pad, k.dil, k.groups);
    Tensor dy = rnd(y.shape(), DType::f64, 7);
    Attrs ai = a, aw = a;
    ai.set("input_shape", x.shape());
    aw.set("weight_shape", w.shape());
    check_backward("conv2d_backward_input", {dy, w}, ai);
    check_backward("conv2d_backward_weight", {dy, x}, aw);
  }
}

TEST_CASE("conv2d weight gradient sums over a batch split across threads, f32") {
  // Against the f64 result: the per-thread partial sums must all arrive.
  Attrs a{{"stride", pr(1, 1)}, {"padding", pr(0, 0)}, {"dilation", pr(1, 1)}, {"groups", int64_t(1)},
          {"weight_shape", Shape{4, 3, 3, 3}}};
  Tensor dy = rnd({7, 4, 4, 4}, DType::f64, 8), x = rnd({7, 3, 6, 6}, DType::f64, 9);
  Tensor d64 = call(op("conv2d_backward_weight"), {dy, x}, a);
  Tensor d32 = call(op("conv2d_backward_weight"), {astype(dy, DType::f32), astype(x, DType::f32)}, a);
  check_close(vals(d32), vals(d64), 1e-4, 1e-4);
  // Summed over samples one by one, by hand.
  std::vector<double> want(size_t(d64.numel()), 0.0);
  for (int64_t s = 0; s < 7; ++s) {
    Tensor one = call(op("conv2d_backward_weight"),
                      {index(dy, {IndexItem{IndexItem::slice, 0, s, s + 1, 1}}),
                       index(x, {IndexItem{IndexItem::slice, 0, s, s + 1, 1}})},
                      a);
    auto v = vals(one);
    for (size_t i = 0; i < want.size(); ++i) want[i] += v[i];
  }
  check_close(vals(d64), want, 1e-12, 1e-12);
}

TEST_CASE("conv2d through oneDNN equals the im2col kernels, forward and both backwards, f32") {
  if (!onednn_built()) {
    MESSAGE("nn is built without oneDNN: nothing to compare");
    return;
  }
  // The cases above, one with 16 channels and more (oneDNN's blocked
  // layouts), one whose last output column stops short of the input's
  // edge (a negative right padding for oneDNN), and two whose channels are
  // no multiples of 16 (channels-last inside oneDNN).
  const bool was_on = onednn_enabled();
  std::vector<ConvCase> cases(std::begin(kConvCases), std::end(kConvCases));
  cases.push_back({4, 16, 9, 9, 32, 3, 3, {1, 1}, {1, 1}});
  cases.push_back({3, 16, 8, 8, 32, 1, 1, {2, 2}, {0, 0}, {1, 1}, 1, false});
  cases.push_back({2, 1, 12, 12, 20, 5, 5});
  cases.push_back({3, 20, 8, 8, 50, 3, 3, {1, 1}, {1, 1}});
  cases.push_back({2, 24, 7, 9, 40, 3, 2, {2, 1}, {1, 0}, {1, 2}, 1, false});
  struct Results {
    std::vector<double> y, dx, dw;
  };
  auto run = [](const ConvCase& k, bool onednn) {
    set_onednn_enabled(onednn);
    Attrs a{{"stride", pr(k.stride[0], k.stride[1])}, {"padding", pr(k.pad[0], k.pad[1])},
            {"dilation", pr(k.dil[0], k.dil[1])}, {"groups", k.groups}};
    Tensor x = rnd({k.n, k.c, k.h, k.w}, DType::f32, 11), w = rnd({k.o, k.c / k.groups, k.kh, k.kw}, DType::f32, 12);
    Tensor b = k.bias ? rnd({k.o}, DType::f32, 13) : Tensor();
    Tensor y = conv2d(x, w, b, k.stride, k.pad, k.dil, k.groups);
    Tensor dy = rnd(y.shape(), DType::f32, 14);
    Attrs ai = a, aw = a;
    ai.set("input_shape", x.shape());
    aw.set("weight_shape", w.shape());
    return Results{vals(y), vals(call(op("conv2d_backward_input"), {dy, w}, ai)),
                   vals(call(op("conv2d_backward_weight"), {dy, x}, aw))};
  };
  for (const ConvCase& k : cases) {
    INFO("case n=", k.n, " c=", k.c, " h=", k.h, " w=", k.w, " o=", k.o, " k=", k.kh, "x", k.kw, " groups=", k.groups);
    const Results one = run(k, true), im2col = run(k, false);
    check_close(one.y, im2col.y, 1e-4, 1e-4);
    check_close(one.dx, im2col.dx, 1e-4, 1e-4);
    check_close(one.dw, im2col.dw, 1e-4, 1e-4);
  }
  set_onednn_enabled(was_on);
}

// ---- pooling ----
namespace {

struct PoolCase {
  int64_t n, c, h, w;
  Pair k, stride, pad;
};

// Max (first maximum wins, padding never does) or average (divides by kh*kw).
std::vector<double> direct_pool(bool is_max, const PoolCase& p, const std::vector<double>& x, int64_t& oh,
                                int64_t& ow) {
  oh = (p.h + 2 * p.pad[0] - p.k[0]) / p.stride[0] + 1;
  ow = (p.w + 2 * p.pad[1] - p.k[1]) / p.stride[1] + 1;
  std::vector<double> y;
  for (int64_t plane = 0; plane < p.n * p.c; ++plane)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t a = 0; a < p.k[0]; ++a)
          for (int64_t b = 0; b < p.k[1]; ++b) {
            const int64_t yy = i * p.stride[0] - p.pad[0] + a, xx = j * p.stride[1] - p.pad[1] + b;
            if (yy < 0 || yy >= p.h || xx < 0 || xx >= p.w) continue;
            const double v = x[size_t((plane * p.h + yy) * p.w + xx)];
            best = std::max(best, v);
            sum += v;
          }
        y.push_back(is_max ? best : sum / double(p.k[0] * p.k[1]));
      }
  return y;
}

const PoolCase kPoolCases[] = {
    {2, 3, 6, 6, {2, 2}, {2, 2}, {0, 0}},
    {1, 2, 7, 5, {3, 3}, {2, 2}, {1, 1}},  // padding, odd sizes (rounded down)
    {2, 1, 6, 7, {3, 2}, {1, 2}, {1, 0}},  // pairs, overlapping windows
    {3, 2, 5, 5, {2, 2}, {1, 1}, {1, 1}},
    {2, 2, 7, 8, {3, 3}, {2, 2}, {0, 0}},  // 3x3 without padding: the unrolled path
    {1, 2, 6, 6, {3, 3}, {1, 1}, {0, 0}},
    {2, 1, 5, 7, {2, 2}, {1, 3}, {0, 0}},  // 2x2 without padding, uneven strides
};

}  // namespace

// The primitive cache keeps the last 64 convolutions used: 80 shapes leave
// 64, and the first ones, evicted, are made again and still right (a
// thread's bindings name primitives by id, not by an address a new one
// could reuse).
TEST_CASE("conv2d through oneDNN: the primitive cache is bounded, evicted shapes come back right") {
  if (!onednn_built()) {
    MESSAGE("nn is built without oneDNN: no cache");
    return;
  }
  const bool was_on = onednn_enabled();
  auto forward = [](int64_t h, bool onednn) {
    set_onednn_enabled(onednn);
    const Tensor x = rnd({2, 3, h, 5}, DType::f32, 21), w = rnd({4, 3, 3, 3}, DType::f32, 22);
    return vals(conv2d(x, w, rnd({4}, DType::f32, 23), Pair{1, 1}, Pair{1, 1}, Pair{1, 1}, 1));
  };
  for (int round = 0; round < 2; ++round)
    for (int64_t h = 1; h <= 80; ++h) {
      INFO("round ", round, " h=", h);
      check_close(forward(h, true), forward(h, false), 1e-5, 1e-5);
      CHECK(onednn_conv_cached() <= 64);
    }
  CHECK(onednn_conv_cached() == 64);
  set_onednn_enabled(was_on);
}

TEST_CASE("pooling by hand") {
  Tensor x = reshape(arange(0, 16, 1, DType::f32), {1, 1, 4, 4});
  CHECK(vals(max_pool2d(x, pair(2))) == std::vector<double>{5, 7, 13, 15});
  CHECK(vals(avg_pool2d(x, pair(2))) == std::vector<double>{2.5, 4.5, 10.5, 12.5});
  // count_include_pad: ones padded by 1, 2x2 windows at stride 1: a corner
  // window holds one real pixel and three padded zeros, so 1/4.
  Tensor o = ones({1, 1, 2, 2});
  CHECK(vals(avg_pool2d(o, pair(2), pair(1), pair(1))) ==
        std::vector<double>{0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25});
  // max pads with -inf: negative inputs still win over the padding.
  CHECK(vals(max_pool2d(full({1, 1, 2, 2}, -3.0), pair(2), pair(1), pair(1))) == std::vector<double>(9, -3.0));
  // Unbatched [C, H, W].
  CHECK(max_pool2d(ones({3, 4, 4}), pair(2)).shape() == Shape{3, 2, 2});
  // Stride defaults to the window; rounding down drops the last row and column.
  CHECK(max_pool2d(ones({1, 1, 5, 5}), pair(2)).shape() == Shape{1, 1, 2, 2});
}

TEST_CASE("pooling against direct loops, f32 and f64") {
  for (DType dt : {DType::f32, DType::f64})
    for (const PoolCase& p : kPoolCases) {
      Tensor x = rnd({p.n, p.c, p.h, p.w}, dt, 11);
      int64_t oh, ow;
      auto want_max = direct_pool(true, p, vals(x), oh, ow);
      auto want_avg = direct_pool(false, p, vals(x), oh, ow);
      Tensor ym = max_pool2d(x, p.k, p.stride, p.pad), ya = avg_pool2d(x, p.k, p.stride, p.pad);
      REQUIRE(ym.shape() == Shape{p.n, p.c, oh, ow});
      CHECK(ym.dtype() == dt);
      check_close(vals(ym), want_max, 0, 0);
      check_close(vals(ya), want_avg, 1e-6, 1e-7);
    }
}

TEST_CASE("max_pool2d: ties go to the first maximum; NaN propagates") {
  Tensor x = ones({1, 1, 2, 2}, DType::f64);
  Tensors out = dispatch(op("max_pool2d"), std::vector<Tensor>{x},
                         Attrs{{"kernel", pr(2, 2)}, {"stride", pr(2, 2)}, {"padding", pr(0, 0)}});
  REQUIRE(out.size() == 2);
  CHECK(out[1].dtype() == DType::i32);
  CHECK(out[1].data<int32_t>()[0] == 0);
  Attrs a{{"kernel", pr(2, 2)}, {"stride", pr(2, 2)}, {"padding", pr(0, 0)}, {"input_shape", Shape{1, 1, 2, 2}}};
  Tensor dx = call(op("max_pool2d_backward"), {ones({1, 1, 1, 1}, DType::f64), out[1]}, a);
  CHECK(vals(dx) == std::vector<double>{1, 0, 0, 0});
  Tensor n = make<float>({1, std::nanf(""), 5, 2}, {1, 1, 2, 2});
  CHECK(std::isnan(vals(max_pool2d(n, pair(2)))[0]));
}

// The 2x2 windows without padding run four at a time (f32) with a scan for
// the last windows of a plane and for groups holding a NaN: values and
// saved indices against a plain first-maximum scan, on data full of ties
// (values 0..2), with NaNs and infinities sprinkled in, for strides 2 and
// (1, 3), planes whose window count is and is not a multiple of four, and
// 37 planes of 4 windows (groups of 16 planes, the last one short).
TEST_CASE("max_pool2d 2x2: values and indices with ties, NaN and inf (f32)") {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  struct Case {
    int64_t h, w;
    Pair stride;
  };
  for (const Case& c : {Case{6, 10, {2, 2}}, Case{8, 8, {2, 2}}, Case{5, 9, {1, 3}}, Case{4, 4, {2, 2}}}) {
    const int64_t planes = c.h == 4 ? 37 : 3, oh = (c.h - 2) / c.stride[0] + 1, ow = (c.w - 2) / c.stride[1] + 1;
    std::vector<float> x(size_t(planes * c.h * c.w));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 7 + i / 5) % 3);
    x[size_t(c.w + 1)] = nan;           // a window's bottom-right
    x[size_t(c.h * c.w + 1)] = nan;     // plane 1: top-right of its first window
    x[size_t(c.h * c.w + c.w)] = nan;   // ... and its bottom-left: the first NaN wins
    x[size_t(2 * c.h * c.w + 2)] = inf;  // inf beside -inf: a sum that is NaN with no NaN
    x[size_t(2 * c.h * c.w + 3)] = -inf;
    Tensor xt = make<float>(x, {1, planes, c.h, c.w});
    Tensors out = dispatch(op("max_pool2d"), std::vector<Tensor>{xt},
                           Attrs{{"kernel", pr(2, 2)}, {"stride", pr(c.stride[0], c.stride[1])}, {"padding", pr(0, 0)}});
    const float* y = out[0].data<float>();
    const int32_t* idx = out[1].data<int32_t>();
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t best = -1;  // the first maximum in row-major order; the first NaN wins outright
          for (int64_t k = 0; k < 4; ++k) {
            const int64_t at = (i * c.stride[0] + k / 2) * c.w + j * c.stride[1] + k % 2;
            const float v = x[size_t(p * c.h * c.w + at)];
            if (v != v) {
              best = at;
              break;
            }
            if (best < 0 || v > x[size_t(p * c.h * c.w + best)]) best = at;
          }
          const size_t o = size_t((p * oh + i) * ow + j);
          INFO("h=" << c.h << " w=" << c.w << " plane " << p << " window " << i << "," << j);
          CHECK(idx[o] == best);
          const float want = x[size_t(p * c.h * c.w + best)];
          if (want != want) CHECK(y[o] != y[o]);
          else CHECK(y[o] == want);
        }
  }
}

TEST_CASE("pooling errors") {
  CHECK(error_of([] { max_pool2d(zeros({1, 1, 4, 4}), pair(2), std::nullopt, pair(2)); }) ==
        "max_pool2d: padding (2, 2) is more than half the window (2, 2)");
  CHECK(error_of([] { avg_pool2d(zeros({1, 1, 2, 2}), pair(3)); }) ==
        "avg_pool2d: the window 3x3 is larger than the padded input 2x2 (input f32[1, 1, 2, 2], padding=(0, 0))");
  CHECK(error_of([] { max_pool2d(zeros({4, 4}), pair(2)); }) == "max_pool2d: input must be 4-d [N, C, H, W], got f32[4, 4]");
  CHECK(error_of([] { max_pool2d(zeros({1, 1, 4, 4}), pair(2), Pair{0, 1}); }) ==
        "max_pool2d: stride must be positive, got (0, 1)");
}

TEST_CASE("pooling backward rules against finite differences (f64)") {
  for (const PoolCase& p : kPoolCases) {
    Attrs a{{"kernel", pr(p.k[0], p.k[1])}, {"stride", pr(p.stride[0], p.stride[1])},
            {"padding", pr(p.pad[0], p.pad[1])}};
    // Distinct values, far apart compared with eps: no ties inside a window.
    Tensor x = rnd({p.n, p.c, p.h, p.w}, DType::f64, 12, -10, 10);
    check_backward("max_pool2d", {x}, a);
    check_backward("avg_pool2d", {x}, a);
    Attrs ab = a;
    ab.set("input_shape", x.shape());
    Tensors mp = dispatch(op("max_pool2d"), std::vector<Tensor>{x}, a);
    Tensor dy = rnd(mp[0].shape(), DType::f64, 13);
    check_backward("avg_pool2d_backward", {dy}, ab);
    check_backward("max_pool2d_backward", {dy, mp[1]}, ab);
  }
}

TEST_CASE("conv2d's rule makes only the gradients asked for") {
  Tensor x = rnd({2, 3, 5, 5}, DType::f64, 14), w = param(rnd({4, 3, 3, 3}, DType::f64, 15));
  Attrs a{{"stride", pr(1, 1)}, {"padding", pr(1, 1)}, {"dilation", pr(1, 1)}, {"groups", int64_t(1)}};
  Tensor y = call(op("conv2d"), {x, w}, a);
  Tensor dy = rnd(y.shape(), DType::f64, 16);
  std::vector<Tensor> in{x, w}, out{detach(y)}, gr{dy};
  BackwardArgs args{in, out, a, gr};
  args.needs = 0b10;  // the weight only: x is data
  std::vector<Tensor> g = op("conv2d").backward(args);
  CHECK_FALSE(g[0].defined());
  CHECK(g[1].defined());
  // Through the tape (which fills `needs`), the weight gradient is the same
  // as with x a param.
  Tensor gw = grad(sum(mul(y, dy)), {w})[0];
  Tensor y2 = call(op("conv2d"), {param(x), w}, a);
  check_close(vals(gw), vals(grad(sum(mul(y2, dy)), {w})[0]), 1e-12, 1e-12);
  check_close(vals(gw), vals(g[1]), 1e-12, 1e-12);
}
