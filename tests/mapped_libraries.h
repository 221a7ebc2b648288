// Which shared libraries this process has mapped (from /proc/self/maps):
// the tests that a CPU run maps no CUDA library and that asking for a GPU
// loads the CUDA plugin (backend/cuda_plugin_loader.cpp), and that reading
// or writing a model loads the ONNX plugin (onnx/onnx_plugin_loader.cpp).
#pragma once
#include <fstream>
#include <set>
#include <string>

namespace nntest {

// The file names of the mapped libraries whose name contains one of the
// given parts.
inline std::set<std::string> mapped_libraries(std::initializer_list<const char*> parts) {
  std::set<std::string> found;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string file = line.substr(slash + 1);
    for (const char* p : parts)
      if (file.find(p) != std::string::npos) found.insert(file);
  }
  return found;
}

// The CUDA libraries nn may load: the runtime, cuBLAS (and cuBLASLt),
// cuDNN, NVRTC, the driver, and nn's own plugin.
inline std::set<std::string> mapped_cuda_libraries() {
  return mapped_libraries({"libcud", "libcublas", "libnvrtc", "libnn_cuda"});
}

}  // namespace nntest
