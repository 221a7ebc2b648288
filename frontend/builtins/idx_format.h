// The IDX format of the MNIST files (load_idx): a magic of two zero bytes, a
// type code and a dimension count, the dimensions as big-endian u32, then
// big-endian data. Type codes: 0x08 ubyte, 0x09 sbyte, 0x0B short, 0x0C int,
// 0x0D float, 0x0E double.
#pragma once
#include <optional>
#include <string>

#include "backend/tensor.h"

namespace nn::frontend::idx {

// The integer types become i64 and float/double f32/f64 (lossless), unless
// `dtype` asks for another: then each element is converted while it is read
// (MNIST's 47 MB of ubyte pixels as f32 never pass through i64).
backend::Tensor read(const std::string& path, std::optional<backend::DType> dtype = std::nullopt);

}  // namespace nn::frontend::idx
