// Interpreter::user_name and describe_tensor: the name a script gives a
// tensor, found by walking the main module's globals (records, lists and
// tuples included) for a tensor over the same memory. Used to word
// diagnostics and to name the params of graph pictures, so the walk's cost
// falls on errors and pictures alone.
#include <map>
#include <tuple>
#include <unordered_set>

#include "frontend/interpreter.h"
#include "frontend/tensor_walk.h"

namespace nn::frontend {

std::string Interpreter::user_name(const backend::Tensor& t) const { return user_names({t})[0]; }

std::vector<std::string> Interpreter::user_names(const std::vector<backend::Tensor>& ts) const {
  std::vector<std::string> names(ts.size());
  using Key = std::tuple<const void*, size_t, std::vector<int64_t>>;
  std::map<Key, std::vector<size_t>> wanted;  // memory -> the tensors over it
  auto key = [](const backend::Tensor& t) {
    return Key{t.block().get(), t.offset(), std::vector<int64_t>(t.shape().dims().begin(), t.shape().dims().end())};
  };
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i].defined()) wanted[key(ts[i])].push_back(i);
  size_t left = wanted.size();
  std::unordered_set<const void*> opened;
  TensorVisitor visit{[&](const backend::Tensor& x, const ValuePath& path) {
                        auto it = wanted.find(key(x));
                        if (it != wanted.end() && names[it->second[0]].empty()) {
                          for (size_t i : it->second) names[i] = path.str();
                          --left;
                        }
                        return left == 0 ? Walk::stop : Walk::go_on;
                      },
                      nullptr};
  const Env& g = *globals_;
  for (size_t i = 0; i < g.names.size() && left > 0; ++i)
    if (!g.values[i].is_function())
      for_each_tensor(g.values[i], symbol_name(g.names[i]), Reach::sequences_and_records, visit, &opened);
  return names;
}

std::string Interpreter::describe_tensor(const backend::Tensor& t) const {
  std::string name = user_name(t);
  return name.empty() ? "a " + t.type().str() + " tensor" : "`" + name + "` (" + t.type().str() + ")";
}

}  // namespace nn::frontend
