// batch_norm, layer_norm, softmax, log_softmax, the losses, one_hot,
// accuracy, embedding and dropout: values by hand or against direct loops
// written here, f32 and f64, error messages, and finite-difference checks of
// the fused ops' backward rules (OpDef::backward called directly).
#include <numeric>

#include "fake_gpu.h"
#include "nn_test_util.h"

using namespace nntest;

namespace {

// Per-channel batch statistics of x [N, C, S...] and the normalised output.
std::vector<double> direct_batch_norm(const Tensor& x, const std::vector<double>& gamma, const std::vector<double>& beta,
                                      std::vector<double>& mean, std::vector<double>& var, double eps) {
  const int64_t n = x.shape()[0], c = x.shape()[1], s = x.numel() / std::max<int64_t>(1, n * c);
  auto v = vals(x);
  std::vector<double> y(v.size());
  mean.assign(size_t(c), 0), var.assign(size_t(c), 0);
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; ++k) sum += v[size_t((i * c + ch) * s + k)];
    const double mu = sum / double(n * s);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; ++k) sq += std::pow(v[size_t((i * c + ch) * s + k)] - mu, 2);
    mean[size_t(ch)] = mu, var[size_t(ch)] = sq / double(n * s);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; ++k) {
        const size_t at = size_t((i * c + ch) * s + k);
        y[at] = (v[at] - mu) / std::sqrt(var[size_t(ch)] + eps) * gamma[size_t(ch)] + beta[size_t(ch)];
      }
  }
  return y;
}

// (x - mean) / sqrt(var + eps) * gamma + beta with per-channel (axis 1)
// mean, var, gamma and beta given.
std::vector<double> normalized(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                               const Tensor& var, double eps) {
  auto xv = vals(x), g = vals(gamma), b = vals(beta), m = vals(mean), v = vals(var);
  std::vector<double> y(xv.size());
  const int64_t per = x.numel() / (x.shape()[0] * x.shape()[1]);
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t c = size_t((int64_t(i) / per) % x.shape()[1]);
    y[i] = (xv[i] - m[c]) / std::sqrt(v[c] + eps) * g[c] + b[c];
  }
  return y;
}

// softmax along `axis` of x, by the formula.
std::vector<double> direct_softmax(const Tensor& x, int axis, bool log) {
  auto v = vals(x);
  int64_t outer = 1, n = x.shape()[axis], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int d = axis + 1; d < x.ndim(); ++d) inner *= x.shape()[d];
  std::vector<double> y(v.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double z = 0;
      for (int64_t i = 0; i < n; ++i) z += std::exp(v[size_t((o * n + i) * inner + j)]);
      for (int64_t i = 0; i < n; ++i) {
        const size_t at = size_t((o * n + i) * inner + j);
        y[at] = log ? v[at] - std::log(z) : std::exp(v[at]) / z;
      }
    }
  return y;
}

}  // namespace

TEST_CASE("batch_norm training: batch statistics and the running update") {
  Tensor x = make<float>({1, 2, 3}, {3, 1});
  Tensor rm = zeros({1}), rv = zeros({1});
  Tensor y = batch_norm(x, ones({1}), zeros({1}), rm, rv, true);
  const double s = std::sqrt(2.0 / 3.0 + 1e-5);  // biased variance of 1, 2, 3 is 2/3
  check_close(vals(y), {-1 / s, 0, 1 / s});
  // running = 0.9 running + 0.1 batch; the variance is the unbiased one (1).
  check_close(vals(rm), {0.2});
  check_close(vals(rv), {0.1});
  // A second call keeps averaging; momentum and eps are honoured.
  batch_norm(x, Tensor(), Tensor(), rm, rv, true, 0.5);
  check_close(vals(rm), {0.5 * 0.2 + 0.5 * 2});
  check_close(vals(rv), {0.5 * 0.1 + 0.5 * 1});
}

TEST_CASE("batch_norm against a direct loop, 2-d and 4-d, f32 and f64") {
  for (DType dt : {DType::f32, DType::f64})
    for (Shape s : {Shape{6, 3}, Shape{4, 3, 5, 2}, Shape{2, 2, 7}}) {
      Tensor x = rnd(s, dt, 21, -2, 3), gamma = rnd({s[1]}, dt, 22), beta = rnd({s[1]}, dt, 23);
      std::vector<double> mean, var;
      auto want = direct_batch_norm(x, vals(gamma), vals(beta), mean, var, 1e-3);
      Tensor rm = zeros({s[1]}), rv = ones({s[1]});
      Tensor y = batch_norm(x, gamma, beta, rm, rv, true, 0.1, 1e-3);
      CHECK(y.dtype() == dt);
      check_close(vals(y), want, 1e-5, 1e-5);
      const double m = double(s.numel() / s[1]);
      std::vector<double> want_rm, want_rv;
      for (size_t c = 0; c < mean.size(); ++c) {
        want_rm.push_back(0.1 * mean[c]);
        want_rv.push_back(0.9 + 0.1 * var[c] * m / (m - 1));
      }
      check_close(vals(rm), want_rm, 1e-5, 1e-6);
      check_close(vals(rv), want_rv, 1e-5, 1e-6);
      // Eval: the running statistics, by the formula.
      Tensor ye = batch_norm(x, gamma, beta, rm, rv, false, 0.1, 1e-3);
      check_close(vals(ye), normalized(x, gamma, beta, rm, rv, 1e-3), 1e-5, 1e-5);
      check_close(vals(rm), want_rm, 1e-5, 1e-6);  // eval leaves them alone
    }
}

TEST_CASE("batch_norm_apply remakes batch_norm_train's y bit for bit from its mean and var") {
  static const OpDef& train = op("batch_norm_train");
  static const OpDef& apply = op("batch_norm_apply");
  for (DType dt : {DType::f32, DType::f64})
    for (Shape s : {Shape{6, 3}, Shape{4, 3, 5, 2}}) {
      Tensor x = rnd(s, dt, 24, -2, 3), gamma = rnd({s[1]}, dt, 25), beta = rnd({s[1]}, dt, 26);
      const Attrs eps{{"eps", 1e-3}};
      Tensors t = dispatch(train, std::vector<Tensor>{x, gamma, beta}, eps);
      Tensor y = dispatch(apply, std::vector<Tensor>{x, gamma, beta, t[1], t[2]}, eps)[0];
      CHECK(vals(y) == vals(t[0]));
      // And the formula, from the statistics given (here not the batch's).
      Tensor mean = rnd({s[1]}, dt, 27), var = rnd({s[1]}, dt, 28, 0.5, 2);
      Tensor z = dispatch(apply, std::vector<Tensor>{x, gamma, beta, mean, var}, eps)[0];
      check_close(vals(z), normalized(x, gamma, beta, mean, var, 1e-3), 1e-5, 1e-5);
    }
  CHECK(error_of([] {
          dispatch(op("batch_norm_apply"), std::vector<Tensor>{zeros({4, 3}), ones({3}), zeros({3}), zeros({2}), ones({3})},
                   Attrs{{"eps", 1e-5}});
        }) == "batch_norm: mean f32[2] does not fit input f32[4, 3] (3 channels)");
}

TEST_CASE("batch_norm_scale: gamma / sqrt(var + eps), rounded once; with it the elementwise ops make batch norm's y") {
  static const OpDef& scale = op("batch_norm_scale");
  // By hand: 2 / sqrt(3 + 1), -3 / sqrt(15 + 1), 1 / sqrt(0 + 1).
  Tensor s = dispatch(scale, std::vector<Tensor>{t32({2, -3, 1}), t32({3, 15, 0})}, Attrs{{"eps", 1.0}})[0];
  CHECK(vals(s) == std::vector<double>{1, -0.75, 1});
  // Rounded once from double: 1 / sqrt(0.1 + 1e-5) to f32, not through an f32 sqrt.
  s = dispatch(scale, std::vector<Tensor>{t32({1}), t32({0.1})}, Attrs{{"eps", 1e-5}})[0];
  CHECK(vals(s)[0] == double(float(1.0 / std::sqrt(double(0.1f) + 1e-5))));
  // (x - mean) * scale + beta, op by op over [C, 1, 1] views, is batch
  // norm's y bit for bit (what the pass batch-norm-apply-into-elementwise
  // writes for the GPU's fused kernels).
  for (DType dt : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(dt));
    Tensor x = rnd({4, 3, 5, 2}, dt, 31, -2, 3), gamma = rnd({3}, dt, 32), beta = rnd({3}, dt, 33);
    const Attrs eps{{"eps", 1e-3}};
    Tensors t = dispatch(op("batch_norm_train"), std::vector<Tensor>{x, gamma, beta}, eps);
    Tensor sc = dispatch(scale, std::vector<Tensor>{gamma, t[2]}, eps)[0];
    auto view = [](const Tensor& v) { return reshape(v, {3, 1, 1}); };
    Tensor y = add(mul(sub(x, view(t[1])), view(sc)), view(beta));
    CHECK(vals(y) == vals(t[0]));
  }
  CHECK(error_of([] {
          dispatch(op("batch_norm_scale"), std::vector<Tensor>{ones({3}), ones({2})}, Attrs{{"eps", 1e-5}});
        }) == "batch_norm_scale: gamma f32[3] and var f32[2] must both be [C]");
}

TEST_CASE("batch_norm of f16 and bf16: statistics and the per-channel map in f32, y rounded once") {
  auto as64 = [](const Tensor& t) { return vals(astype(t, DType::f64)); };
  // Eval: 300, 302, 304 (exact in bf16) with running mean 301.3 and var 4
  // give (x - 301.3) / sqrt(4 + 1e-5) = -0.65, 0.35, 1.35, which bf16 (8
  // significant bits) rounds to -166/256, 179/512 and 173/128, PyTorch
  // 1.13's bf16 values. A running mean rounded to bf16 (302) gave -1, 0, 1.
  Tensor rm = full({1}, 301.3), rv = full({1}, 4.0);
  Tensor x = reshape(astype(t32({300, 302, 304}), DType::bf16), {3, 1, 1, 1});
  Tensor y = batch_norm(x, ones({1}), zeros({1}), rm, rv, false);
  CHECK(y.dtype() == DType::bf16);
  CHECK(as64(y) == std::vector<double>{-166.0 / 256, 179.0 / 512, 173.0 / 128});
  // Training: the batch's mean of 300, 304, 1, 2 is 151.75 (bf16 holds
  // 152) and its unbiased variance 90308.75 / 3 = 30102.9166... (bf16: 30080).
  for (DType d : {DType::bf16, DType::f16}) {
    CAPTURE(dtype_name(d));
    Tensor rm1 = zeros({1}), rv1 = ones({1});
    Tensor x1 = reshape(astype(t32({300, 304, 1, 2}), d), {4, 1, 1, 1});
    batch_norm(x1, ones({1}), zeros({1}), rm1, rv1, true, /*momentum=*/1.0);
    CHECK(vals(rm1) == std::vector<double>{151.75});
    check_close(vals(rv1), {90308.75 / 3}, 1e-7, 0);
    // batch_norm_train's statistics are f32 outputs, and batch_norm_apply
    // remakes y from them bit for bit (from 16-bit statistics it did not).
    const Attrs eps{{"eps", 1e-3}};
    Tensor xs = astype(rnd({6, 3, 2}, DType::f32, 41, 90, 110), d), gamma = astype(rnd({3}, DType::f32, 42), d),
           beta = astype(rnd({3}, DType::f32, 43), d);
    Tensors t = dispatch(op("batch_norm_train"), std::vector<Tensor>{xs, gamma, beta}, eps);
    CHECK(t[0].dtype() == d);
    CHECK(t[1].dtype() == DType::f32);
    CHECK(t[2].dtype() == DType::f32);
    Tensor again = dispatch(op("batch_norm_apply"), std::vector<Tensor>{xs, gamma, beta, t[1], t[2]}, eps)[0];
    CHECK(as64(again) == as64(t[0]));
  }
  CHECK(error_of([] {
          const Tensor c = astype(ones({3}), DType::bf16);
          dispatch(op("batch_norm_apply"), std::vector<Tensor>{astype(zeros({4, 3}), DType::bf16), c, c, c, c},
                   Attrs{{"eps", 1e-5}});
        }) == "batch_norm_apply: expects mean and var of f32 for bf16 input (got bf16[4, 3], bf16[3], bf16[3], "
              "bf16[3], bf16[3])");
  // f32 and f64 keep their own dtype for the statistics.
  for (DType d : {DType::f32, DType::f64}) {
    const TensorType xt{d, Shape{2, 3}, cpu_device()}, ct{d, Shape{3}, cpu_device()};
    const std::vector<TensorType> in{xt, ct, ct};
    CHECK(op("batch_norm_train").type_rule(in, Attrs{{"eps", 1e-5}}).at(1).dtype == d);
  }
}

TEST_CASE("batch_norm errors") {
  Tensor rm = zeros({3}), rv = ones({3});
  CHECK(error_of([&] { batch_norm(zeros({4, 3, 2, 2}), ones({4}), zeros({3}), rm, rv, true); }) ==
        "batch_norm: gamma f32[4] does not fit input f32[4, 3, 2, 2] (3 channels)");
  Tensor bad = zeros({2});
  CHECK(error_of([&] { batch_norm(zeros({4, 3}), ones({3}), zeros({3}), bad, rv, false); }) ==
        "batch_norm: running mean f32[2] does not fit input f32[4, 3] (3 channels)");
  CHECK(error_of([&] { batch_norm(zeros({1, 3}), ones({3}), zeros({3}), rm, rv, true); }) ==
        "batch_norm: training needs more than one value per channel, got input f32[1, 3]");
  CHECK(error_of([&] { batch_norm(zeros({3}), ones({3}), zeros({3}), rm, rv, true); }) ==
        "batch_norm: input must have a batch and a channel axis [N, C, ...], got f32[3]");
  // One running statistic without the other was ignored (no update, no
  // shape check); PyTorch's eval refuses it.
  Tensor none;
  CHECK(error_of([&] { batch_norm(zeros({4, 3}), ones({3}), zeros({3}), rm, none, true); }) ==
        "batch_norm: a running mean without a running var: give both, or neither (statistics of each batch)");
  CHECK(error_of([&] { batch_norm(zeros({4, 3}), ones({3}), zeros({3}), none, rv, false); }) ==
        "batch_norm: a running var without a running mean: give both, or neither (statistics of each batch)");
}

TEST_CASE("neural ops type f16 and bf16 alike on a GPU and on the CPU") {
  FakeGpu gpu;
  using Pairs = std::vector<int64_t>;
  const Attrs pool{{"kernel", Pairs{2, 2}}, {"stride", Pairs{2, 2}}, {"padding", Pairs{0, 0}}};
  const Attrs conv{{"stride", Pairs{1, 1}}, {"padding", Pairs{0, 0}}, {"dilation", Pairs{1, 1}}, {"groups", int64_t(1)}};
  const Attrs eps{{"eps", 1e-5}};
  struct Case {
    const char* op;
    const char* says;           // the name its errors give: the user's call
    std::vector<Shape> floats;  // the float operands; then the class ids of the loss
    Attrs attrs;
    bool ids = false;
  };
  const std::vector<Case> cases{{"softmax", "softmax", {Shape{2, 3}}, Attrs{{"axis", int64_t(1)}}},
                                {"max_pool2d", "max_pool2d", {Shape{1, 1, 4, 4}}, pool},
                                {"avg_pool2d", "avg_pool2d", {Shape{1, 1, 4, 4}}, pool},
                                {"conv2d", "conv2d", {Shape{1, 2, 4, 4}, Shape{3, 2, 3, 3}}, conv},
                                {"batch_norm_train", "batch_norm", {Shape{2, 3, 4, 4}, Shape{3}, Shape{3}}, eps},
                                {"layer_norm", "layer_norm", {Shape{2, 5}, Shape{5}, Shape{5}}, eps},
                                {"softmax_cross_entropy", "softmax_cross_entropy", {Shape{2, 3}}, {}, true}};
  for (DType d : {DType::f16, DType::bf16})
    for (const Case& c : cases) {
      CAPTURE(std::string(c.op));
      auto types = [&](Device* dev) {
        std::vector<TensorType> t;
        for (const Shape& s : c.floats) t.push_back(TensorType{d, s, dev});
        if (c.ids) t.push_back(TensorType{DType::i64, Shape{2}, dev});
        return t;
      };
      const OpDef& def = op(c.op);
      CHECK(def.type_rule(types(&gpu), c.attrs).at(0).dtype == d);
      CHECK(def.type_rule(types(cpu_device()), c.attrs).at(0).dtype == d);  // dispatch widens on the CPU
    }
}

TEST_CASE("layer_norm against a direct loop") {
  for (DType dt : {DType::f32, DType::f64}) {
    Tensor x = rnd({3, 4, 5}, dt, 31, -2, 2);
    for (Shape gs : {Shape{5}, Shape{4, 5}}) {
      Tensor gamma = rnd(gs, dt, 32), beta = rnd(gs, dt, 33);
      const int64_t d = gs.numel(), rows = x.numel() / d;
      auto xv = vals(x), g = vals(gamma), b = vals(beta);
      std::vector<double> want(xv.size());
      for (int64_t r = 0; r < rows; ++r) {
        double mu = 0, var = 0;
        for (int64_t i = 0; i < d; ++i) mu += xv[size_t(r * d + i)] / double(d);
        for (int64_t i = 0; i < d; ++i) var += std::pow(xv[size_t(r * d + i)] - mu, 2) / double(d);
        for (int64_t i = 0; i < d; ++i)
          want[size_t(r * d + i)] = (xv[size_t(r * d + i)] - mu) / std::sqrt(var + 1e-5) * g[size_t(i)] + b[size_t(i)];
      }
      Tensor y = layer_norm(x, gamma, beta);
      CHECK(y.dtype() == dt);
      check_close(vals(y), want, 1e-5, 1e-5);
    }
  }
  // No gamma and beta: plain normalisation of the last dim.
  check_close(vals(layer_norm(make<double>({1, 3}, {1, 2}), Tensor(), Tensor(), 0)), {-1, 1});
  CHECK(error_of([] { layer_norm(zeros({4, 16}), ones({8}), zeros({8})); }) ==
        "layer_norm: gamma f32[8] does not fit input f32[4, 16]: the input's last dims [16] must equal [8]");
  // A beta shorter than gamma fits the input's last dims, but not gamma (its
  // gradient could not be summed back to it); and the other way round.
  CHECK(error_of([] { layer_norm(zeros({3, 2, 4}), ones({2, 4}), zeros({4})); }) ==
        "layer_norm: beta f32[4] does not fit gamma f32[2, 4]: both have the shape of the normalised dims, [2, 4]");
  CHECK(error_of([] { layer_norm(zeros({3, 2, 4}), ones({4}), zeros({2, 4})); }) ==
        "layer_norm: beta f32[2, 4] does not fit gamma f32[4]: both have the shape of the normalised dims, [4]");
}

TEST_CASE("softmax and log_softmax") {
  check_close(vals(softmax(make<float>({0, 0}, {2}))), {0.5, 0.5});
  // Shifted by the max: huge logits do not overflow.
  check_close(vals(softmax(make<float>({1000, 1000}, {2}))), {0.5, 0.5});
  check_close(vals(log_softmax(make<double>({1000, 0}, {2}))), {0, -1000}, 1e-12, 1e-12);
  // -inf gets probability 0 (log -inf), the rest share.
  const float inf = std::numeric_limits<float>::infinity();
  check_close(vals(softmax(make<float>({-inf, 0, 0}, {3}))), {0, 0.5, 0.5});
  for (DType dt : {DType::f32, DType::f64}) {
    Tensor x = rnd({2, 3, 4}, dt, 41, -3, 3);
    for (int axis : {0, 1, 2}) {
      INFO("axis ", axis);
      check_close(vals(softmax(x, axis)), direct_softmax(x, axis, false), 1e-5, 1e-6);
      check_close(vals(log_softmax(x, axis)), direct_softmax(x, axis, true), 1e-5, 1e-6);
    }
    check_close(vals(softmax(x, -1)), direct_softmax(x, 2, false), 1e-5, 1e-6);
  }
  // Integers compute in f32.
  CHECK(softmax(make<int64_t>({1, 2}, {2})).dtype() == DType::f32);
  CHECK(error_of([] { softmax(zeros({2, 3}), 2); }) == "softmax: axis 2 is out of range for f32[2, 3]");
}

TEST_CASE("softmax along the last axis of f32 lines: long lines, NaN and infinities, the gradient") {
  // Lines of 1, 7, 8, 37 and 64: shorter than the eight lanes, a multiple
  // of them and neither.
  for (int64_t n : {1, 7, 8, 37, 64}) {
    CAPTURE(n);
    Tensor x = rnd({5, n}, DType::f32, 7 + uint64_t(n), -6, 6);
    check_close(vals(softmax(x)), direct_softmax(x, 1, false), 1e-6, 1e-6);
    check_close(vals(log_softmax(x)), direct_softmax(x, 1, true), 1e-5, 1e-5);
    // dx = y (dy - sum(dy y)), worked out in double from the f32 y.
    Tensor dy = rnd({5, n}, DType::f32, 99, -1, 1);
    Tensor y = softmax(x);
    Tensor dx = call(op("softmax_backward"), {dy, y}, Attrs{{"axis", int64_t(-1)}});
    std::vector<double> yv = vals(y), dv = vals(dy), want(yv.size());
    for (int64_t r = 0; r < 5; ++r) {
      double s = 0;
      for (int64_t i = 0; i < n; ++i) s += dv[size_t(r * n + i)] * yv[size_t(r * n + i)];
      for (int64_t i = 0; i < n; ++i) want[size_t(r * n + i)] = yv[size_t(r * n + i)] * (dv[size_t(r * n + i)] - s);
    }
    check_close(vals(dx), want, 1e-6, 1e-6);
  }
  // A NaN makes its line NaN, wherever it sits; a +inf line is NaN (inf - inf);
  // an all -inf line is NaN; the other lines are untouched.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(4 * 20, 0.0f);
  v[0 * 20 + 13] = nan;
  v[1 * 20 + 3] = inf;
  for (int i = 0; i < 20; ++i) v[2 * 20 + i] = -inf;
  for (int i = 0; i < 20; ++i) v[3 * 20 + i] = float(i % 3);
  std::vector<double> got = vals(softmax(make<float>(v, {4, 20})));
  for (int i = 0; i < 60; ++i) CHECK(std::isnan(got[size_t(i)]));
  double z = 0;
  for (int i = 0; i < 20; ++i) z += std::exp(double(i % 3));
  for (int i = 0; i < 20; ++i) CHECK(got[size_t(60 + i)] == doctest::Approx(std::exp(double(i % 3)) / z).epsilon(1e-6));
}

TEST_CASE("softmax_cross_entropy by hand") {
  // Uniform logits over 4 classes: log 4, whatever the labels.
  check_close(vals(softmax_cross_entropy(zeros({3, 4}), make<int64_t>({0, 3, 1}, {3}))), {std::log(4.0)});
  // logits [0, log 3]: p = [1/4, 3/4].
  Tensor x = make<double>({0, std::log(3.0), 0, std::log(3.0)}, {2, 2});
  check_close(vals(softmax_cross_entropy(x, make<int64_t>({1, 0}, {2}))),
              {(std::log(4.0 / 3.0) + std::log(4.0)) / 2}, 1e-12, 1e-12);
  // Probabilities: the expected value of the per-class losses.
  Tensor p = make<double>({0.5, 0.5, 1, 0}, {2, 2});
  check_close(vals(softmax_cross_entropy(x, p)),
              {(0.5 * std::log(4.0) + 0.5 * std::log(4.0 / 3.0) + std::log(4.0)) / 2}, 1e-12, 1e-12);
  // One-hot probabilities equal class ids; i32 ids work too.
  Tensor z = rnd({5, 3}, DType::f32, 51, -4, 4);
  Tensor ids = make<int32_t>({2, 0, 1, 1, 2}, {5});
  check_close(vals(softmax_cross_entropy(z, ids)), vals(softmax_cross_entropy(z, one_hot(ids, 3))), 1e-6, 1e-6);
  // Stable for huge logits.
  check_close(vals(softmax_cross_entropy(make<float>({1000, 0}, {1, 2}), make<int64_t>({1}, {1}))), {1000});
  // Unbatched: logits [C] with a 0-d id.
  check_close(vals(softmax_cross_entropy(zeros({4}), scalar_int(2))), {std::log(4.0)});
  // nll_loss of log_softmax is the same loss.
  check_close(vals(nll_loss(log_softmax(z), ids)), vals(softmax_cross_entropy(z, ids)), 1e-6, 1e-6);
  // Unbatched nll_loss too: -logp[2] of [C] log-probabilities, a 0-d loss.
  const Tensor one = nll_loss(make<float>({-1.5f, -0.5f, -2.25f}, {3}), scalar_int(2));
  CHECK(one.shape() == Shape{});
  check_close(vals(one), {2.25});
  CHECK(nll_loss(make<float>({-1.5f, -0.5f}, {2}), scalar_int(0), Reduction::none).shape() == Shape{});
  CHECK(softmax_cross_entropy(z, ids).dtype() == DType::f32);
  CHECK(softmax_cross_entropy(x, p).shape() == Shape{});
}

TEST_CASE("softmax_cross_entropy, nll_loss and one_hot errors") {
  CHECK(error_of([] { softmax_cross_entropy(zeros({4, 10}), make<int64_t>({1, 10, 2, 3}, {4})); }) ==
        "softmax_cross_entropy: label 10 is out of range for 10 classes");
  CHECK(error_of([] { softmax_cross_entropy(zeros({4, 10}), make<int64_t>({1, -1, 2, 3}, {4})); }) ==
        "softmax_cross_entropy: label -1 is out of range for 10 classes");
  CHECK(error_of([] { softmax_cross_entropy(zeros({4, 10}), make<int64_t>({1, 2, 3}, {3})); }) ==
        "softmax_cross_entropy: labels i64[3] do not fit logits f32[4, 10]: class ids need shape [4]");
  CHECK(error_of([] { softmax_cross_entropy(zeros({4, 10}), zeros({4, 9})); }) ==
        "softmax_cross_entropy: labels f32[4, 9] do not fit logits f32[4, 10]: labels are integer class ids [N] or "
        "probabilities of the logits' shape and dtype");
  CHECK(error_of([] { nll_loss(zeros({2, 3}), make<int64_t>({0, 5}, {2})); }) ==
        "nll_loss: label 5 is out of range for axis 1 of size 3 in f32[2, 3]");
  CHECK(error_of([] { one_hot(make<int64_t>({3}, {1}), 3); }) == "one_hot: id 3 is out of range for 3 classes");
  CHECK(error_of([] { one_hot(zeros({2}), 3); }) == "one_hot: ids must be an integer tensor, got f32[2]");
}

TEST_CASE("one_hot and accuracy") {
  Tensor h = one_hot(make<int64_t>({0, 2}, {2}), 3);
  CHECK(h.dtype() == DType::f32);
  CHECK(h.shape() == Shape{2, 3});
  CHECK(vals(h) == std::vector<double>{1, 0, 0, 0, 0, 1});
  CHECK(one_hot(make<int32_t>({1, 0, 1, 1}, {2, 2}), 2).shape() == Shape{2, 2, 2});
  Tensor logits = make<double>({1, 2, 3, 0, 0, 5}, {3, 2});
  Tensor acc = accuracy(logits, make<int64_t>({1, 1, 1}, {3}));
  CHECK(acc.dtype() == DType::f32);
  CHECK(acc.shape() == Shape{});
  check_close(vals(acc), {2.0 / 3.0});
  check_close(vals(accuracy(logits, make<double>({0, 1, 1, 0, 0, 1}, {3, 2}))), {1.0});
  CHECK(error_of([&] { accuracy(logits, make<int64_t>({1, 1}, {2})); }) ==
        "accuracy: labels i64[2] do not fit logits f64[3, 2]: class ids need shape [3], probabilities the logits' "
        "shape");
}

TEST_CASE("embedding") {
  Tensor table = make<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor e = embedding(make<int64_t>({2, 0}, {2}), table);
  CHECK(vals(e) == std::vector<double>{5, 6, 1, 2});
  CHECK(embedding(make<int32_t>({0, 1, 2, 2}, {2, 2}), table).shape() == Shape{2, 2, 2});
  CHECK(error_of([&] { embedding(make<int64_t>({3}, {1}), table); }) ==
        "embedding: id 3 is out of range for axis 0 of size 3 in f32[3, 2]");
  CHECK(error_of([&] { embedding(zeros({2}), table); }) ==
        "embedding: ids must be an integer tensor, got f32[2] (table f32[3, 2])");
}

TEST_CASE("dropout") {
  Tensor x = ones({10000});
  CHECK(dropout(x, 0.0).same(x));
  CHECK(dropout(x, 0.5, false).same(x));
  manual_seed(3);
  Tensor a = dropout(x, 0.25);
  auto v = vals(a);
  int64_t dropped = 0;
  for (double e : v) {
    CHECK((e == 0.0 || std::abs(e - 1.0 / 0.75) < 1e-6));
    dropped += e == 0.0;
  }
  // Binomial(10000, 0.25): mean 2500, sd 43.
  CHECK(dropped > 2500 - 300);
  CHECK(dropped < 2500 + 300);
  manual_seed(3);
  CHECK(vals(dropout(x, 0.25)) == v);   // seeded: the same mask again
  CHECK(vals(dropout(x, 0.25)) != v);   // and a fresh one on the next call
  CHECK(dropout(ones({4}, DType::f64), 0.5).dtype() == DType::f64);
  CHECK(error_of([&] { dropout(x, 1.0); }) == "dropout: p must be in [0, 1), got 1");
  CHECK(error_of([&] { dropout(x, -0.5); }) == "dropout: p must be in [0, 1), got -0.5");
}

TEST_CASE("mse_loss, l1_loss, bce_with_logits") {
  check_close(vals(mse_loss(make<float>({1, 2}, {2}), zeros({2}))), {2.5});
  check_close(vals(l1_loss(make<float>({1, -2}, {2}), zeros({2}))), {1.5});
  check_close(vals(bce_with_logits(zeros({3}), make<float>({1, 0, 0.5f}, {3}))), {std::log(2.0)});
  // Stable at large |x|: no overflow, no log(0).
  check_close(vals(bce_with_logits(make<double>({100, -100, 100}, {3}), make<double>({1, 1, 0}, {3}))),
              {(0 + 100 + 100) / 3.0}, 1e-12, 1e-12);
  // By the formula at moderate values.
  Tensor x = make<double>({-1.5, 0.3, 2}, {3}), y = make<double>({0.2, 1, 0}, {3});
  double want = 0;
  for (int i = 0; i < 3; ++i) {
    const double xv = vals(x)[size_t(i)], yv = vals(y)[size_t(i)];
    want += -(yv * std::log(1 / (1 + std::exp(-xv))) + (1 - yv) * std::log(1 - 1 / (1 + std::exp(-xv)))) / 3;
  }
  check_close(vals(bce_with_logits(x, y)), {want}, 1e-12, 1e-12);
  CHECK(error_of([] { mse_loss(zeros({4}), zeros({4, 1})); }) ==
        "mse_loss: pred f32[4] and target f32[4, 1] have different shapes");
  CHECK(error_of([] { bce_with_logits(zeros({4}), zeros({3})); }) ==
        "bce_with_logits: logits f32[4] and targets f32[3] have different shapes");
}

TEST_CASE("fused backward rules against finite differences (f64)") {
  Attrs eps{{"eps", 1e-5}};
  for (Shape s : {Shape{5, 3}, Shape{3, 2, 2, 3}})
    check_backward("batch_norm_train", {rnd(s, DType::f64, 61, -2, 2), rnd({s[1]}, DType::f64, 62),
                                        rnd({s[1]}, DType::f64, 63)},
                   eps);
  Tensor x = rnd({3, 4, 5}, DType::f64, 64, -2, 2);
  check_backward("layer_norm", {x, rnd({5}, DType::f64, 65), rnd({5}, DType::f64, 66)}, eps);
  check_backward("layer_norm", {x, rnd({4, 5}, DType::f64, 67), rnd({4, 5}, DType::f64, 68)}, eps);
  for (int64_t axis : {0, 1, 2}) {
    check_backward("softmax", {x}, Attrs{{"axis", axis}});
    check_backward("log_softmax", {x}, Attrs{{"axis", axis}});
  }
  Tensor logits = rnd({4, 5}, DType::f64, 69, -3, 3);
  check_backward("softmax_cross_entropy", {logits, make<int64_t>({4, 0, 2, 2}, {4})}, {});
  Tensor probs = softmax(rnd({4, 5}, DType::f64, 70, -1, 1));
  check_backward("softmax_cross_entropy", {logits, probs}, {});
}
