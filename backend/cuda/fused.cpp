// The `fused` op on the GPU (ops/fused.cpp is the CPU's): the program's
// kernel source (fused_source.h) compiled by NVRTC for the GPU's compute
// capability (nvrtc_compiler.h) the first time a program with those dtypes
// runs, loaded once per GPU and program, and launched with the shapes and
// strides of this call. Graph fusion makes fused nodes on GPUs only while
// gpu_fusion() is on (the default; NN_CUDA_FUSION=0 turns it off).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/cuda/broadcast_dims.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/fused_source.h"
#include "backend/cuda/nvrtc_compiler.h"
#include "backend/cuda/register.h"
#include "backend/cuda_backend.h"
#include "backend/op_registry.h"

namespace nn::backend::cuda {
namespace {

// The kernel of program p with these operand dtypes on a GPU, loaded once:
// the source is written, compiled (nvrtc_ptx caches it by source) and
// loaded on the first call only, so a replay costs one map lookup. The cache
// holds each program, so that its address cannot name another one later;
// libraries stay loaded.
cudaKernel_t kernel_for(CudaDevice& dev, const ProgramPtr& p, const std::vector<DType>& types, size_t inputs) {
  using Key = std::tuple<int, const FusedProgram*, std::vector<DType>>;
  static std::mutex mutex;
  static std::map<Key, std::pair<ProgramPtr, cudaKernel_t>> loaded;
  std::lock_guard lock(mutex);
  Key key{dev.index(), p.get(), types};
  if (auto it = loaded.find(key); it != loaded.end()) return it->second.second;
  const std::span<const DType> all(types);
  const std::optional<std::string> source = fused_kernel_source(*p, all.first(inputs), all.subspan(inputs));
  if (!source || p->shape.ndim() > kFusedDims)
    throw Error("internal: no GPU kernel for the fused program " + program_text(*p));
  int major = 0, minor = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev.index()), "fused: compute capability");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev.index()), "fused: compute capability");
  const std::string& ptx = nvrtc_ptx(*source, major * 10 + minor);
  cudaLibrary_t library = nullptr;
  check(cudaLibraryLoadData(&library, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0), "fused: loading a kernel");
  cudaKernel_t kernel = nullptr;
  check(cudaLibraryGetKernel(&kernel, library, "nn_fused"), "fused: finding a kernel");
  loaded.emplace(std::move(key), std::make_pair(p, kernel));
  return kernel;
}

void fused_cuda(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  CudaDevice& dev = call_device(in, out);
  const ProgramPtr& program = attrs.get<ProgramPtr>("program");
  const FusedProgram& p = *program;
  std::vector<DType> types;  // the inputs', then the outputs'
  for (const Tensor& t : in) {
    if (t.device() != out[0].device()) throw Error("internal: a fused GPU kernel with an operand on " + t.device()->name());
    types.push_back(t.dtype());
  }
  for (const Tensor& t : out) types.push_back(t.dtype());
  cudaKernel_t kernel = kernel_for(dev, program, types, in.size());
  FusedArgs a;
  a.n = p.shape.numel();
  if (a.n == 0) return;
  const BroadcastDims dims = broadcast_dims(p.shape, in);
  a.nd = dims.nd;
  for (int d = 0; d < a.nd; ++d) {
    a.size[d] = dims.size[d];
    for (size_t k = 0; k < in.size(); ++k) a.stride[k][d] = dims.stride[k][size_t(d)];
  }
  a.index32 = make_dividers(a.nd, a.size, a.n, a.div);
  for (size_t k = 0; k < in.size(); ++k) a.in[k] = in[k].raw_data();
  for (size_t k = 0; k < out.size(); ++k) a.out[k] = out[k].raw_data();
  constexpr int threads = 256;
  const unsigned blocks = unsigned(std::min<int64_t>((a.n + threads - 1) / threads, 65536));
  void* args[] = {&a};
  check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(blocks), dim3(threads), args, 0, dev.stream()),
        "fused");
}

std::atomic<bool>& fusion_switch() {
  static std::atomic<bool> on = [] {
    const char* env = std::getenv("NN_CUDA_FUSION");
    return !(env && std::string(env) == "0");
  }();
  return on;
}

}  // namespace

void register_fused(Registry& r) { r.edit(OpId::fused).cuda = fused_cuda; }

}  // namespace nn::backend::cuda

namespace nn::backend {
bool gpu_fusion() { return cuda::fusion_switch().load(); }
void set_gpu_fusion(bool on) { cuda::fusion_switch().store(on); }
}  // namespace nn::backend
