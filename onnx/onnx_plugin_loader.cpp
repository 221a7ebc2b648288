// onnx/onnx_io.h in a build with ONNX: the import and export live in the
// plugin libnn_onnx.so (onnx/onnx_plugin_api.h), loaded with dlopen the
// first time a model is read or written or a list of ops is asked for.
#include <string>

#include "backend/error.h"
#include "backend/plugin_loader.h"
#include "onnx/onnx_plugin_api.h"

namespace nn::onnx_io {
namespace {

// Loads the plugin once (a function-local static: thread-safe) and checks
// it comes from this build; every call then goes through its table.
const OnnxPluginApi& plugin() {
  static const OnnxPluginApi* api = [] {
    const backend::OpenedPlugin p = backend::open_plugin(kOnnxPluginFile, "NN_ONNX_PLUGIN", kOnnxPluginEntry);
    std::string error = p.error;
    const OnnxPluginApi* a = nullptr;
    if (p.entry) {
      a = reinterpret_cast<const OnnxPluginApi* (*)()>(p.entry)();
      if (!a || a->abi != kOnnxPluginAbi || std::string(a->version) != NN_VERSION ||
          a->layout != onnx_plugin_layout()) {
        error = "its plugin " + p.path + " comes from another build of nn (rebuild or reinstall it)";
        a = nullptr;
      }
    }
    if (!a) throw backend::Error("ONNX support could not be loaded: " + error);
    return a;
  }();
  return *api;
}

}  // namespace

bool built() { return true; }
std::shared_ptr<const ImportedModel> load(const std::string& path) { return plugin().load(path); }
const ModelSignature& signature(const ImportedModel& m) { return plugin().signature(m); }
std::vector<backend::Tensor> run(const ImportedModel& m, std::span<const backend::Tensor> initializers,
                                 std::span<const backend::Tensor> inputs) {
  return plugin().run(m, initializers, inputs);
}
std::string describe(const std::string& path) { return plugin().describe(path); }
std::vector<std::string> importable_ops() { return plugin().importable_ops(); }
void save(const ir::Graph& g, const ExportOptions& options, const std::string& path) {
  plugin().save(g, options, path);
}
std::vector<std::string> exportable_ops() { return plugin().exportable_ops(); }

}  // namespace nn::onnx_io
