// Import entries of the neural ops (import_table.h).
#include "backend/nn_ops.h"
#include "onnx/import_table.h"

namespace nn::onnx_io {

std::span<const ImportEntry> neural_imports() { return {}; }

}  // namespace nn::onnx_io
