// The CPU device: 64-byte aligned host memory behind a caching pool whose
// default limit is the machine's physical memory.
#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "backend/comm/communicator.h"
#include "backend/cuda_backend.h"
#include "backend/device.h"

namespace nn::backend {
namespace {

class CpuDevice final : public Device {
 public:
  CpuDevice() : Device(DeviceType::cpu, 0, "cpu") {
    pool_ = std::make_unique<CachingPool>(
        "cpu", [](size_t n) { return std::aligned_alloc(64, (n + 63) / 64 * 64); },
        [](void* p, size_t) { std::free(p); });
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) pool_->set_limit(size_t(pages) * size_t(page));
  }
  void copy_to_host(void* dst, const void* src, size_t n) override { std::memcpy(dst, src, n); }
  void copy_from_host(void* dst, const void* src, size_t n) override { std::memcpy(dst, src, n); }
  void copy(void* dst, const void* src, size_t n) override { std::memcpy(dst, src, n); }
};

// The kernel thread count asked for on this thread (OpenMP's is per thread too).
thread_local int t_threads = 0;

}  // namespace

Device* cpu_device() {
  static CpuDevice dev;
  return &dev;
}

namespace {
std::atomic<Device*> g_default{nullptr};
thread_local Device* t_default = nullptr;

// "cuda" is this rank's GPU: cuda:local_rank in a run of several ranks
// (each rank on a GPU of its own, as NCCL needs; modulo the GPUs there
// are), else cuda:0. "cuda:N" names GPU N; -1 for anything else.
int cuda_index(const std::string& name) {
  if (name == "cuda") {
    const comm::World w = comm::launch_world();
    if (w.size == 1 || w.local_rank == 0) return 0;
    const int count = cuda_device_count();
    return count > 0 ? w.local_rank % count : 0;
  }
  if (name.rfind("cuda:", 0) != 0 || name.size() == 5 || name.size() > 9) return -1;
  int n = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}
}  // namespace

Device* find_device(const std::string& name) {
  if (name == "cpu") return cpu_device();
  const int index = cuda_index(name);
  return index >= 0 ? cuda_device(index) : nullptr;
}

std::string device_unavailable_reason(const std::string& name) {
  if (name == "cpu") return "";
  if (cuda_index(name) < 0) return "a device is cpu, cuda or cuda:N";
  if (!cuda_built()) return "this build of nn has no CUDA backend (configure it with -DNN_CUDA=ON)";
  if (std::string why = cuda_load_error(); !why.empty()) return "the CUDA backend could not be loaded: " + why;
  const int count = cuda_device_count();
  if (count == 0) return "no CUDA GPU was found (" + cuda_unavailable_reason() + ")";
  return "this machine has " + std::to_string(count) + " CUDA GPU" + (count == 1 ? "" : "s") + " (cuda:0" +
         (count > 1 ? "..cuda:" + std::to_string(count - 1) : std::string()) + ")";
}

Device* default_device() {
  if (t_default) return t_default;
  Device* d = g_default.load(std::memory_order_relaxed);
  return d ? d : cpu_device();
}

void set_default_device(Device* d) { g_default.store(d, std::memory_order_relaxed); }

DeviceScope::DeviceScope(Device* d) : saved_(t_default) { t_default = d; }
DeviceScope::~DeviceScope() { t_default = saved_; }

// One pool of threads: OpenMP's. OpenBLAS stays single-threaded (blas.cpp)
// and kernels split their gemms over the OpenMP team, because two pools
// spinning on the same cores slow each other down (a training step flipped
// between 11 and 19 ms with both active).
void set_num_threads(int n) {
  if (n < 1) n = 1;
  t_threads = n;
  omp_set_num_threads(n);
}

int num_threads() { return t_threads ? t_threads : omp_get_max_threads(); }

}  // namespace nn::backend
