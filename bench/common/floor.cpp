// product_flops and sgemm_gflops (floor.h).
#include "floor.h"

#include <cblas.h>

#include <chrono>
#include <vector>

#include "median.h"

namespace nn::bench {

namespace {

double numel(const backend::TensorType& t) { return double(t.shape.numel()); }

// A conv's multiply-adds per output element: the weight's elements per
// output channel (C_in / groups x KH x KW).
double per_output(const backend::TensorType& weight) { return numel(weight) / double(weight.shape[0]); }

}  // namespace

double product_flops(const ir::Graph& g) {
  using backend::OpId;
  double flops = 0;
  for (const ir::Node& n : g.nodes) {
    if (!n.op) continue;
    auto in = [&](size_t i) -> const backend::TensorType& { return g.values[n.inputs[i]].type; };
    const backend::TensorType& out = g.values[n.outputs[0]].type;
    const backend::Shape& a = in(0).shape;
    switch (n.op->id) {
      case OpId::matmul:
      case OpId::matmul_nt: flops += 2 * numel(out) * double(a[a.ndim() - 1]); break;
      case OpId::matmul_tn: flops += 2 * numel(out) * double(a[a.ndim() - 2]); break;
      case OpId::matmul_epilogue: flops += 2 * numel(out) * double(a[n.attrs.get<bool>("ta") ? 0 : 1]); break;
      case OpId::conv2d:
      case OpId::conv2d_relu: flops += 2 * numel(out) * per_output(in(1)); break;            // (x, w[, b]) -> y
      case OpId::conv2d_backward_input: flops += 2 * numel(in(0)) * per_output(in(1)); break;  // (dy, w) -> dx
      case OpId::conv2d_backward_weight: flops += 2 * numel(in(0)) * per_output(out); break;   // (dy, x) -> dw
      case OpId::conv2d_relu_max_pool: {  // y is pooled: count the convolution's own outputs
        const auto& s = n.attrs.get<std::vector<int64_t>>("stride");
        const auto& p = n.attrs.get<std::vector<int64_t>>("padding");
        const auto& d = n.attrs.get<std::vector<int64_t>>("dilation");
        const backend::Shape& w = in(1).shape;
        const double oh = double((a[2] + 2 * p[0] - d[0] * (w[2] - 1) - 1) / s[0] + 1);
        const double ow = double((a[3] + 2 * p[1] - d[1] * (w[3] - 1) - 1) / s[1] + 1);
        flops += 2 * double(a[0]) * double(w[0]) * oh * ow * per_output(in(1));
        break;
      }
      default: break;
    }
  }
  return flops;
}

double sgemm_gflops(int threads) {
  constexpr int n = 1024;
  static std::vector<float> a(size_t(n) * n, 0.5f), b(size_t(n) * n, 0.25f), c(size_t(n) * n);
  auto product = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  };
  openblas_set_num_threads(threads);
  product();  // warm-up: OpenBLAS's threads, the caches
  std::vector<double> seconds;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    product();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  openblas_set_num_threads(1);
  return 2.0 * n * n * n / median(seconds) * 1e-9;
}

}  // namespace nn::bench
