// Import entries of the reduction ops (import_table.h).
#include "backend/nn_ops.h"
#include "onnx/import_table.h"

namespace nn::onnx_io {

std::span<const ImportEntry> reduction_imports() { return {}; }

}  // namespace nn::onnx_io
