// Automatic mixed precision (SPEC §15): while autocast is on, dispatch casts
// an op's floating operands by the op's rule before the type rule sees them,
// as PyTorch's autocast does. The casts are ordinary `cast` calls, so the
// tape differentiates through them (a param's gradient comes back in f32)
// and a trace records them as IR nodes (one per param and step once CSE has
// merged them).
#pragma once
#include <span>
#include <vector>

#include "backend/dtype.h"
#include "backend/op_id.h"
#include "backend/tensor.h"

namespace nn::backend {

enum class AutocastRule : uint8_t {
  keep,     // runs in the dtypes it is given (data movement, activations)
  lower,    // f32 operands become the autocast dtype (matmul, conv2d)
  f32,      // f16/bf16 operands become f32 (softmax, losses, reductions, exp, log)
  promote,  // mixed operands become the widest float among them (add, where)
};
AutocastRule autocast_rule(OpId id);

// The autocast dtype in effect on this thread (f16 or bf16); f32 when off.
DType autocast_dtype();
bool autocast_on();
void set_autocast_dtype(DType dtype);  // f16 or bf16; anything else turns it off
// Turns autocast on (bf16, f16) or off (f32) until destroyed, then restores
// what was in effect, however the scope ends.
class AutocastScope {
 public:
  explicit AutocastScope(DType dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  DType saved_;
};

// The operands `op` takes under autocast, in `cast`; false when its rule
// leaves `in` as it is (then `cast` is untouched).
bool autocast_operands(OpId op, std::span<const Tensor> in, std::vector<Tensor>& cast);

// t as f32 when autocast is on and t is f16 or bf16, else t itself. The
// composites that SPEC §15 computes in f32 (norm, the elementwise losses)
// cast their operands with it before their first op, as dispatch casts the
// operands of the ops on the f32 list: squaring first in 16 bits and
// summing in f32 after would overflow f16 at 256.
Tensor autocast_f32(const Tensor& t);

}  // namespace nn::backend
