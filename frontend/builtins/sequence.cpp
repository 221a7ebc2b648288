// Built-ins for the tensor functions of sequence models (SPEC §13): masks
// (tril, triu), running sums and products, picking and scattering along an
// axis (gather, scatter_add, index_select), and splitting a tensor into a
// list of pieces (chunk, split_sizes, unbind).
#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {
// An nn list of the pieces.
Value list_of(const std::vector<backend::Tensor>& ts) {
  std::vector<Value> items;
  for (const backend::Tensor& t : ts) items.emplace_back(t);
  return Value(make_list(std::move(items)));
}
}  // namespace

void install_sequence(Interpreter& vm) {
  def(vm, "tril", "x, k=0", [](Args& a) { return Value(backend::tril(a.tensor(0), a.integer(1))); });
  def(vm, "triu", "x, k=0", [](Args& a) { return Value(backend::triu(a.tensor(0), a.integer(1))); });
  def(vm, "cumsum", "x, axis", [](Args& a) { return Value(backend::cumsum(a.tensor(0), a.integer(1))); });
  def(vm, "cumprod", "x, axis", [](Args& a) { return Value(backend::cumprod(a.tensor(0), a.integer(1))); });
  def(vm, "gather", "x, ids, axis", [](Args& a) {
    return Value(backend::gather(a.tensor(0), a.tensor(1), a.integer(2)));
  });
  def(vm, "scatter_add", "x, ids, v, axis", [](Args& a) {
    return Value(backend::scatter_add(a.tensor(0), a.tensor(1), a.tensor(2), a.integer(3)));
  });
  def(vm, "index_select", "x, ids, axis", [](Args& a) {
    return Value(backend::index_select(a.tensor(0), a.tensor(1), a.integer(2)));
  });
  def(vm, "chunk", "x, n, axis=0", [](Args& a) {
    return list_of(backend::chunk(a.tensor(0), a.integer(1), a.integer(2)));
  });
  def(vm, "split_sizes", "x, sizes, axis=0", [](Args& a) {
    return list_of(backend::split_sizes(a.tensor(0), a.int_list(1), a.integer(2)));
  });
  def(vm, "unbind", "x, axis=0", [](Args& a) { return list_of(backend::unbind(a.tensor(0), a.integer(1))); });
}

}  // namespace nn::frontend::builtins
