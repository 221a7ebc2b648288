// f16 and bf16 on the GPU. Their kernels compute in float and round each
// result once, so the reference is the CPU in f32 from the same rounded
// inputs, its results rounded to the 16-bit dtype by the CPU's cast
// (backend/half.h): elementwise ops, casts and creation ops agree to within
// one unit in the last place (usually exactly); matmul and convolution
// (cuBLAS and cuDNN, accumulating in f32) and the neural-network kernels
// within a few; gradients through a small network within the rounding the
// 16-bit intermediates bring.
#include "gpu/gpu_test_util.h"

using namespace nngpu;

namespace {

// One unit in the last place, relative: 2^-10 for f16, 2^-7 for bf16.
double ulp(DType d) { return d == DType::f16 ? 0x1p-10 : 0x1p-7; }

// f on the CPU in f32 and on the GPU in d, from `in` rounded to d (integer
// and bool inputs pass unchanged): the CPU's outputs, then the GPU's.
std::pair<std::vector<Tensor>, std::vector<Tensor>> on_both_rounded(const Fn& f, const std::vector<Tensor>& in,
                                                                    DType d) {
  std::vector<Tensor> cpu_in, gpu_in;
  for (const Tensor& t : in) {
    const bool fl = is_floating(t.dtype());
    const Tensor r = fl ? astype(t, d) : t;
    cpu_in.push_back(fl ? astype(r, DType::f32) : t);
    gpu_in.push_back(on(gpu(), r));
  }
  return run_on_both(f, cpu_in, gpu_in);
}

// f on GPU copies of `in` rounded to d, against f on the CPU in f32 from the
// same rounded values; float results compare after rounding to the GPU
// result's dtype.
void like_f32(const std::string& what, const Fn& f, const std::vector<Tensor>& in, DType d, double ulps,
              double atol) {
  const auto [a, b] = on_both_rounded(f, in, d);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string name = what + " " + std::string(dtype_name(d)) + ", output " + std::to_string(i);
    CHECK_MESSAGE(b[i].dtype() == (is_floating(a[i].dtype()) ? d : a[i].dtype()), name);
    const Tensor ref = is_floating(a[i].dtype()) ? astype(a[i], b[i].dtype()) : a[i];
    check_same(ref, b[i], ulps * ulp(d), atol, name);
  }
}

// ||gpu - cpu|| / ||cpu|| of each float output of f, each within rel: for
// chains of ops, whose 16-bit intermediates round at every step while the
// CPU's stay in f32, so single elements that cancel can differ by more.
void follows_f32(const std::string& what, const Fn& f, const std::vector<Tensor>& in, DType d, double rel) {
  const auto [a, b] = on_both_rounded(f, in, d);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string name = what + " " + std::string(dtype_name(d)) + ", output " + std::to_string(i);
    REQUIRE_MESSAGE(b[i].dtype() == d, name);
    const double err = relative_error(a[i], b[i]);
    MESSAGE(name << ": relative error " << err);
    CHECK_MESSAGE(err <= rel, name);
  }
}

using U = Tensor (*)(const Tensor&);
using B = Tensor (*)(const Tensor&, const Tensor&);

}  // namespace

TEST_CASE("casts to and from f16 and bf16 on the GPU give the CPU's bits") {
  NN_NEED_GPU();
  const Tensor awkward = from_doubles({NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.1, 1.0 / 3, 65504, 65520, 70000, -2049,
                                       2051, 0x1p-24, 0x1p-25, 3 * 0x1p-25, 1e-30, 257, 259, 3.4e38, -1e5},
                                      Shape{20}, DType::f64);
  for (DType half : {DType::f16, DType::bf16}) {
    for (DType from : {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean}) {
      const Tensor x = is_floating(from) ? astype(awkward, from) : random({64}, -70000, 70000, from);
      same_on_gpu(std::string("cast ") + std::string(dtype_name(from)) + " to " + std::string(dtype_name(half)),
                  [&](const std::vector<Tensor>& t) {
                    Tensor h = astype(t[0], half);
                    return std::vector<Tensor>{h, astype(h, from)};
                  }, {x}, 0, 0);
    }
    same_on_gpu("between f16 and bf16", [&](const std::vector<Tensor>& t) {
      return std::vector<Tensor>{astype(t[0], DType::f16), astype(t[0], DType::bf16)};
    }, {astype(awkward, half)}, 0, 0);
  }
}

TEST_CASE("elementwise ops on f16 and bf16 compute in float and round once") {
  NN_NEED_GPU();
  const std::vector<std::pair<const char*, U>> unary{
      {"exp", exp}, {"log", log}, {"sqrt", sqrt}, {"rsqrt", rsqrt}, {"sin", sin}, {"cos", cos}, {"tanh", tanh},
      {"sigmoid", sigmoid}, {"relu", relu}, {"softplus", softplus}, {"neg", neg}, {"abs", abs}, {"sign", sign},
      {"floor", floor}, {"ceil", ceil}, {"round", round}, {"logical_not", logical_not}, {"isnan", isnan}};
  const std::vector<std::pair<const char*, B>> binary{
      {"add", add}, {"sub", sub}, {"mul", mul}, {"div", div}, {"pow", pow}, {"maximum", maximum},
      {"minimum", minimum}, {"eq", eq}, {"lt", lt}, {"ge", ge}};
  for (DType d : {DType::f16, DType::bf16}) {
    for (auto& [name, f] : unary)
      like_f32(name, [&](const std::vector<Tensor>& t) { return std::vector<Tensor>{f(t[0])}; },
               {random({4, 33}, -3, 3)}, d, 1, 1e-6);
    for (auto& [name, f] : binary)
      like_f32(name, [&](const std::vector<Tensor>& t) {
        return std::vector<Tensor>{f(t[0], t[1]), f(t[0], scalar(2.5, DType::f64, true)),
                                   f(scalar_int(3, DType::i64, true), t[1])};
      }, {random({3, 1, 5}, 0.1, 4), random({4, 5}, -3, 3, DType::f32, 5)}, d, 1, 1e-6);
    like_f32("where, clip, gelu, leaky_relu", [](const std::vector<Tensor>& t) {
      return std::vector<Tensor>{where(gt(t[0], scalar(0.0, DType::f64, true)), t[0], t[1]),
                                 clip(t[0], scalar(-0.5, DType::f64, true), scalar(0.5, DType::f64, true)),
                                 gelu(t[0]), gelu(t[0], true), leaky_relu(t[0], 0.2)};
    }, {random({2, 3, 4}), random({3, 1}, -2, 2, DType::f32, 9)}, d, 1, 1e-6);
  }
}

TEST_CASE("creation, random and reduction ops in f16 and bf16") {
  NN_NEED_GPU();
  for (DType d : {DType::f16, DType::bf16}) {
    manual_seed(99);
    like_f32("creation and random", [&](const std::vector<Tensor>&) {
      const DType t = default_device() == gpu() ? d : DType::f32;
      return std::vector<Tensor>{full({2, 3}, 0.1, t), arange(0, 10, 0.3, t), linspace(-1, 1, 9, t), eye(3, t),
                                 rand({500}, t), randn({500}, t)};
    }, {}, d, 0, 0);
    like_f32("reductions", [](const std::vector<Tensor>& t) {
      return std::vector<Tensor>{sum(t[0]), sum(t[0], std::vector<int64_t>{1}), mean(t[0], std::vector<int64_t>{0}),
                                 max(t[0], std::vector<int64_t>{1}), min(t[0]),
                                 argmax(t[0], 1), argmin(t[0], 0)};
    }, {random({37, 300}, -2, 2)}, d, 1, 1e-6);
  }
}

TEST_CASE("matmul and conv2d in f16 and bf16 accumulate in f32") {
  NN_NEED_GPU();
  for (DType d : {DType::f16, DType::bf16}) {
    like_f32("matmul, batched, transposed", [](const std::vector<Tensor>& t) {
      return std::vector<Tensor>{matmul(t[0], t[1]), matmul(t[2], t[1]), call(op("matmul_tn"), {t[1], t[1]}),
                                 call(op("matmul_nt"), {t[0], t[0]})};
    }, {random({9, 64}, -1, 1), random({64, 17}, -1, 1, DType::f32, 3), random({3, 9, 64}, -1, 1, DType::f32, 4)},
             d, 2, 1e-3);
    // cuDNN writes the convolution in d, then adds the bias there (as
    // PyTorch does): two roundings, which the CPU's side makes too.
    like_f32("conv2d", [d](const std::vector<Tensor>& t) {
      Tensor biased = conv2d(t[0], t[1], t[2], pair(1), pair(1), pair(1), 1);
      if (default_device() != gpu()) {
        const Tensor rounded = astype(astype(conv2d(t[0], t[1], Tensor(), pair(1), pair(1), pair(1), 1), d), DType::f32);
        biased = add(rounded, reshape(t[2], {1, 16, 1, 1}));
      }
      return std::vector<Tensor>{biased, conv2d(t[0], t[1], Tensor(), pair(2), pair(0), pair(1), 1)};
    }, {random({2, 8, 9, 9}, -1, 1), random({16, 8, 3, 3}, -1, 1, DType::f32, 3), random({16}, -1, 1, DType::f32, 4)},
             d, 2, 1e-3);
  }
}

TEST_CASE("softmax, norms and pooling in f16 and bf16") {
  NN_NEED_GPU();
  for (DType d : {DType::f16, DType::bf16}) {
    like_f32("softmax and log_softmax", [](const std::vector<Tensor>& t) {
      return std::vector<Tensor>{softmax(t[0]), log_softmax(t[0]), softmax(t[0], 0)};
    }, {random({6, 300}, -5, 5)}, d, 1, 1e-6);
    // y is made with a scale from the variance as stored (rounded to d).
    like_f32("batch norm and layer norm", [](const std::vector<Tensor>& t) {
      Tensor rm, rv;
      return std::vector<Tensor>{batch_norm(t[0], t[1], t[2], rm, rv, true), layer_norm(t[3], t[4], t[5])};
    }, {random({4, 3, 5, 5}), random({3}, 0.5, 1.5, DType::f32, 3), random({3}, -1, 1, DType::f32, 4),
        random({6, 40}), random({40}, 0.5, 1.5, DType::f32, 5), random({40}, -1, 1, DType::f32, 6)}, d, 3, 3 * ulp(d));
    // The gradients too, of sum(pool(x) * w): both sides pool the same
    // rounded values, so ties (more frequent in 16 bits) route the same way,
    // and the gradient reaching the pools is w itself.
    like_f32("pooling", [](const std::vector<Tensor>& t) {
      const Tensor x = param(t[0]);
      const Tensor m = max_pool2d(x, pair(2)), a = avg_pool2d(x, pair(3), pair(2), pair(1));
      return std::vector<Tensor>{m, a, grad(sum(mul(m, t[1])), {x})[0], grad(sum(mul(a, t[1])), {x})[0]};
    }, {random({2, 3, 8, 8}), random({2, 3, 4, 4}, -1, 1, DType::f32, 8)}, d, 1, 1e-6);
  }
}

TEST_CASE("a small network's loss and gradients in f16 and bf16 follow f32's") {
  NN_NEED_GPU();
  const Tensor ids = from_ints({2, 0, 4, 1}, Shape{4}, DType::i64);
  for (DType d : {DType::f16, DType::bf16})
    follows_f32("conv, batch norm, relu, pool, linear, cross-entropy", [&](const std::vector<Tensor>& t) {
      std::vector<Tensor> ps;
      for (size_t i = 0; i < 5; ++i) ps.push_back(param(t[i]));
      Tensor rm, rv;
      Tensor h = relu(batch_norm(conv2d(ps[0], ps[1], Tensor(), pair(1), pair(1), pair(1), 1), ps[2], ps[3], rm, rv,
                                 true));
      // Average pooling: a max pool's ties, which 16-bit rounding makes where
      // f32 has none, would route gradients elsewhere (pooling is checked
      // alone above).
      h = reshape(avg_pool2d(h, pair(2)), {4, 6 * 4 * 4});
      Tensor loss = softmax_cross_entropy(matmul(h, ps[4]), t[5]);
      std::vector<Tensor> out{loss};
      for (Tensor& g : grad(loss, {ps[0], ps[1], ps[2], ps[3], ps[4]})) out.push_back(g);
      return out;
    }, {random({4, 3, 8, 8}), random({6, 3, 3, 3}, -0.5, 0.5, DType::f32, 3), random({6}, 0.5, 1.5, DType::f32, 4),
        random({6}, -0.5, 0.5, DType::f32, 5), random({96, 5}, -0.2, 0.2, DType::f32, 6), ids},
             d, 2 * ulp(d));
}
