// The program of a fused elementwise node: the steps of a group of
// elementwise op calls that graph fusion merged into one node
// (ir/passes/fuse_elementwise.cpp), run by one kernel in one pass over
// memory (backend/ops/fused.cpp, and as the epilogue of a GEMM in
// backend/ops/matmul_epilogue.cpp).
//
// Every step computes over the program's shape in one compute dtype (f32 or
// f64): the node's inputs broadcast to that shape and are converted to it on
// load, bool values are 0 and 1, and a step whose result is bool is
// normalised to 0 or 1. Host numbers of the trace are immediates.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "backend/attrs.h"
#include "backend/error.h"

namespace nn::backend {

struct OpDef;

// The most inputs and outputs a fused node may have on a GPU: its kernel
// takes their pointers and strides as arguments (backend/cuda/fused.cpp).
constexpr int kGpuFusedInputs = 32, kGpuFusedOutputs = 8;

struct FusedProgram {
  // Where a step reads an operand: an input of the node, the result of an
  // earlier step, or an immediate.
  struct Arg {
    enum class Kind : uint8_t { input, step, immediate };
    Kind kind = Kind::input;
    uint32_t index = 0;
    bool operator==(const Arg&) const = default;
  };
  // A step's operands, kept inline: a fusible op takes at most three
  // (where), and a graph's fusion makes tens of thousands of steps.
  class Args {
   public:
    static constexpr size_t kMax = 3;
    Args() = default;
    Args(std::initializer_list<Arg> args) : Args(args.begin(), args.end()) {}
    Args(const std::vector<Arg>& args) : Args(args.data(), args.data() + args.size()) {}  // NOLINT: implicit
    void push_back(Arg a) {
      if (n_ == kMax) throw Error("internal: a fused step with more than 3 operands");
      a_[n_++] = a;
    }
    size_t size() const { return n_; }
    Arg& operator[](size_t i) { return a_[i]; }
    const Arg& operator[](size_t i) const { return a_[i]; }
    Arg* begin() { return a_.data(); }
    Arg* end() { return a_.data() + n_; }
    const Arg* begin() const { return a_.data(); }
    const Arg* end() const { return a_.data() + n_; }
    bool operator==(const Args& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }

   private:
    Args(const Arg* from, const Arg* to) {
      for (; from != to; ++from) push_back(*from);
    }
    std::array<Arg, kMax> a_{};
    uint8_t n_ = 0;
  };
  struct Step {
    const OpDef* op = nullptr;  // an op with tile kernels (OpDef::tile)
    Attrs attrs;
    Args args;
    DType dtype = DType::f32;  // the compute dtype, or bool
  };

  DType compute = DType::f32;
  Shape shape;
  uint32_t num_inputs = 0;
  std::vector<double> immediates;
  std::vector<Step> steps;
  std::vector<uint32_t> outputs;  // the step each output of the node holds
};

// "t0 = mul(i0, 0.9); t1 = add(t0, i1); t2 = relu(t1) -> t1, t2": the
// program as one line (IR text, and the key that tells programs apart).
std::string program_text(const FusedProgram& p);

// The program of a fused node's attributes; throws when it has none.
const FusedProgram& program_of(const Attrs& attrs);

}  // namespace nn::backend
