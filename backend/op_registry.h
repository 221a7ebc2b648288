// The op registry: each op is declared once with its type rule (the single
// source of shape and dtype errors), its kernels per device, and the traits
// passes read. Backward rules join the entry with autodiff.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backend/attrs.h"
#include "backend/device.h"
#include "backend/tensor.h"

namespace nn::backend {

using OutTypes = std::vector<TensorType>;
// Computes output types from input types; throws Error with a message naming
// the op, every operand's full type and the dimension that differs.
using TypeRule = OutTypes (*)(std::span<const TensorType> in, const Attrs& attrs);
// Reads inputs, writes outputs already typed by the type rule.
using Kernel = void (*)(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs);

// What a backward rule sees of one op call.
struct BackwardArgs {
  std::span<const Tensor> inputs;   // as the op received them
  std::span<const Tensor> outputs;  // as the op produced them (no autodiff history)
  const Attrs& attrs;
  std::span<const Tensor> grads;    // gradient of the loss w.r.t. each output, same types
  // Bit i set: input i leads to a wanted gradient. Costly rules (matmul,
  // conv) skip the products for inputs that need none, such as a batch of data.
  uint64_t needs = ~uint64_t(0);
  bool needs_grad(size_t i) const { return i >= 64 || (needs >> i & 1); }
};
// Returns the gradient of each input (same shape and dtype as that input),
// or an undefined Tensor where an input gets none (integer ids, masks).
// Written with the ops.h functions, so it computes now in eager mode and
// records IR nodes when graph mode traces it.
using BackwardRule = std::vector<Tensor> (*)(const BackwardArgs& args);

// One step of a fused elementwise kernel (graph fusion, backend/ops/fused.cpp):
// the op over n contiguous elements already converted to the compute type T
// (f32 or f64; bool operands and results are 0 and 1 in T). `in` holds one
// pointer per input of the op.
template <class T>
using TileKernel = void (*)(const T* const* in, T* out, int64_t n, const Attrs& attrs);
struct TileKernels {
  TileKernel<float> f32 = nullptr;
  TileKernel<double> f64 = nullptr;
  bool any() const { return f32 || f64; }
};

enum class Effect : uint8_t {
  pure,      // same inputs, same outputs; may be merged or removed
  random,    // draws from the generator: never merged, fresh on every replay
  stateful,  // writes into its first input (in-place assignment)
};

struct OpDef {
  std::string name;
  int num_inputs = 1;  // -1: any number (concat)
  TypeRule type_rule = nullptr;
  Kernel cpu = nullptr;
  Kernel cuda = nullptr;
  BackwardRule backward = nullptr;  // null: not differentiable
  // Traits.
  // Elementwise: the output's shape is the broadcast of the inputs', and the
  // kernel reads element i of every input before it writes element i of an
  // output, so any output may overwrite an input of its own dtype and shape.
  bool elementwise = false;
  TileKernels tile = {};      // set: graph fusion may merge the op into a fused kernel
  bool view = false;          // output shares input 0's block (reshape)
  int inplace_input = -1;     // input the output may overwrite when it dies here
  // Inputs from this index on are read at element i before any output is
  // written at i: any output may overwrite one of them of its own dtype and
  // shape, as with an elementwise op (matmul_epilogue's program operands).
  int overwritable_from = -1;
  bool commutative = false;
  Effect effect = Effect::pure;
};

class Registry {
 public:
  static Registry& get();
  const OpDef& add(OpDef def);
  const OpDef* find(std::string_view name) const;
  const OpDef& op(std::string_view name) const;  // throws Error when unknown
  // The entry itself, for a device backend adding its kernel while the
  // registry is built (backend/cuda_backend.h); throws Error when unknown.
  OpDef& edit(std::string_view name);
  std::vector<const OpDef*> all() const;

 private:
  Registry();
  std::unordered_map<std::string, std::unique_ptr<OpDef>> ops_;
};

// Shortcut for Registry::get().op(name).
inline const OpDef& op(std::string_view name) { return Registry::get().op(name); }

}  // namespace nn::backend
