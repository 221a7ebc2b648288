// The neural-network ops on the GPU (cuDNN convolution, pooling, batch and
// layer norm, softmax, the losses) against the CPU backend, forward and
// backward: each loss and the gradients of every float input agree.
#include "backend/cuda_backend.h"
#include "backend/dispatch.h"
#include "gpu/gpu_test_util.h"
#if NN_HAVE_CUDA
#include "backend/cuda/conv_pointwise.h"
#endif

using namespace nngpu;

TEST_CASE("conv2d forward and backward through cuDNN, with deterministic algorithms only and with the fastest") {
  NN_NEED_GPU();
  struct Case {
    Shape x, w;
    Pair stride, pad, dil;
    int64_t groups;
    bool bias;
  };
  const std::vector<Case> cases{{{2, 3, 9, 9}, {4, 3, 3, 3}, pair(1), pair(1), pair(1), 1, true},
                                {{2, 4, 10, 8}, {6, 2, 3, 2}, {2, 1}, {1, 0}, pair(1), 2, false},
                                {{1, 2, 11, 11}, {3, 2, 3, 3}, pair(2), pair(2), pair(2), 1, true},
                                {{3, 8, 5, 5}, {8, 1, 3, 3}, pair(1), pair(1), pair(1), 8, true},
                                {{4, 5, 6, 6}, {7, 5, 1, 1}, pair(1), pair(0), pair(1), 1, false}};
  for (bool deterministic : {true, false}) {
    set_gpu_deterministic_convolutions(deterministic);
    for (const Case& c : cases)
      for (DType d : {DType::f32, DType::f64}) {
        std::vector<Tensor> in{random(c.x, -1, 1, d), random(c.w, -1, 1, d, 3)};
        if (c.bias) in.push_back(random({c.w[0]}, -1, 1, d, 4));
        same_grads_on_gpu("conv2d " + c.x.str() + " * " + c.w.str() + " " + std::string(dtype_name(d)) +
                              (deterministic ? "" : " (fastest algorithms)"),
                          [&](const std::vector<Tensor>& t) {
                            return weighted_sum(conv2d(t[0], t[1], c.bias ? t[2] : Tensor(), c.stride, c.pad, c.dil,
                                                       c.groups));
                          },
                          in, d == DType::f32 ? 2e-4 : 1e-10, d == DType::f32 ? 2e-4 : 1e-10);
      }
  }
  set_gpu_deterministic_convolutions(true);
}

#if NN_HAVE_CUDA
TEST_CASE("pointwise convolutions as cuBLAS products give the CPU's convolution and its gradients") {
  NN_NEED_GPU();
  auto& dev = static_cast<cuda::CudaDevice&>(*gpu());
  using V = std::vector<int64_t>;
  // A dilation does not change a 1x1 kernel: still pointwise.
  for (const V& dil : {V{1, 1}, V{2, 3}}) {
    const Attrs conv{{"stride", V{1, 1}}, {"padding", V{0, 0}}, {"dilation", dil}, {"groups", int64_t(1)}};
    CHECK(cuda::is_pointwise(Shape{7, 5, 1, 1}, conv));
    for (DType d : {DType::f32, DType::f64}) {
      const Tensor x = random({3, 5, 4, 6}, -1, 1, d), w = random({7, 5, 1, 1}, -1, 1, d, 3);
      const Tensor dy = random({3, 7, 4, 6}, -1, 1, d, 5);
      Attrs data = conv, filter = conv;
      data.set("input_shape", x.shape());
      filter.set("weight_shape", w.shape());
      const Tensor y_cpu = call(op("conv2d"), {x, w}, conv);
      const Tensor dx_cpu = call(op("conv2d_backward_input"), {dy, w}, data);
      const Tensor dw_cpu = call(op("conv2d_backward_weight"), {dy, x}, filter);
      Tensor y = Tensor::empty(y_cpu.shape(), d, gpu()), dx = Tensor::empty(x.shape(), d, gpu());
      Tensor dw = Tensor::empty(w.shape(), d, gpu());
      const Tensor gx = on(gpu(), x), gw = on(gpu(), w), gdy = on(gpu(), dy);
      cuda::pointwise_forward(dev, gx, gw, y);
      cuda::pointwise_backward_input(dev, gdy, gw, dx);
      cuda::pointwise_backward_weight(dev, gdy, gx, dw);
      const double tol = d == DType::f32 ? 1e-5 : 1e-12;
      check_same(y_cpu, y, tol, tol, "pointwise forward " + std::string(dtype_name(d)));
      check_same(dx_cpu, dx, tol, tol, "pointwise backward input " + std::string(dtype_name(d)));
      check_same(dw_cpu, dw, tol, tol, "pointwise backward weight " + std::string(dtype_name(d)));
    }
  }
  // Not pointwise: a wider kernel, a stride, padding, groups.
  const Attrs plain{{"stride", V{1, 1}}, {"padding", V{0, 0}}, {"dilation", V{1, 1}}, {"groups", int64_t(1)}};
  CHECK_FALSE(cuda::is_pointwise(Shape{7, 5, 1, 3}, plain));
  Attrs strided = plain, padded = plain, grouped = plain;
  strided.set("stride", V{2, 1});
  padded.set("padding", V{0, 1});
  grouped.set("groups", int64_t(5));
  CHECK_FALSE(cuda::is_pointwise(Shape{7, 5, 1, 1}, strided));
  CHECK_FALSE(cuda::is_pointwise(Shape{7, 5, 1, 1}, padded));
  CHECK_FALSE(cuda::is_pointwise(Shape{5, 1, 1, 1}, grouped));
}
#endif

TEST_CASE("max and average pooling with their gradients (ties, padding, overlapping windows)") {
  NN_NEED_GPU();
  // Values from a few levels, so windows hold ties.
  Tensor x = astype(random({2, 3, 9, 8}, -3, 3, DType::i64), DType::f64);
  struct Case {
    Pair k;
    std::optional<Pair> stride;
    Pair pad;
  };
  for (const Case& c : std::vector<Case>{{pair(2), std::nullopt, pair(0)}, {pair(3), pair(2), pair(1)},
                                         {{3, 2}, pair(1), {1, 0}}, {pair(3), pair(3), pair(0)}})
    same_grads_on_gpu("pooling", [&](const std::vector<Tensor>& t) {
      return add(weighted_sum(max_pool2d(t[0], c.k, c.stride, c.pad)),
                 weighted_sum(avg_pool2d(t[0], c.k, c.stride, c.pad)));
    }, {x}, 1e-12, 1e-12);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  same_on_gpu("NaN in a window wins", [](const std::vector<Tensor>& t) {
    return std::vector<Tensor>{max_pool2d(t[0], pair(2))};
  }, {from_doubles({1, nan, 3, 4, 5, 6, nan, 8, 9, 1, 2, 3, 4, 5, 6, 7}, Shape{1, 1, 4, 4}, DType::f32)}, 0, 0);
}

TEST_CASE("batch norm (with its running statistics) and layer norm, forward and backward") {
  NN_NEED_GPU();
  same_on_gpu("batch norm running statistics", [](const std::vector<Tensor>& t) {
    Tensor rm = add(t[1], scalar(0.0, DType::f64, true)), rv = add(t[2], scalar(1.0, DType::f64, true));
    Tensor y = batch_norm(t[0], t[1], t[2], rm, rv, true, 0.1, 1e-5);
    Tensor e = batch_norm(t[0], t[1], t[2], rm, rv, false);
    return std::vector<Tensor>{y, rm, rv, e};
  }, {random({4, 3, 5, 5}), random({3}, 0.5, 1.5, DType::f32, 3), random({3}, -1, 1, DType::f32, 4)}, 1e-5, 1e-5);
  same_grads_on_gpu("batch norm gradients", [](const std::vector<Tensor>& t) {
    Tensor rm, rv;
    return weighted_sum(batch_norm(t[0], t[1], t[2], rm, rv, true));
  }, {random({4, 3, 5, 5}, -2, 2, DType::f64), random({3}, 0.5, 1.5, DType::f64, 3), random({3}, -1, 1, DType::f64, 4)},
     1e-9, 1e-10);
  same_grads_on_gpu("layer norm gradients", [](const std::vector<Tensor>& t) {
    return weighted_sum(layer_norm(t[0], t[1], t[2]));
  }, {random({6, 4, 10}, -2, 2, DType::f64), random({10}, 0.5, 1.5, DType::f64, 3), random({10}, -1, 1, DType::f64, 4)},
     1e-9, 1e-10);
  same_on_gpu("layer norm f32", [](const std::vector<Tensor>& t) {
    return std::vector<Tensor>{layer_norm(t[0], t[1], t[2]), layer_norm(t[0], Tensor(), Tensor(), 1e-5, 2)};
  }, {random({5, 3, 300}), random({300}, 0.5, 1.5, DType::f32, 3), random({300}, -1, 1, DType::f32, 4)}, 1e-5, 1e-5);
}

TEST_CASE("batch_norm_apply on the GPU remakes batch_norm_train's y there bit for bit") {
  NN_NEED_GPU();
  for (DType d : {DType::f32, DType::f64}) {
    std::vector<Tensor> in{on(gpu(), random({4, 3, 5, 5}, -2, 2, d)), on(gpu(), random({3}, 0.5, 1.5, d, 3)),
                           on(gpu(), random({3}, -1, 1, d, 4))};
    const Attrs eps{{"eps", 1e-5}};
    Tensors t = dispatch(op("batch_norm_train"), in, eps);
    Tensor y = dispatch(op("batch_norm_apply"), std::vector<Tensor>{in[0], in[1], in[2], t[1], t[2]}, eps)[0];
    check_same(on_cpu(t[0]), y, 0, 0, "batch_norm_apply against batch_norm_train's y");
    Tensors c = dispatch(op("batch_norm_train"), std::vector<Tensor>{on_cpu(in[0]), on_cpu(in[1]), on_cpu(in[2])}, eps);
    check_same(c[0], y, 1e-5, 1e-5, "batch_norm_apply against the CPU");
    // batch_norm_scale gives the CPU's bits, and the ops the pass
    // batch-norm-apply-into-elementwise writes give y's, one by one and as
    // one fused kernel.
    Tensor s = dispatch(op("batch_norm_scale"), std::vector<Tensor>{in[1], t[2]}, eps)[0];
    check_same(dispatch(op("batch_norm_scale"), std::vector<Tensor>{on_cpu(in[1]), on_cpu(t[2])}, eps)[0], s, 0, 0,
               "batch_norm_scale against the CPU");
    auto view = [](const Tensor& v) { return reshape(v, {3, 1, 1}); };
    check_same(on_cpu(t[0]), add(mul(sub(in[0], view(t[1])), view(s)), view(in[2])), 0, 0,
               "(x - mean) * scale + beta against batch_norm_train's y");
  }
}

TEST_CASE("softmax, log_softmax and the losses, forward and backward") {
  NN_NEED_GPU();
  for (int64_t axis : {-1, 0, 1})
    same_grads_on_gpu("softmax axis " + std::to_string(axis), [&](const std::vector<Tensor>& t) {
      return add(weighted_sum(softmax(t[0], axis)), weighted_sum(log_softmax(t[0], axis)));
    }, {random({4, 7, 3}, -3, 3, DType::f64)}, 1e-10, 1e-11);
  same_on_gpu("softmax of long rows, f32, with -inf and NaN rows", [](const std::vector<Tensor>& t) {
    return std::vector<Tensor>{softmax(t[0]), log_softmax(t[0]), softmax(t[1]), log_softmax(t[1])};
  }, {random({3, 5000}, -20, 20),
      from_doubles({-INFINITY, -INFINITY, 1, 2, NAN, 0}, Shape{3, 2}, DType::f32)}, 1e-5, 1e-6);
  Tensor ids = from_ints({2, 0, 4, 4, 1, 3}, Shape{6}, DType::i64);
  same_grads_on_gpu("softmax cross-entropy with ids and with probabilities, nll, mse, l1, bce", [&](const std::vector<Tensor>& t) {
    Tensor probs = softmax(t[1]);
    Tensor l = add(softmax_cross_entropy(t[0], t[2]), softmax_cross_entropy(t[0], probs));
    l = add(l, nll_loss(log_softmax(t[0]), t[2]));
    l = add(l, add(mse_loss(t[0], t[1]), l1_loss(t[0], t[1])));
    return add(l, bce_with_logits(t[0], sigmoid(t[1])));
  }, {random({6, 5}, -3, 3, DType::f64), random({6, 5}, -1, 1, DType::f64, 3), ids}, 1e-10, 1e-11);
  same_on_gpu("accuracy and one_hot", [](const std::vector<Tensor>& t) {
    return std::vector<Tensor>{accuracy(t[0], t[1]), one_hot(t[1], 5), accuracy(t[0], softmax(t[0]))};
  }, {random({6, 5}), ids}, 0, 0);
  Tensor logits = on(gpu(), random({6, 5}));
  CHECK(error_of([&] { softmax_cross_entropy(logits, on(gpu(), from_ints({0, 1, 2, 3, 4, 5}, Shape{6}, DType::i64))); }) ==
        "softmax_cross_entropy: label 5 is out of range for 5 classes");
  CHECK(error_of([&] { one_hot(on(gpu(), from_ints({0, -2}, Shape{2}, DType::i32)), 3); }) ==
        "one_hot: id -2 is out of range for 3 classes");
}
