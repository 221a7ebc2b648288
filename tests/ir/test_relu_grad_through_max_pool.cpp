// The pass relu-grad-through-max-pool on graphs built by hand:
// relu_backward(max_pool2d_backward(g, idx), y), idx from max_pool2d(y),
// becomes max_pool2d_backward(relu_backward(g, pooled), idx); the result is
// the same bit for bit, with ties, zeros of both signs, NaN and infinities in
// y, and overlapping windows; a hand-worked case; left alone where the
// pool's gradient has another reader or the mask is not the pool's input.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/executor.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;

namespace {

backend::Attrs pool_attrs(int64_t k, int64_t s) {
  return {{"kernel", std::vector<int64_t>{k, k}},
          {"stride", std::vector<int64_t>{s, s}},
          {"padding", std::vector<int64_t>{0, 0}}};
}

struct PoolGrad {
  ir::Graph g;
  ir::ValueId pool_grad;  // max_pool2d_backward's output
};

// relu_backward(max_pool2d_backward(g, idx), mask) with idx = max_pool2d(y)'s
// indices; mask is y unless `other_mask`. Inputs y [2, 3, h, w] and g.
PoolGrad pool_relu_grad(int64_t h, int64_t w, int64_t k, int64_t s, bool other_mask = false) {
  PoolGrad r;
  ir::Graph& g = r.g;
  g.name = "step";
  const backend::Attrs attrs = pool_attrs(k, s);
  const ir::ValueId y = input(g, f32({2, 3, h, w}), "y");
  const backend::OpDef& max_pool = backend::op("max_pool2d");
  const backend::TensorType in[] = {g.values[y].type};
  const ir::NodeId p = g.add_node(&max_pool, {y}, attrs, max_pool.type_rule(std::span(in), attrs));
  const ir::ValueId idx = g.nodes[p].outputs[1];
  const ir::ValueId dy = input(g, g.values[g.nodes[p].outputs[0]].type, "g");
  const ir::ValueId mask = other_mask ? input(g, f32({2, 3, h, w}), "m") : y;
  backend::Attrs back = attrs;
  back.set("input_shape", backend::Shape({2, 3, h, w}));
  r.pool_grad = add(g, "max_pool2d_backward", {dy, idx}, back);
  output(g, add(g, "relu_backward", {r.pool_grad, mask}));
  output(g, g.nodes[p].outputs[0]);
  return r;
}

// Values cycling through ties, both zeros, NaN, infinities and plain numbers.
backend::Tensor awkward(backend::Shape s, int shift) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float cycle[] = {1.0f, 1.0f, -0.0f, 0.0f, -2.0f, nan, 3.0f, -inf, inf, 0.5f, -1.0f, 3.0f, -0.5f};
  backend::Tensor t = backend::Tensor::empty(s, backend::DType::f32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = cycle[(i * 7 + shift) % 13];
  return t;
}

bool same_bits(const backend::Tensor& a, const backend::Tensor& b) {
  return a.numel() == b.numel() && std::memcmp(a.data<float>(), b.data<float>(), size_t(a.numel()) * 4) == 0;
}

}  // namespace

TEST_CASE("pass relu-grad-through-max-pool: the mask moves before the pool's gradient, same bits") {
  struct Case {
    int64_t h, w, k, s;
  };
  for (Case c : {Case{6, 8, 2, 2}, Case{7, 7, 3, 2}, Case{5, 6, 2, 1}}) {  // tiled, overlapping, stride 1
    CAPTURE(c.k);
    CAPTURE(c.s);
    PoolGrad r = pool_relu_grad(c.h, c.w, c.k, c.s);
    const ir::Graph plain = r.g;
    CHECK(run_pass(r.g, "relu-grad-through-max-pool") == 1);
    CHECK(ops(r.g) == "max_pool2d relu_backward max_pool2d_backward");
    CHECK(r.g.values[r.pool_grad].type.str() == r.g.values[r.g.outputs[1]].type.str());  // pooled-sized now
    for (int shift : {0, 5, 11}) {
      const backend::Tensor y = awkward(backend::Shape({2, 3, c.h, c.w}), shift);
      const backend::Tensor dy = awkward(plain.values[plain.inputs[1]].type.shape, shift + 3);
      const std::vector<backend::Tensor> args{y, dy};
      const backend::Tensor want = ir::run(plain, ir::make_plan(plain), args)[0];
      const backend::Tensor got = ir::run(r.g, ir::make_plan(r.g), args)[0];
      CHECK(same_bits(got, want));
    }
  }
}

TEST_CASE("pass relu-grad-through-max-pool: a hand-worked case") {
  // One plane 2x4, two 2x2 windows: maxima 3 (at row 1, col 0) and -1 (row 0, col 2).
  PoolGrad r = pool_relu_grad(2, 4, 2, 2);
  CHECK(run_pass(r.g, "relu-grad-through-max-pool") == 1);
  backend::Tensor y = backend::Tensor::empty(backend::Shape({2, 3, 2, 4}), backend::DType::f32);
  backend::Tensor dy = backend::Tensor::empty(backend::Shape({2, 3, 1, 2}), backend::DType::f32);
  const float plane[] = {1, -2, -1, -2, 3, 0, -3, -4};
  for (int64_t p = 0; p < 6; ++p) {
    std::memcpy(y.data<float>() + 8 * p, plane, sizeof plane);
    dy.data<float>()[2 * p] = 5.0f + float(p);
    dy.data<float>()[2 * p + 1] = 7.0f;
  }
  const std::vector<backend::Tensor> args{y, dy};
  const std::vector<float> got = values(ir::run(r.g, ir::make_plan(r.g), args)[0]);
  for (int64_t p = 0; p < 6; ++p) {
    CAPTURE(p);
    // The first window's gradient reaches its argmax (3 > 0); the second's is cut (-1 <= 0).
    const std::vector<float> want{0, 0, 0, 0, 5.0f + float(p), 0, 0, 0};
    CHECK(std::vector<float>(got.begin() + 8 * p, got.begin() + 8 * p + 8) == want);
  }
}

TEST_CASE("pass relu-grad-through-max-pool: left alone where the pattern does not hold") {
  SUBCASE("the mask is not the pool's input") {
    PoolGrad r = pool_relu_grad(4, 4, 2, 2, true);
    CHECK(run_pass(r.g, "relu-grad-through-max-pool") == 0);
  }
  SUBCASE("the pool's gradient is read again") {
    PoolGrad r = pool_relu_grad(4, 4, 2, 2);
    output(r.g, r.pool_grad);
    CHECK(run_pass(r.g, "relu-grad-through-max-pool") == 0);
  }
}
