// Reductions on the GPU against the CPU backend: sum, prod, max, min over
// every kind of axis set (inner, outer, mixed, all), large ones that split
// into parts, integers (wrapping i64 sums), NaN, argmax/argmin ties, and the
// composites mean, var, std, logsumexp and norm; with their gradients.
#include "gpu/gpu_test_util.h"

using namespace nngpu;

TEST_CASE("sum, prod, max and min over any axes on the GPU give the CPU's values") {
  NN_NEED_GPU();
  const std::vector<Axes> axes{std::nullopt, std::vector<int64_t>{0}, std::vector<int64_t>{1},
                               std::vector<int64_t>{2}, std::vector<int64_t>{0, 2}, std::vector<int64_t>{1, 2},
                               std::vector<int64_t>{-1, 0}};
  for (DType d : {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean})
    for (const Axes& ax : axes)
      for (bool keep : {false, true}) {
        const double lo = d == DType::boolean ? 0 : -3, hi = d == DType::boolean ? 2 : 3;
        same_on_gpu("reduce " + std::string(dtype_name(d)), [&](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{sum(in[0], ax, keep), prod(in[0], ax, keep), max(in[0], ax, keep),
                                     min(in[0], ax, keep)};
        }, {random({5, 7, 9}, lo, hi, d)}, 1e-5, 1e-6);
      }
}

TEST_CASE("large reductions split into parts still give the CPU's sums") {
  NN_NEED_GPU();
  same_on_gpu("large", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{sum(in[0]), sum(in[0], std::vector<int64_t>{0}), sum(in[0], std::vector<int64_t>{1}),
                               max(in[0]), mean(in[0], std::vector<int64_t>{0}), sum(in[1]),
                               sum(in[1], std::vector<int64_t>{0})};
  }, {random({4000, 300}), random({1 << 20, 3}, -1, 1, DType::i64)}, 1e-6, 1e-6);
  same_on_gpu("empty", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{sum(in[0]), prod(in[0], std::vector<int64_t>{0}), sum(in[0], std::vector<int64_t>{1})};
  }, {zeros({0, 4})});
}

TEST_CASE("argmax and argmin keep the first extreme and the first NaN") {
  NN_NEED_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor ties = from_doubles({1, 3, 3, 0, 3, -1, -1, 2, nan, 5, nan, 0}, Shape{3, 4}, DType::f32);
  same_on_gpu("ties", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{argmax(in[0]), argmin(in[0]), argmax(in[0], 1), argmin(in[0], 1), argmax(in[0], 0, true),
                               argmin(in[0], 0)};
  }, {ties}, 0, 0);
  Tensor longrow = astype(random({3, 100000}, -100, 100, DType::i32), DType::f32);  // many ties
  same_on_gpu("long rows", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{argmax(in[0], 1), argmin(in[0], 1), argmax(in[0]), argmax(in[0], 0)};
  }, {longrow}, 0, 0);
}

TEST_CASE("mean, var, std, logsumexp and norm, and the gradients of the reductions") {
  NN_NEED_GPU();
  same_on_gpu("composites", [](const std::vector<Tensor>& in) {
    const std::vector<int64_t> ax{1};
    return std::vector<Tensor>{mean(in[0]), var(in[0], ax), nn::backend::std(in[0], ax, true, 1), logsumexp(in[0], ax),
                               norm(in[0]), mean(in[1])};
  }, {random({6, 50}, -3, 3), random({10}, -5, 5, DType::i64)}, 1e-5, 1e-6);
  same_grads_on_gpu("reduction gradients", [](const std::vector<Tensor>& in) {
    const std::vector<int64_t> ax{1};
    return add(add(weighted_sum(sum(in[0], ax)), weighted_sum(prod(in[1], ax))),
               add(weighted_sum(max(in[0], std::vector<int64_t>{0})), weighted_sum(logsumexp(in[0], ax))));
  }, {random({4, 6}, -2, 2, DType::f64), random({4, 3}, 0.5, 1.5, DType::f64)});
}
