// Interpreter::user_name and describe_tensor: the name a script gives a
// tensor, found by walking the main module's globals (records, lists and
// tuples included) for a tensor over the same memory. Used only to word
// diagnostics, so the walk's cost falls on errors alone.
#include <unordered_set>

#include "frontend/interpreter.h"
#include "frontend/tensor_walk.h"

namespace nn::frontend {

std::string Interpreter::user_name(const backend::Tensor& t) const {
  if (!t.defined()) return "";
  std::string found;
  std::unordered_set<const void*> opened;
  TensorVisitor visit{[&](const backend::Tensor& x, const ValuePath& path) {
                        if (x.block() != t.block() || x.offset() != t.offset() || x.shape() != t.shape())
                          return Walk::go_on;
                        found = path.str();
                        return Walk::stop;
                      },
                      nullptr};
  const Env& g = *globals_;
  for (size_t i = 0; i < g.names.size() && found.empty(); ++i)
    if (!g.values[i].is_function())
      for_each_tensor(g.values[i], symbol_name(g.names[i]), Reach::sequences_and_records, visit, &opened);
  return found;
}

std::string Interpreter::describe_tensor(const backend::Tensor& t) const {
  std::string name = user_name(t);
  return name.empty() ? "a " + t.type().str() + " tensor" : "`" + name + "` (" + t.type().str() + ")";
}

}  // namespace nn::frontend
