// The safetensors format (save, load): an 8-byte little-endian header
// length, a JSON header {"name": {"dtype", "shape", "data_offsets"}, ...,
// "__metadata__": {string: string}}, then the tensors' bytes, little-endian,
// C order. nn reads and writes the dtypes F32 F64 I32 I64 BOOL F16 BF16.
// Format: https://github.com/huggingface/safetensors
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "backend/tensor.h"

namespace nn::frontend::safetensors {

struct Contents {
  std::vector<std::pair<std::string, backend::Tensor>> tensors;  // in the header's order
  std::vector<std::pair<std::string, std::string>> metadata;
};

// Throws FileError naming what is wrong: truncated, header too long, bad
// JSON, unknown dtype, shape/offsets mismatch, offsets outside the data.
Contents read(const std::string& path);
// Writes atomically (file_io.h AtomicFile). The header lists the tensors in
// the given order and is padded so the data starts 8-byte aligned; the data
// goes widest dtype first, so each tensor is aligned to its element size.
void write(const Contents& c, const std::string& path);

}  // namespace nn::frontend::safetensors
