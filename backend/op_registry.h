// The op registry: one OpDef per op, indexed by its OpId (backend/op_id.h):
// its type rule (the single source of shape and dtype errors), kernels per
// device, backward rule, attributes with their defaults, and the traits
// passes read. The op families fill it (backend/ops/register.h); the
// elementwise ones make their entries from their tables
// (ops/elementwise_ops.h).
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backend/attrs.h"
#include "backend/device.h"
#include "backend/op_id.h"
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
  // Talks to the other ranks (SPEC §14): every rank must run the same ones
  // in the same order, so it is never merged, folded or removed and keeps
  // its trace order with the other ordered effects.
  collective,
  // Completes a collective an earlier node started (all_reduce_wait): never
  // merged or removed, but free to run as late as its readers allow.
  completion,
};

// An attribute an op reads, with the value a call that omits it means.
struct AttrSpec {
  const char* name;
  AttrValue fallback;
};

struct OpDef {
  // The op's id; `unlisted` for an op registered outside the families (a
  // test's, a host's), found by its name alone.
  OpId id = OpId::unlisted;
  std::string name = {};  // nn's name: op_name(id) for the listed ops
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
  // The outputs share input 0's block, each right after the one before
  // (reshape: its one output over the whole input); no kernel runs, unless
  // `waits`: a view whose kernel runs too, waiting for the collective that
  // fills the input before its pieces are read (all_reduce_wait).
  bool view = false;
  bool waits = false;
  int inplace_input = -1;     // input the output may overwrite when it dies here
  // Inputs from this index on are read at element i before any output is
  // written at i: any output may overwrite one of them of its own dtype and
  // shape, as with an elementwise op (matmul_epilogue's program operands).
  int overwritable_from = -1;
  bool commutative = false;
  Effect effect = Effect::pure;
  // The attributes an elementwise op's functor reads (ops/elementwise_ops.h).
  std::vector<AttrSpec> attrs = {};
};

class Registry {
 public:
  static Registry& get();
  // Names a listed op after its id; throws Error when an op comes twice.
  const OpDef& add(OpDef def);
  const OpDef& op(OpId id) const {
    const OpDef* d = ops_[static_cast<size_t>(id)].get();
    if (!d) missing_entry(id);
    return *d;
  }
  // An op by its nn name (a user's, a test's); null when there is none.
  const OpDef* find(std::string_view name) const;
  const OpDef& op(std::string_view name) const;  // throws Error when unknown
  // The entry itself, for a device backend adding its kernel while the
  // registry is built (backend/cuda_backend.h).
  OpDef& edit(OpId id);
  std::vector<const OpDef*> all() const;  // listed ops in OpId order, then the others
  // Listed ids without an entry: none once the families have registered.
  std::vector<OpId> missing() const;

 private:
  Registry();
  [[noreturn]] static void missing_entry(OpId id);
  std::array<std::unique_ptr<OpDef>, kOpCount> ops_;
  std::vector<std::unique_ptr<OpDef>> unlisted_;
  std::unordered_map<std::string, const OpDef*> by_name_;
};

inline const OpDef& op(OpId id) { return Registry::get().op(id); }
// Shortcut for Registry::get().op(name).
inline const OpDef& op(std::string_view name) { return Registry::get().op(name); }

}  // namespace nn::backend
