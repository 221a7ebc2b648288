// Autodiff in eager mode. When grad mode is on and an op with a backward
// rule gets an input that requires grad, dispatch records a GradNode (the op,
// its inputs, its outputs without history, its attrs) and hangs it on the
// outputs. grad() walks those nodes from the loss back to the wanted tensors,
// calling each op's backward rule from the registry: the same rules build IR
// nodes when graph mode traces a backward pass.
#pragma once
#include <memory>
#include <vector>

#include "backend/op_registry.h"

namespace nn::backend {

struct GradNode {
  const OpDef* op = nullptr;
  std::vector<Tensor> inputs;   // keep their own grad_fn: the path further back
  std::vector<Tensor> outputs;  // detached views: no cycle back to this node
  Attrs attrs;
  // Per input, as it was when the op ran: the node that made it (null for
  // a leaf; a tensor's maker never changes), which the backward walk reads
  // here rather than through the tensor, whose memory is long cold by then;
  // and its block's version (Block::version). With `loc`, where the op was
  // called: grad() refuses to run the rule on an input changed in place
  // since, rather than give a wrong gradient (SPEC §17).
  struct Recorded {
    GradNode* maker;
    uint32_t version;
  };
  // Then, after the inputs', one per output: its block's version when the
  // op ran (rules such as exp's read their output); maker null.
  std::vector<Recorded> recorded;
  uint64_t writes = 0;  // writes_so_far() when the op ran
  SourceLoc loc;
  uint32_t group = 0;  // the dispatch hook's group when the op ran (DispatchHook::group)

  GradNode() = default;
  GradNode(const GradNode&) = delete;
  GradNode& operator=(const GradNode&) = delete;
  ~GradNode();  // frees the tape behind it without recursion
};

// grad() met an input of an op, or an output (which rules such as exp's
// and sigmoid's read), changed in place after the op ran. The frontend words
// it with the user's names and lines.
struct ChangedInPlace : Error {
  ChangedInPlace(std::string message, Tensor tensor, std::string op, SourceLoc saved_at, SourceLoc changed_at,
                 bool output)
      : Error(std::move(message)), tensor(std::move(tensor)), op(std::move(op)), saved_at(saved_at),
        changed_at(changed_at), output(output) {}
  Tensor tensor;
  std::string op;
  SourceLoc saved_at, changed_at;
  bool output;  // the op made it, rather than used it
};

// A leaf that requires grad, sharing t's memory.
Tensor param(const Tensor& t);
bool requires_grad(const Tensor& t);  // a param, or computed from one with grad mode on
// Same memory, no autodiff history.
Tensor detach(const Tensor& t);

// Grad mode is per thread and on by default; backward rules run with it off.
bool grad_enabled();
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool saved_;
};

// Called by dispatch after an eager op ran.
void record_op(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs, std::span<Tensor> out);

// Gradients of a one-element tensor y with respect to each tensor of wrt.
// A tensor y does not depend on gets zeros of its own shape and dtype.
// Throws Error when y has more than one element (naming its type).
std::vector<Tensor> grad(const Tensor& y, const std::vector<Tensor>& wrt);

// For backward rules: sums a gradient of a broadcast result back to the
// shape of the operand that was broadcast.
Tensor sum_to(const Tensor& g, const Shape& shape);

}  // namespace nn::backend
