// A build without ONNX (NN_ONNX=OFF, or libonnx-dev absent): each call says so.
#include "backend/error.h"
#include "onnx/onnx_io.h"

namespace nn::onnx_io {
namespace {
[[noreturn]] void absent() {
  throw backend::Error("this build of nn has no ONNX support (build it with libonnx-dev and libprotobuf-dev)");
}
}  // namespace

class ImportedModel {};
bool built() { return false; }
std::shared_ptr<const ImportedModel> load(const std::string&) { absent(); }
const ModelSignature& signature(const ImportedModel&) { absent(); }
std::vector<backend::Tensor> run(const ImportedModel&, std::span<const backend::Tensor>,
                                 std::span<const backend::Tensor>) {
  absent();
}
std::string describe(const std::string&) { absent(); }
std::vector<std::string> importable_ops() { return {}; }
void save(const ir::Graph&, const ExportOptions&, const std::string&) { absent(); }
std::vector<std::string> exportable_ops() { return {}; }

}  // namespace nn::onnx_io
