// The one walk over the tensors inside a value, for graph mode: a tensor
// itself, the items of lists and tuples and, when asked, the fields of
// records, depth first in order, each with its path from a root name
// ("xs[1]", "opt.m[0]"). A call's signature and its traced arguments look
// into lists and tuples; a result's outputs, and the search for a tensor
// escaping a trace, into records too.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "frontend/symbol.h"
#include "frontend/value.h"

namespace nn::frontend {

// Which containers a walk opens.
enum class Reach : uint8_t {
  sequences,              // lists and tuples; a record is a leaf
  sequences_and_records,  // records' fields too
};

// Where a value sits below the root of a walk; made into text only when asked.
class ValuePath {
 public:
  explicit ValuePath(std::string_view root) : root_(root) {}
  std::string str() const;     // "xs[1]", "opt.m[0]"
  std::string dotted() const;  // "xs.1", "opt.m.0": the names of state() and checkpoints
  void push_index(size_t i) { steps_.push_back({0, i}); }
  void push_field(Symbol f) { steps_.push_back({f, 0}); }
  void pop() { steps_.pop_back(); }

  struct Step {
    Symbol field;  // 0: an item of a list or tuple
    size_t index;
  };
  // The steps below the root, outermost first (capture guards keep them).
  const std::vector<Step>& steps() const { return steps_; }

 private:
  std::string_view root_;
  std::vector<Step> steps_;
};

enum class Walk : uint8_t { go_on, stop };

// The deepest nesting of containers the walks open (as many dotted parts as
// a saved name may have): past it, or near the end of the thread's stack,
// a walk throws backend::Error.
inline constexpr size_t kMaxValueDepth = 10000;

struct TensorVisitor {
  // Each tensor; Walk::stop ends the walk.
  std::function<Walk(const backend::Tensor&, const ValuePath&)> tensor;
  // Optional: every other value, a container before its items.
  std::function<void(const Value&, const ValuePath&)> other;
};

// Walks v. `opened`, when given, holds the containers walked so far (by this
// walk or earlier ones): each is looked into once, so that shared and
// cyclic containers end. Returns Walk::stop when the visitor stopped it.
Walk for_each_tensor(const Value& v, std::string_view root, Reach reach, const TensorVisitor& visit,
                     std::unordered_set<const void*>* opened = nullptr);
// The same without paths: each tensor in order.
void for_each_tensor(const Value& v, Reach reach, const std::function<void(const backend::Tensor&)>& fn);

// v with every tensor replaced by fn's result: the containers `reach` opens
// are new ones, every other value is v's own.
Value map_tensors(const Value& v, std::string_view root, Reach reach,
                  const std::function<backend::Tensor(const backend::Tensor&, const ValuePath&)>& fn);

}  // namespace nn::frontend
