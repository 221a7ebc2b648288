// The ONNX plugin's entry (onnx/onnx_plugin_api.h): the table of its
// implementations of onnx_io.h, which stay local to the plugin
// (cmake/onnx_plugin.map), so that these addresses are its own and never
// the loader's functions of the same names.
#include "onnx/onnx_plugin_api.h"

namespace nn::onnx_io {
namespace {
const OnnxPluginApi kApi{
    kOnnxPluginAbi, NN_VERSION, onnx_plugin_layout(), &load, &signature, &run, &describe, &importable_ops,
    &save,          &exportable_ops,
};
}  // namespace
}  // namespace nn::onnx_io

extern "C" const nn::onnx_io::OnnxPluginApi* nn_onnx_plugin() { return &nn::onnx_io::kApi; }
