// The table through which the ONNX plugin (libnn_onnx.so: onnx/'s import
// and export, linked with libonnx and protobuf, entered in
// onnx/onnx_plugin_entry.cpp) serves its loader (onnx/onnx_plugin_loader.cpp,
// which implements onnx_io.h for the rest of nn). protobuf and ONNX's
// libraries take some 10 ms to load, so a run that reads or writes no model
// never maps them. Both halves come from one build.
#pragma once
#include <cstddef>

#include "onnx/onnx_io.h"

namespace nn::onnx_io {

// Raised whenever the table or the types it passes change.
inline constexpr int kOnnxPluginAbi = 1;

// A fingerprint of the types both halves share.
inline constexpr size_t onnx_plugin_layout() {
  return sizeof(backend::Tensor) * 1000003 + sizeof(ir::Graph) * 10007 + sizeof(ir::Node) * 101 +
         sizeof(ModelSignature) + sizeof(ExportOptions);
}

struct OnnxPluginApi {
  int abi;              // kOnnxPluginAbi of the plugin's build
  const char* version;  // NN_VERSION of the plugin's build
  size_t layout;        // onnx_plugin_layout() of the plugin's build
  std::shared_ptr<const ImportedModel> (*load)(const std::string& path);
  const ModelSignature& (*signature)(const ImportedModel& m);
  std::vector<backend::Tensor> (*run)(const ImportedModel& m, std::span<const backend::Tensor> initializers,
                                      std::span<const backend::Tensor> inputs);
  std::string (*describe)(const std::string& path);
  std::vector<std::string> (*importable_ops)();
  void (*save)(const ir::Graph& g, const ExportOptions& options, const std::string& path);
  std::vector<std::string> (*exportable_ops)();
};

// The symbol the loader looks up: extern "C" const OnnxPluginApi* nn_onnx_plugin();
inline constexpr const char* kOnnxPluginEntry = "nn_onnx_plugin";
// The plugin's file name.
inline constexpr const char* kOnnxPluginFile = "libnn_onnx.so";

}  // namespace nn::onnx_io
