// ONNX TensorProto <-> nn tensors. nn's dtypes are f32 f64 i32 i64 bool f16
// bf16; ONNX's narrower integers (u8 i8 u16 i16) read as i32 and u32/u64 as
// i64, so values are kept though the type widens. Strings, complex numbers
// and external data are refused with the reason.
#pragma once
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "backend/tensor.h"

namespace nn::onnx_io {

// nn's dtype for an ONNX element type (TensorProto::DataType), or nullopt.
std::optional<backend::DType> dtype_of(int onnx_type);
// ONNX's element type for an nn dtype.
int onnx_type_of(backend::DType t);
// "FLOAT", "UINT8": an ONNX element type's name, for messages.
std::string onnx_type_name(int onnx_type);

// A CPU tensor with the proto's values; throws Error saying why not
// (`what` names it in the message: "initializer `w`").
backend::Tensor to_tensor(const onnx::TensorProto& p, const std::string& what);
// A proto of a real (not traced) tensor's values, on any device.
onnx::TensorProto to_proto(const backend::Tensor& t, const std::string& name);

}  // namespace nn::onnx_io
