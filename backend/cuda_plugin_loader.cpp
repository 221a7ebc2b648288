// backend/cuda_backend.h in a build with the CUDA backend: the backend is a
// plugin (libnn_cuda.so, backend/cuda_plugin_api.h) loaded with dlopen the
// first time a GPU is asked for, so that a CPU run maps none of the CUDA
// libraries (cudart, cuBLAS, cuDNN, NVRTC: some 250 MB of resident memory
// and 90 ms at startup). Until then the switches live here.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "backend/cuda_backend.h"
#include "backend/cuda_plugin_api.h"
#include "backend/plugin_loader.h"

namespace nn::backend {
namespace {
// Published once the plugin is loaded and its kernels may be registered.
std::atomic<const CudaPluginApi*> g_api{nullptr};
std::atomic<bool> g_kernels_registered{false};

// A switch before the plugin is loaded: the value a host set, or the
// plugin's default, which comes from the environment as the plugin reads
// it (backend/cuda/fused.cpp, nn_conv.cpp, tf32.cpp).
struct Switch {
  const char* env;
  const char* value;  // the environment value that turns the default over
  bool default_on;    // the default when the environment says nothing
  int set = -1;       // what a host set before loading: -1 nothing, 0 or 1

  bool before_loading() const {
    if (set >= 0) return set == 1;
    const char* v = std::getenv(env);
    return v && std::string(v) == value ? !default_on : default_on;
  }
};
std::mutex g_switches_mu;
Switch g_fusion{"NN_CUDA_FUSION", "0", true};
Switch g_deterministic{"NN_CUDNN_ALGOS", "fastest", true};
Switch g_tf32{"NN_CUDA_TF32", "1", false};

// Opens the plugin and checks it comes from this build; the error, or "".
std::string open_cuda_plugin(const CudaPluginApi*& api) {
  const OpenedPlugin p = open_plugin(kCudaPluginFile, "NN_CUDA_PLUGIN", kCudaPluginEntry);
  if (!p.entry) return p.error;
  using Entry = const CudaPluginApi* (*)();
  const CudaPluginApi* a = reinterpret_cast<Entry>(p.entry)();
  if (a && a->abi == kCudaPluginAbi && std::string(a->version) != NN_VERSION)
    return "its plugin " + p.path + " is from nn " + a->version + ", this is nn " NN_VERSION;
  if (!a || a->abi != kCudaPluginAbi || a->layout != cuda_plugin_layout())
    return "its plugin " + p.path + " comes from another build of nn (rebuild or reinstall it)";
  api = a;
  return "";
}

struct Loaded {
  const CudaPluginApi* api = nullptr;
  std::string error;
};

// Loads the plugin once (a function-local static: thread-safe), hands it
// the switches set so far, and registers its kernels.
const Loaded& plugin() {
  static const Loaded loaded = [] {
    Loaded l;
    l.error = open_cuda_plugin(l.api);
    if (!l.api) return l;
    {
      std::lock_guard lock(g_switches_mu);
      if (g_fusion.set >= 0) l.api->set_fusion(g_fusion.set == 1);
      if (g_deterministic.set >= 0) l.api->set_deterministic_convolutions(g_deterministic.set == 1);
      if (g_tf32.set >= 0) l.api->set_tf32(g_tf32.set == 1);
      g_api.store(l.api, std::memory_order_release);
    }
    // Builds the registry when nothing did yet (its constructor then
    // registers the kernels); otherwise registers them now.
    register_cuda_kernels(Registry::get());
    return l;
  }();
  return loaded;
}

bool get_switch(Switch& s, bool (*loaded_get)(const CudaPluginApi&)) {
  if (const CudaPluginApi* a = g_api.load(std::memory_order_acquire)) return loaded_get(*a);
  std::lock_guard lock(g_switches_mu);
  if (const CudaPluginApi* a = g_api.load(std::memory_order_acquire)) return loaded_get(*a);
  return s.before_loading();
}

void set_switch(Switch& s, bool on, void (*loaded_set)(const CudaPluginApi&, bool)) {
  std::lock_guard lock(g_switches_mu);
  if (const CudaPluginApi* a = g_api.load(std::memory_order_acquire)) loaded_set(*a, on);
  else s.set = on ? 1 : 0;
}

}  // namespace

bool cuda_built() { return true; }

int cuda_device_count() {
  const Loaded& l = plugin();
  return l.api ? l.api->device_count() : 0;
}

Device* cuda_device(int index) {
  const Loaded& l = plugin();
  return l.api ? l.api->device(index) : nullptr;
}

std::string cuda_unavailable_reason() {
  const Loaded& l = plugin();
  return l.api ? l.api->unavailable_reason() : "the CUDA backend could not be loaded: " + l.error;
}

std::string cuda_load_error() {
  const Loaded& l = plugin();
  return l.api ? std::string() : l.error;
}

void register_cuda_kernels(Registry& r) {
  const CudaPluginApi* a = g_api.load(std::memory_order_acquire);
  if (a && !g_kernels_registered.exchange(true)) a->register_kernels(r);
}

bool gpu_fusion() {
  return get_switch(g_fusion, [](const CudaPluginApi& a) { return a.fusion(); });
}
void set_gpu_fusion(bool on) {
  set_switch(g_fusion, on, [](const CudaPluginApi& a, bool v) { a.set_fusion(v); });
}
bool gpu_deterministic_convolutions() {
  return get_switch(g_deterministic, [](const CudaPluginApi& a) { return a.deterministic_convolutions(); });
}
void set_gpu_deterministic_convolutions(bool on) {
  set_switch(g_deterministic, on, [](const CudaPluginApi& a, bool v) { a.set_deterministic_convolutions(v); });
}
bool gpu_tf32() {
  return get_switch(g_tf32, [](const CudaPluginApi& a) { return a.tf32(); });
}
void set_gpu_tf32(bool on) {
  set_switch(g_tf32, on, [](const CudaPluginApi& a, bool v) { a.set_tf32(v); });
}

}  // namespace nn::backend
