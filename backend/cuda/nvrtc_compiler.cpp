// NVRTC compilation with a process-wide cache (nvrtc_compiler.h).
#include "backend/cuda/nvrtc_compiler.h"

#include <nvrtc.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "backend/error.h"

namespace nn::backend::cuda {
namespace {

struct Cache {
  std::mutex mutex;
  std::map<std::pair<int, std::string>, std::string> ptx;  // (arch, source) -> PTX; nodes never move
  size_t compiled = 0;
};

Cache& cache() {
  static Cache c;
  return c;
}

std::string compile(const std::string& source, int arch) {
  nvrtcProgram prog = nullptr;
  if (nvrtcCreateProgram(&prog, source.c_str(), "nn_fused.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw Error("NVRTC could not create a program");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> owner(&prog, [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
  const std::string gpu = "--gpu-architecture=compute_" + std::to_string(arch);
  // No contraction of a * b + c into one rounding: a fused kernel rounds
  // each step as the op's own kernel does (nvcc builds those with
  // --fmad=false too, cmake/cuda.cmake).
  const std::vector<const char*> options = {gpu.c_str(), "-std=c++20", "--fmad=false"};
  const nvrtcResult r = nvrtcCompileProgram(prog, int(options.size()), options.data());
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    if (n) nvrtcGetProgramLog(prog, log.data());
    throw Error(std::string("internal: NVRTC could not compile a fused kernel (") + nvrtcGetErrorString(r) + "):\n" + log);
  }
  size_t n = 0;
  nvrtcGetPTXSize(prog, &n);
  std::string ptx(n, '\0');
  nvrtcGetPTX(prog, ptx.data());
  return ptx;
}

}  // namespace

const std::string& nvrtc_ptx(const std::string& source, int arch) {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  auto key = std::make_pair(arch, source);
  if (auto it = c.ptx.find(key); it != c.ptx.end()) return it->second;
  std::string ptx = compile(source, arch);
  ++c.compiled;
  return c.ptx.emplace(std::move(key), std::move(ptx)).first->second;
}

size_t nvrtc_compilations() {
  std::lock_guard lock(cache().mutex);
  return cache().compiled;
}

}  // namespace nn::backend::cuda
