// CUDA kernels of conv2d and its backward ops conv2d_backward_input and
// conv2d_backward_weight (backend/ops/nn_conv.cpp) through cuDNN: NCHW,
// zero padding, stride, dilation and groups as the attributes say. The
// algorithm of each geometry is chosen once, by timing cuDNN's candidates
// (cudnnFind*, PyTorch's cudnn.benchmark) and, for a pointwise
// convolution, cuBLAS products (conv_pointwise.h), and cached; only FMA
// algorithms are taken where cuDNN has one (no TF32 unless tf32.h's switch
// is on: f32 means f32, as on the CPU), and by default only deterministic
// ones (gpu_deterministic_convolutions). f16 and bf16 compute in f32 and
// may use Tensor Cores, which change no precision there. Workspace memory
// comes from the device's pool.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backend/cuda/conv_pointwise.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/register.h"
#include "backend/cuda/tf32.h"
#include "backend/cuda_backend.h"
#include "backend/half.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

// cuDNN descriptors, released with their owner.
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { check(cudnnCreateTensorDescriptor(&d), "conv2d"); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc() { check(cudnnCreateFilterDescriptor(&d), "conv2d"); }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc() { check(cudnnCreateConvolutionDescriptor(&d), "conv2d"); }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

cudnnDataType_t data_type(DType t) {
  if (t == DType::f32) return CUDNN_DATA_FLOAT;
  if (t == DType::f64) return CUDNN_DATA_DOUBLE;
  if (t == DType::f16) return CUDNN_DATA_HALF;
  if (t == DType::bf16) return CUDNN_DATA_BFLOAT16;
  throw Error("conv2d: no CUDA kernel for " + std::string(dtype_name(t)) + " tensors yet");
}

std::array<int64_t, 2> pair_of(const Attrs& a, const char* key) {
  const auto& v = a.get<std::vector<int64_t>>(key);
  return {v.at(0), v.at(1)};
}

int narrow(int64_t v) {
  if (v > 0x7fffffff) throw Error("conv2d: a dimension beyond 2^31 - 1 is not supported on the GPU");
  return int(v);
}

// The descriptors of one convolution: input x, weight w, output y.
struct Conv {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  DType dtype;
  bool tf32;        // f32 that may round to TF32 (tf32.h)
  std::string key;  // the geometry, for the algorithm cache

  Conv(const Shape& xs, const Shape& ws, const Shape& ys, DType t, const Attrs& attrs)
      : dtype(t), tf32(t == DType::f32 && tf32_switch().load()) {
    const cudnnDataType_t dt = data_type(t);
    const bool half_data = is_half_float(t);
    auto stride = pair_of(attrs, "stride"), pad = pair_of(attrs, "padding"), dil = pair_of(attrs, "dilation");
    const int64_t groups = attrs.get<int64_t>("groups");
    check(cudnnSetTensor4dDescriptor(x.d, CUDNN_TENSOR_NCHW, dt, narrow(xs[0]), narrow(xs[1]), narrow(xs[2]),
                                     narrow(xs[3])),
          "conv2d");
    check(cudnnSetTensor4dDescriptor(y.d, CUDNN_TENSOR_NCHW, dt, narrow(ys[0]), narrow(ys[1]), narrow(ys[2]),
                                     narrow(ys[3])),
          "conv2d");
    check(cudnnSetFilter4dDescriptor(w.d, dt, CUDNN_TENSOR_NCHW, narrow(ws[0]), narrow(ws[1]), narrow(ws[2]),
                                     narrow(ws[3])),
          "conv2d");
    check(cudnnSetConvolution2dDescriptor(conv.d, narrow(pad[0]), narrow(pad[1]), narrow(stride[0]),
                                          narrow(stride[1]), narrow(dil[0]), narrow(dil[1]), CUDNN_CROSS_CORRELATION,
                                          half_data ? CUDNN_DATA_FLOAT : dt),
          "conv2d");
    check(cudnnSetConvolutionGroupCount(conv.d, narrow(groups)), "conv2d");
    // cuDNN's default math lets f32 round to TF32; FMA math keeps it f32.
    const cudnnMathType_t math = half_data ? CUDNN_TENSOR_OP_MATH : tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    check(cudnnSetConvolutionMathType(conv.d, math), "conv2d");
    key = xs.str() + ws.str() + ys.str() + std::string(dtype_name(t)) + attrs.str() + (tf32 ? " tf32" : "");
  }
};

struct Choice {
  int algo = 0;
  size_t workspace = 0;
  cudnnMathType_t math = CUDNN_FMA_MATH;
  float ms = 0;       // as timed
  bool gemm = false;  // a pointwise convolution's cuBLAS products instead (conv_pointwise.h)
};

// A geometry's algorithm under each policy: cuDNN's timings are taken once
// and serve both (set_gpu_deterministic_convolutions may switch between
// them at any time).
struct Choices {
  Choice deterministic, fastest;
};

// On by default. Off (NN_CUDNN_ALGOS=fastest, or a host's call), conv2d
// may take algorithms whose sums come in another order on every run
// (atomics): on ResNet-50 a training step took about 25% less time, its
// results changing in the last bits run to run.
std::atomic<bool>& deterministic_switch() {
  static std::atomic<bool> on = [] {
    const char* v = std::getenv("NN_CUDNN_ALGOS");
    return !(v && std::string(v) == "fastest");
  }();
  return on;
}

// FFT and Winograd algorithms transform the data in its own dtype: in f16
// or bf16 that rounds far more than the f32 accumulation promised there.
bool transforms_data(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD || a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool transforms_data(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT || a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD || a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool transforms_data(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

// An algorithm within this factor of the fastest one's time may be taken
// instead when it needs less workspace: the workspace adds to a step's
// peak memory, and the fastest often needs far more than the next (on
// ResNet-50, 440 MB against none for 23% more time).
constexpr float kWorkspaceSlack = 1.3f;

// Among the algorithms cuDNN timed (fastest first) that compute as dtype t
// requires (f32: FMA instructions, no TF32 unless the switch is on; f64:
// those or the default math; f16 and bf16: any math, but no transform in
// the 16-bit dtype) and, when `deterministic`, give the same bits run after
// run: the one with the least workspace within kWorkspaceSlack of the
// fastest. Failing that, the fastest that computes as t requires; failing
// that, the fastest that runs.
template <class Perf>
Choice pick(const std::vector<Perf>& perf, int count, const char* op, const Conv& c, bool deterministic) {
  const DType t = c.dtype;
  auto precise = [&](const Perf& p) {
    if (is_half_float(t)) return !transforms_data(p.algo);
    if (c.tf32) return true;
    return p.mathType == CUDNN_FMA_MATH || (t == DType::f64 && p.mathType == CUDNN_DEFAULT_MATH);
  };
  int fastest = -1, chosen = -1, precise_any = -1, any = -1;
  for (int i = 0; i < count; ++i) {
    const Perf& p = perf[size_t(i)];
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    if (any < 0) any = i;
    if (!precise(p)) continue;
    if (precise_any < 0) precise_any = i;
    if (deterministic && p.determinism != CUDNN_DETERMINISTIC) continue;
    if (fastest < 0) fastest = chosen = i;
    else if (p.time <= kWorkspaceSlack * perf[size_t(fastest)].time && p.memory < perf[size_t(chosen)].memory)
      chosen = i;
  }
  const int i = chosen >= 0 ? chosen : precise_any >= 0 ? precise_any : any;
  if (i < 0) throw Error(std::string(op) + ": cuDNN offers no algorithm for this convolution");
  const Perf& p = perf[size_t(i)];
  return {int(p.algo), p.memory, p.mathType, p.time};
}

// NN_CUDNN_LOG=1: each geometry's timed candidates and choices, on
// standard error, the first time the geometry is seen.
bool log_on() {
  static const bool on = [] {
    const char* v = std::getenv("NN_CUDNN_LOG");
    return v && std::string(v) == "1";
  }();
  return on;
}

template <class Perf>
Choices pick_both(const std::vector<Perf>& perf, int count, const char* op, const Conv& c) {
  const Choices both{pick(perf, count, op, c, true), pick(perf, count, op, c, false)};
  if (!log_on()) return both;
  std::fprintf(stderr, "cudnn %s %s: deterministic algo %d (%.1f MB), fastest algo %d (%.1f MB)\n", op,
               c.key.c_str(), both.deterministic.algo, double(both.deterministic.workspace) / 1e6, both.fastest.algo,
               double(both.fastest.workspace) / 1e6);
  for (int i = 0; i < count; ++i) {
    const Perf& p = perf[size_t(i)];
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    std::fprintf(stderr, "  algo %d: %.3f ms, %.1f MB, %s, math %d\n", int(p.algo), double(p.time),
                 double(p.memory) / 1e6, p.determinism == CUDNN_DETERMINISTIC ? "deterministic" : "atomics",
                 int(p.mathType));
  }
  return both;
}

// The median time of three runs of f on the device's stream, after one
// untimed run (cuBLAS picks its kernels then).
float time_runs(CudaDevice& dev, const std::function<void()>& f) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "conv2d");
  check(cudaEventCreate(&stop), "conv2d");
  f();
  float ms[3];
  for (float& t : ms) {
    check(cudaEventRecord(start, dev.stream()), "conv2d");
    f();
    check(cudaEventRecord(stop, dev.stream()), "conv2d");
    check(cudaEventSynchronize(stop), "conv2d");
    check(cudaEventElapsedTime(&t, start, stop), "conv2d");
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms, ms + 3);
  return ms[1];
}

enum class Pass { forward, data, filter };

Choices time_algorithms(CudaDevice& dev, Conv& c, Pass pass) {
  cudnnHandle_t h = dev.cudnn();
  int max = 0, got = 0;
  if (pass == Pass::forward) {
    check(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max), "conv2d");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(size_t(std::max(max, 1)));
    check(cudnnFindConvolutionForwardAlgorithm(h, c.x.d, c.w.d, c.conv.d, c.y.d, max, &got, perf.data()), "conv2d");
    return pick_both(perf, got, "conv2d", c);
  }
  if (pass == Pass::data) {
    check(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max), "conv2d_backward_input");
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(size_t(std::max(max, 1)));
    check(cudnnFindConvolutionBackwardDataAlgorithm(h, c.w.d, c.y.d, c.conv.d, c.x.d, max, &got, perf.data()),
          "conv2d_backward_input");
    return pick_both(perf, got, "conv2d_backward_input", c);
  }
  check(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max), "conv2d_backward_weight");
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(size_t(std::max(max, 1)));
  check(cudnnFindConvolutionBackwardFilterAlgorithm(h, c.x.d, c.y.d, c.conv.d, c.w.d, max, &got, perf.data()),
        "conv2d_backward_weight");
  return pick_both(perf, got, "conv2d_backward_weight", c);
}

// The algorithm of this geometry and pass under the current policy, timed
// the first time the geometry is seen on this device; for a pointwise
// convolution (`products` runs its cuBLAS products, whose sums come in a
// fixed order) those products when they are faster.
Choice choose(CudaDevice& dev, Conv& c, Pass pass, const std::function<void()>& products) {
  static std::mutex mu;
  static std::map<std::string, Choices> cache;
  const std::string key = std::to_string(dev.index()) + ":" + std::to_string(int(pass)) + c.key;
  const bool deterministic = deterministic_switch().load();
  {
    std::lock_guard lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return deterministic ? it->second.deterministic : it->second.fastest;
  }
  Choices both = time_algorithms(dev, c, pass);
  if (products) {
    const float ms = time_runs(dev, products);
    for (Choice* ch : {&both.deterministic, &both.fastest})
      if (ms < ch->ms) *ch = Choice{0, 0, CUDNN_FMA_MATH, ms, true};
    if (log_on()) std::fprintf(stderr, "  cuBLAS products: %.3f ms\n", double(ms));
  }
  std::lock_guard lock(mu);
  cache[key] = both;
  return deterministic ? both.deterministic : both.fastest;
}

// alpha = 1 and beta = 0 (or 1) in the type cuDNN wants for the data.
struct Scale {
  float f1 = 1, f0 = 0;
  double d1 = 1, d0 = 0;
  const void* one(DType t) const { return t == DType::f64 ? static_cast<const void*>(&d1) : &f1; }
  const void* zero(DType t) const { return t == DType::f64 ? static_cast<const void*>(&d0) : &f0; }
};

// Runs a convolution pass the chosen way: a pointwise convolution's
// `products` when they were faster, else cuDNN's algorithm through `cudnn`
// (given the choice and its workspace, null when it needs none).
template <class Cudnn>
void run_chosen(CudaDevice& dev, Conv& c, Pass pass, bool pointwise, const std::function<void()>& products,
                const char* op, Cudnn cudnn) {
  const Choice ch = choose(dev, c, pass, pointwise ? products : std::function<void()>());
  if (ch.gemm) return products();
  check(cudnnSetConvolutionMathType(c.conv.d, ch.math), op);
  Tensor ws = scratch(dev, ch.workspace);
  check(cudnn(ch, ch.workspace ? ws.raw_data() : nullptr), op);
}

void conv2d(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor &x = in[0], &w = in[1];
  Tensor& y = out[0];
  if (y.numel() == 0) return;
  Conv c(x.shape(), w.shape(), y.shape(), y.dtype(), attrs);
  const Scale s;
  if (x.numel() == 0 || w.numel() == 0) {
    check(cudaMemsetAsync(y.raw_data(), 0, y.nbytes(), dev.stream()), "conv2d");
  } else {
    run_chosen(dev, c, Pass::forward, is_pointwise(w.shape(), attrs), [&] { pointwise_forward(dev, x, w, y); },
               "conv2d", [&](const Choice& ch, void* ws) {
                 return cudnnConvolutionForward(dev.cudnn(), s.one(c.dtype), c.x.d, x.raw_data(), c.w.d,
                                                w.raw_data(), c.conv.d, cudnnConvolutionFwdAlgo_t(ch.algo), ws,
                                                ch.workspace, s.zero(c.dtype), c.y.d, y.raw_data());
               });
  }
  if (in.size() == 3) {
    TensorDesc b;
    check(cudnnSetTensor4dDescriptor(b.d, CUDNN_TENSOR_NCHW, data_type(y.dtype()), 1, narrow(y.shape()[1]), 1, 1),
          "conv2d");
    check(cudnnAddTensor(dev.cudnn(), s.one(c.dtype), b.d, in[2].raw_data(), s.one(c.dtype), c.y.d, y.raw_data()),
          "conv2d");
  }
}

// (dy, w) -> dx of attr input_shape.
void backward_input(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor &dy = in[0], &w = in[1];
  Tensor& dx = out[0];
  if (dx.numel() == 0) return;
  Conv c(dx.shape(), w.shape(), dy.shape(), dx.dtype(), attrs);
  if (dy.numel() == 0 || w.numel() == 0) {
    check(cudaMemsetAsync(dx.raw_data(), 0, dx.nbytes(), dev.stream()), "conv2d_backward_input");
    return;
  }
  const Scale s;
  run_chosen(dev, c, Pass::data, is_pointwise(w.shape(), attrs), [&] { pointwise_backward_input(dev, dy, w, dx); },
             "conv2d_backward_input", [&](const Choice& ch, void* ws) {
               return cudnnConvolutionBackwardData(dev.cudnn(), s.one(c.dtype), c.w.d, w.raw_data(), c.y.d,
                                                   dy.raw_data(), c.conv.d, cudnnConvolutionBwdDataAlgo_t(ch.algo),
                                                   ws, ch.workspace, s.zero(c.dtype), c.x.d, dx.raw_data());
             });
}

// (dy, x) -> dw of attr weight_shape.
void backward_weight(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const Tensor &dy = in[0], &x = in[1];
  Tensor& dw = out[0];
  if (dw.numel() == 0) return;
  Conv c(x.shape(), dw.shape(), dy.shape(), dw.dtype(), attrs);
  if (dy.numel() == 0 || x.numel() == 0) {
    check(cudaMemsetAsync(dw.raw_data(), 0, dw.nbytes(), dev.stream()), "conv2d_backward_weight");
    return;
  }
  const Scale s;
  run_chosen(dev, c, Pass::filter, is_pointwise(dw.shape(), attrs),
             [&] { pointwise_backward_weight(dev, dy, x, dw); }, "conv2d_backward_weight",
             [&](const Choice& ch, void* ws) {
               return cudnnConvolutionBackwardFilter(dev.cudnn(), s.one(c.dtype), c.x.d, x.raw_data(), c.y.d,
                                                     dy.raw_data(), c.conv.d,
                                                     cudnnConvolutionBwdFilterAlgo_t(ch.algo), ws, ch.workspace,
                                                     s.zero(c.dtype), c.w.d, dw.raw_data());
             });
}

}  // namespace

void register_nn_conv(Registry& r) {
  r.edit(OpId::conv2d).cuda = conv2d;
  r.edit(OpId::conv2d_backward_input).cuda = backward_input;
  r.edit(OpId::conv2d_backward_weight).cuda = backward_weight;
}

}  // namespace nn::backend::cuda

namespace nn::backend {
bool gpu_deterministic_convolutions() { return cuda::deterministic_switch().load(); }
void set_gpu_deterministic_convolutions(bool on) { cuda::deterministic_switch().store(on); }
}  // namespace nn::backend
