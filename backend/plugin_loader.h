// Plugins: parts of nn built as shared libraries and loaded with dlopen the
// first time they are used, so that a run that does not use one maps none
// of the libraries it links: the CUDA backend (libnn_cuda.so,
// backend/cuda_plugin_loader.cpp) and ONNX (libnn_onnx.so,
// onnx/onnx_plugin_loader.cpp). A plugin takes the backend's symbols (and
// the IR's) from the binary that loads it, so there is one copy of every
// piece of state; it comes from the same build, which its loader checks.
#pragma once
#include <string>

namespace nn::backend {

struct OpenedPlugin {
  void* entry = nullptr;  // the address of the entry symbol; null: `error` says why
  std::string path;       // the file opened
  std::string error;
};

// Opens the plugin `file` and finds its symbol `entry`. It looks, in order: in $`env` (a file);
// beside the binary holding this code (build/nn, or an installed
// lib/libnn_embed.so); in the lib folder of the prefix an installed bin/nn
// sits in; in the build tree this was built in (the uninstalled test and
// bench programs).
OpenedPlugin open_plugin(const char* file, const char* env, const char* entry);

}  // namespace nn::backend
