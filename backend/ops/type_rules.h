// Shared pieces of type rules: broadcasting N operands, SPEC §3 promotion
// with weak (host number) operands, and the error messages SPEC §11 asks for
// (the op, every operand's full type, the dimension that differs). Elementwise
// ops, reductions, matmul and the rest build their type rules from these so
// that every op words the same mistake the same way.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "backend/error.h"
#include "backend/tensor.h"

namespace nn::backend {

// The operands as a message shows them: "f32[2, 3] with f32[4]" for two,
// "bool[2], f32[3] and f32[2]" for more, "f32[2]" for one.
std::string describe_operands(std::span<const TensorType> in);

// NumPy broadcasting of every operand's shape. On a mismatch throws
//   "<op>: cannot broadcast f32[2, 3] with f32[4] (dimension -1: 3 != 4)"
// where the dimension counts from the end, as broadcasting aligns shapes.
Shape broadcast_shape(std::string_view op, std::span<const TensorType> in);

// SPEC §3 promotion of any number of operands, PyTorch's (result_type):
// three tiers, tensors with dims, 0-d tensors and host numbers (weak), each
// promoted within itself by PyTorch's table; a lower tier counts only where
// it raises the category (bool < integer < floating) of the tiers above, a
// host number then with its category's default dtype: i32 [2] + tensor(1)
// is i32, f16 [2] * tensor(0.5) f16, i32 [2] + tensor(0.5, f64) f64 and
// i32 [2] + 0.5 f32. Doing this pairwise left to right would be wrong:
// bool-tensor, weak int, i32-tensor must give i32, not i64. The result is
// weak only when every operand is.
struct Promoted {
  DType dtype = DType::f32;
  bool weak = false;
};
Promoted promote_types(std::span<const TensorType> in);

// The device the operands live on (dispatch has checked they agree); the CPU
// device when there are none.
Device* operands_device(std::span<const TensorType> in);

// The result type of an elementwise op that computes in the promoted dtype:
// broadcast shape, promoted dtype, the operands' device.
TensorType elementwise_type(std::string_view op, std::span<const TensorType> in);

// SPEC §3: float functions of integer or bool tensors give f32; float dtypes
// stay as they are.
constexpr DType float_result(DType t) { return is_floating(t) ? t : DType::f32; }

// Throws "<op>: <what> (got f32[2], i64[3])": a dtype the op does not take.
[[noreturn]] void throw_dtype_error(std::string_view op, std::string_view what, std::span<const TensorType> in);

}  // namespace nn::backend
