// The NumPy .npy format (load_npy, save_npy): versions 1.0 and 2.0 (3.0 is
// read too: it only differs by allowing UTF-8 in the header), little-endian,
// C order, dtypes <f4 <f8 <i4 <i8 |b1. Anything else is a FileError naming
// what the file holds.
#pragma once
#include <string>

#include "backend/tensor.h"

namespace nn::frontend::npy {

backend::Tensor read(const std::string& path);
// Writes version 1.0, or 2.0 when the header does not fit 1.0's 16-bit
// length; atomically (file_io.h AtomicFile). Throws FileError / backend::Error.
void write(const backend::Tensor& x, const std::string& path);

}  // namespace nn::frontend::npy
