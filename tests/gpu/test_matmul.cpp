// matmul on the GPU (cuBLAS, full f32/f64 precision) against the CPU: plain,
// batched with broadcast batch dims, 1-d operands, integers and bools, the
// transposed forms matmul_tn / matmul_nt, and the gradients; with TF32 on,
// products and convolutions in TF32's precision.
#include "backend/cuda_backend.h"
#include "gpu/gpu_test_util.h"

using namespace nngpu;

TEST_CASE("matmul on the GPU gives the CPU's products for every layout") {
  NN_NEED_GPU();
  const std::vector<std::pair<Shape, Shape>> cases{
      {{7, 5}, {5, 3}},          {{2, 4, 5}, {5, 6}},          {{2, 1, 3, 4}, {5, 4, 6}},
      {{5}, {5, 3}},             {{7, 5}, {5}},                 {{5}, {5}},
      {{3, 1, 2, 4}, {1, 4, 4, 2}}, {{64, 128}, {128, 33}},     {{0, 5}, {5, 3}},
      {{4, 0}, {0, 3}}};
  for (DType d : {DType::f32, DType::f64})
    for (auto& [sa, sb] : cases)
      same_on_gpu("matmul " + sa.str() + " @ " + sb.str() + " " + std::string(dtype_name(d)),
                  [](const std::vector<Tensor>& in) { return std::vector<Tensor>{matmul(in[0], in[1])}; },
                  {random(sa, -1, 1, d), random(sb, -1, 1, d, 3)}, 1e-5, 1e-5);
  for (DType d : {DType::i32, DType::i64, DType::boolean})
    same_on_gpu("integer matmul " + std::string(dtype_name(d)),
                [](const std::vector<Tensor>& in) { return std::vector<Tensor>{matmul(in[0], in[1])}; },
                {random({2, 3, 4}, -50, 50, d), random({4, 5}, -50, 50, d, 3)}, 0, 0);
}

TEST_CASE("matmul_tn and matmul_nt read the transpose themselves") {
  NN_NEED_GPU();
  same_on_gpu("transposed forms", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{call(op("matmul_tn"), {in[0], in[1]}), call(op("matmul_nt"), {in[2], in[3]})};
  }, {random({6, 4}), random({6, 5}, -2, 2, DType::f32, 3), random({4, 6}, -2, 2, DType::f32, 4),
      random({5, 6}, -2, 2, DType::f32, 5)}, 1e-5, 1e-5);
}

TEST_CASE("matmul gradients on the GPU, batched and broadcast") {
  NN_NEED_GPU();
  same_grads_on_gpu("matmul grads", [](const std::vector<Tensor>& in) {
    return add(weighted_sum(matmul(in[0], in[1])), weighted_sum(matmul(in[2], in[0])));
  }, {random({3, 4, 5}, -1, 1, DType::f64), random({5, 2}, -1, 1, DType::f64, 3), random({4}, -1, 1, DType::f64, 4)},
     1e-9, 1e-10);
}

TEST_CASE("with TF32 on, f32 products and convolutions round their operands to TF32; off, they are f32 again") {
  NN_NEED_GPU();
  const Tensor a = random({256, 256}, -1, 1, DType::f64), b = random({256, 256}, -1, 1, DType::f64, 3);
  const Tensor x = random({8, 16, 12, 12}, -1, 1, DType::f64, 4), w = random({32, 16, 3, 3}, -1, 1, DType::f64, 5);
  const Tensor ab = matmul(a, b), xw = conv2d(x, w, Tensor(), pair(1), pair(1));
  auto on_gpu = [](const Tensor& t) { return on(gpu(), astype(t, DType::f32)); };
  set_gpu_tf32(true);
  const double tf32_mm = relative_error(ab, matmul(on_gpu(a), on_gpu(b)));
  const double tf32_conv = relative_error(xw, conv2d(on_gpu(x), on_gpu(w), Tensor(), pair(1), pair(1)));
  set_gpu_tf32(false);
  const double f32_mm = relative_error(ab, matmul(on_gpu(a), on_gpu(b)));
  const double f32_conv = relative_error(xw, conv2d(on_gpu(x), on_gpu(w), Tensor(), pair(1), pair(1)));
  MESSAGE("relative errors: TF32 matmul " << tf32_mm << ", conv " << tf32_conv << "; f32 matmul " << f32_mm
                                          << ", conv " << f32_conv);
  // TF32 keeps 10 of f32's 23 mantissa bits: errors near 2^-11 per operand.
  CHECK(tf32_mm > 1e-5);
  CHECK(tf32_mm < 3e-3);
  CHECK(tf32_conv < 3e-3);
  CHECK(f32_mm < 1e-6);
  CHECK(f32_conv < 1e-6);
}
