// Capture guards (SPEC §17): where each tensor a compiled graph captured was
// found when it was traced (a name, or a field and item path from one:
// `m.w`, `opt.m[0]`), checked on every call, so that rebinding one of those
// places to another tensor (`m.w = param(...)`) makes the graph trace again
// instead of reading and training the old tensor.
//
// The paths are kept as one tree of steps (a shared prefix such as `m.layers`
// is one step), walked in order on each call; the tensors a container holds
// are checked together, each a position and name compare and one pointer
// compare. A container that several paths reach (a list both `layers` and
// `m.layers` name) is looked into under the first only; the others check
// that they still hold that container. Record fields and list items are
// found by their position at trace time, with a search by name when a
// record's fields moved, so a record or scope that grew since is no problem.
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
  bool hold(const GuardScope& scope) const { return first_broken(scope).step == kNone; }
  // Why they do not: "`m.w` now holds another tensor"; "" when they hold.
  std::string why_not(const GuardScope& scope) const;

  size_t paths() const { return held_.size(); }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  enum class From : uint8_t { argument, name, field, item };
  // A captured tensor that a step's container holds.
  struct Leaf {
    Symbol field;  // a record's field; 0: a list or tuple item
    uint32_t index;
    const backend::TensorImpl* expect;
  };
  struct Step {
    From from_kind;
    uint32_t from = kNone;  // the step this one looks into (field, item)
    Symbol name = 0;        // a root's name or a record's field
    uint32_t index = 0;     // the argument, field or item position
    const void* same_as = nullptr;            // an alias: the container it must still hold
    const backend::TensorImpl* expect = nullptr;  // a root that is itself a captured tensor
    uint32_t leaves_begin = 0, leaves_end = 0;    // its leaves in leaves_
  };
  struct Broken {
    uint32_t step = kNone, leaf = kNone;  // leaf kNone: the step itself
  };
  const Value* resolve(const Step& s, const GuardScope& scope) const;
  const Value* leaf_value(const Value& container, const Leaf& l) const;
  Broken first_broken(const GuardScope& scope) const;
  std::string path_of(uint32_t step) const;

  std::vector<Step> steps_;  // a step comes after the step it looks into
  std::vector<Leaf> leaves_;
  std::vector<backend::Tensor> held_;  // the expected tensors, kept alive so no other takes their address
  mutable std::vector<const Value*> at_;  // per step, the value it found this call
};

}  // namespace nn::frontend
