// The CUDA device (cuda_device.h) and the backend's entry points
// (backend/cuda_backend.h): finding GPUs and registering the kernels.
#include "backend/cuda/cuda_device.h"

#include <memory>
#include <mutex>
#include <vector>

#include "backend/cuda/register.h"
#include "backend/cuda_backend.h"
#include "backend/error.h"

namespace nn::backend {
namespace cuda {
namespace {

thread_local int t_current = -1;

// The runtime's view of the machine, asked once.
struct Gpus {
  int count = 0;
  std::string why_none;
  std::vector<std::unique_ptr<CudaDevice>> devices;
};

Gpus& gpus() {
  // Leaked on purpose: the CUDA runtime tears itself down at exit, and
  // freeing device memory after that fails.
  static Gpus* g = [] {
    auto* r = new Gpus;
    cudaError_t e = cudaGetDeviceCount(&r->count);
    if (e != cudaSuccess) {
      r->count = 0;
      r->why_none = cudaGetErrorString(e);
      cudaGetLastError();
    } else if (r->count == 0) {
      r->why_none = "the CUDA runtime sees no device";
    }
    r->devices.resize(size_t(r->count));
    return r;
  }();
  return *g;
}

}  // namespace

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a sticky launch error so later calls see their own
  throw Error(std::string(what) + ": CUDA error: " + cudaGetErrorString(e));
}

void check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw Error(std::string(what) + ": cuBLAS error: " + cublasGetStatusString(s));
}

void check(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  throw Error(std::string(what) + ": cuDNN error: " + cudnnGetErrorString(s));
}

void check_launch(const char* op) { check(cudaGetLastError(), op); }

CudaDevice::CudaDevice(int index) : Device(DeviceType::cuda, index, "cuda:" + std::to_string(index)) {
  activate();
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating the stream of a GPU");
  size_t free_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_memory_), "reading a GPU's memory");
  // A failed cudaMalloc gives null: the pool then empties its cache, tries
  // again, and reports what was asked and what is in use (SPEC §11).
  pool_ = std::make_unique<CachingPool>(
      name(),
      [this](size_t n) -> void* {
        activate();
        void* p = nullptr;
        cudaError_t e = cudaMalloc(&p, n);
        if (e == cudaErrorMemoryAllocation) {
          cudaGetLastError();
          return nullptr;
        }
        check(e, "cudaMalloc");
        return p;
      },
      [this](void* p, size_t) {
        activate();
        cudaFree(p);  // waits for the device: no kernel still uses the block
      });
}

void CudaDevice::activate() const {
  if (t_current == index()) return;
  check(cudaSetDevice(index()), "selecting a GPU");
  t_current = index();
}

cublasHandle_t CudaDevice::cublas() {
  if (!cublas_) {
    activate();
    check(cublasCreate(&cublas_), "creating a cuBLAS handle");
    check(cublasSetStream(cublas_, stream_), "binding cuBLAS to the stream");
  }
  return cublas_;
}

cudnnHandle_t CudaDevice::cudnn() {
  if (!cudnn_) {
    activate();
    check(cudnnCreate(&cudnn_), "creating a cuDNN handle");
    check(cudnnSetStream(cudnn_, stream_), "binding cuDNN to the stream");
  }
  return cudnn_;
}

void CudaDevice::copy_to_host(void* dst, const void* src, size_t n) {
  if (!n) return;
  activate();
  check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream_), "copying from the GPU");
  check(cudaStreamSynchronize(stream_), "copying from the GPU");
}

// From pageable host memory the runtime stages the bytes before it returns,
// so the caller may free its buffer at once; the copy itself is queued.
void CudaDevice::copy_from_host(void* dst, const void* src, size_t n) {
  if (!n) return;
  activate();
  check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream_), "copying to the GPU");
}

void CudaDevice::copy(void* dst, const void* src, size_t n) {
  if (!n || dst == src) return;
  activate();
  check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream_), "copying on the GPU");
}

void CudaDevice::synchronize() {
  activate();
  check(cudaStreamSynchronize(stream_), "waiting for the GPU");
}

CudaDevice& device_of(const Tensor& t) {
  if (t.device()->type() != DeviceType::cuda) throw Error("internal: " + t.type().str() + " is not on a GPU");
  return static_cast<CudaDevice&>(*t.device());
}

CudaDevice& call_device(std::span<const Tensor> in, std::span<Tensor> out) {
  for (const Tensor& t : in)
    if (t.device()->type() == DeviceType::cuda) {
      auto& d = static_cast<CudaDevice&>(*t.device());
      d.activate();
      return d;
    }
  for (const Tensor& t : out)
    if (t.device()->type() == DeviceType::cuda) {
      auto& d = static_cast<CudaDevice&>(*t.device());
      d.activate();
      return d;
    }
  throw Error("internal: a CUDA kernel was called without a GPU tensor");
}

Tensor on_device(const Tensor& t, CudaDevice& dev) {
  if (t.device() == &dev) return t;
  if (t.device()->type() != DeviceType::cpu)
    throw Error("internal: a tensor on " + t.device()->name() + " given to a kernel on " + dev.name());
  Tensor d = Tensor::empty(t.shape(), t.dtype(), &dev);
  dev.copy_from_host(d.raw_data(), t.raw_data(), t.nbytes());
  return d;
}

Tensor scratch(CudaDevice& dev, size_t bytes) {
  Tensor t = Tensor::empty(Shape{int64_t(bytes)}, DType::boolean, &dev);
  if (bytes) t.raw_data();
  return t;
}

Tensor new_flag(CudaDevice& dev) {
  Tensor f = Tensor::empty(Shape{}, DType::i32, &dev);
  check(cudaMemsetAsync(f.raw_data(), 0, sizeof(int), dev.stream()), "clearing an error flag");
  return f;
}

int read_flag(CudaDevice& dev, const Tensor& flag) {
  int v = 0;
  dev.copy_to_host(&v, flag.raw_data(), sizeof v);
  return v;
}

}  // namespace cuda

bool cuda_built() { return true; }

int cuda_device_count() { return cuda::gpus().count; }

Device* cuda_device(int index) {
  cuda::Gpus& g = cuda::gpus();
  if (index < 0 || index >= g.count) return nullptr;
  static std::mutex mu;
  std::lock_guard lock(mu);
  auto& d = g.devices[size_t(index)];
  if (!d) d = std::make_unique<cuda::CudaDevice>(index);
  return d.get();
}

std::string cuda_unavailable_reason() {
  cuda::Gpus& g = cuda::gpus();
  return g.count ? std::string() : g.why_none;
}

void register_cuda_kernels(Registry& r) { cuda::register_all(r); }

}  // namespace nn::backend
