// ONNX element types followed through a model's nodes at load time
// (imported_model.cpp): nn's dtypes widen ONNX's narrow and unsigned
// integers, so what depends on the ONNX type (a cast's wrapping, an
// unsigned op that wraps) is decided from these.
#pragma once
#include <onnx/onnx_pb.h>

#include <span>
#include <string>

namespace nn::onnx_io {

// The ONNX element type of output `o` of `node`, given its inputs' (0 where
// unknown); 0 when it cannot tell.
int output_element_type(const onnx::NodeProto& node, int o, std::span<const int> input_types);

// Why nn does not run `node` on inputs of these types, or "": arithmetic on
// unsigned integers wraps modulo 2^bits in ONNX, and not in the wider signed
// dtype nn holds them in; a Cast to UINT64 of a negative value wraps too.
std::string unsigned_refusal(const onnx::NodeProto& node, std::span<const int> input_types);

}  // namespace nn::onnx_io
