// The CPU device: 64-byte aligned host memory behind a caching pool whose
// default limit is the machine's physical memory.
#include <omp.h>
#include <unistd.h>

#include <cblas.h>
#include <cstdlib>
#include <cstring>

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

int g_threads = 0;

}  // namespace

Device* cpu_device() {
  static CpuDevice dev;
  return &dev;
}

Device* find_device(const std::string& name) {
  if (name == "cpu") return cpu_device();
  return nullptr;
}

// One pool of threads: OpenMP's. OpenBLAS stays single-threaded and kernels
// split their gemms over the OpenMP team, because two pools spinning on the
// same cores slow each other down (a training step flipped between 11 and
// 19 ms with both active).
void set_num_threads(int n) {
  if (n < 1) n = 1;
  g_threads = n;
  omp_set_num_threads(n);
  openblas_set_num_threads(1);
}

int num_threads() { return g_threads ? g_threads : omp_get_max_threads(); }

}  // namespace nn::backend
