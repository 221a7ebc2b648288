// Capture guards (SPEC §17): where each tensor a compiled graph captured was
// found when it was traced (a name, or a field and item path from one:
// `m.w`, `opt.m[0]`), checked on every call, so that rebinding one of those
// places to another tensor (`m.w = param(...)`) makes the graph trace again
// instead of reading and training the old tensor.
//
// The paths are kept as one tree of steps (a shared prefix such as `m.layers`
// is one step), walked in order on each call: per step a kind check, a
// bounds check and a name compare, per captured tensor one pointer compare.
// Record fields and list items are found by their position at trace time,
// with a search by name when a record's fields moved, so a record or scope
// that grew since is no problem.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "frontend/environment.h"
#include "frontend/value.h"
#include "ir/graph.h"

namespace nn::frontend {

// Where the names a graph reads live on a call: a graph function's
// arguments (by position), then the scopes from `env` outwards.
struct GuardScope {
  std::span<const std::string> arg_names;  // at build time: the parameters' names
  std::span<const Value> args;              // the arguments of this call
  Env* env = nullptr;
  const Env* stop = nullptr;  // the prelude: not walked when building
};

class CaptureGuards {
 public:
  // The guards of graph `g` (as traced): every path from the names `scope`
  // sees to a tensor `g` captured. Tensors found on no path get none.
  static CaptureGuards build(const ir::Graph& g, const GuardScope& scope);

  // Whether every guarded path still holds the tensor the graph captured.
  // The common case: a few loads and compares per step.
  bool hold(const GuardScope& scope) const { return first_broken(scope) == kNone; }
  // Why they do not: "`m.w` now holds another tensor"; "" when they hold.
  std::string why_not(const GuardScope& scope) const;

  size_t paths() const { return leaves_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Step {
    uint32_t from = kNone;  // the step this one looks into; kNone: a root
    Symbol name = 0;        // a root's name or a record's field; 0: an item
    uint32_t index = 0;     // the argument, field or item position
    bool by_name = false;   // a root found by name in the scopes (else an argument)
    backend::Tensor expect; // a leaf: the tensor the graph captured
  };
  const Value* resolve(const Step& s, const GuardScope& scope) const;
  uint32_t first_broken(const GuardScope& scope) const;
  std::string path_of(uint32_t step) const;

  std::vector<Step> steps_;  // a step comes after the step it looks into
  size_t leaves_ = 0;
  mutable std::vector<const Value*> at_;  // per step, the value it found this call
};

}  // namespace nn::frontend
