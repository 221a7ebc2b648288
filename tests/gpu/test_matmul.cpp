// matmul on the GPU (cuBLAS, full f32/f64 precision) against the CPU: plain,
// batched with broadcast batch dims, 1-d operands, integers and bools, the
// transposed forms matmul_tn / matmul_nt, and the gradients.
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
