// save (onnx_io.h): the traced forward graph as an ONNX model.
#include "backend/error.h"
#include "onnx/onnx_io.h"

namespace nn::onnx_io {

void save(const ir::Graph&, const ExportOptions&, const std::string&) {
  throw backend::Error("save_onnx is not written yet");
}
std::vector<std::string> exportable_ops() { return {}; }

}  // namespace nn::onnx_io
