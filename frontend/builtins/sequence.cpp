// Built-ins for the tensor functions of sequence models (SPEC §13): masks
// (tril, triu), running sums and products, picking and scattering along an
// axis (gather, scatter_add, index_select), splitting a tensor into a list
// of pieces (chunk, split_sizes, unbind), sorting (sort, argsort, topk) and
// padding (pad), sampling (multinomial; categorical is in the prelude).
#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {
Value pair_of(const std::pair<backend::Tensor, backend::Tensor>& p) {
  return Value(make_tuple({Value(p.first), Value(p.second)}));
}

const std::vector<Value>* items_of(const Value& v) {
  return v.is_list() ? &v.as_list()->items : v.is_tuple() ? &v.as_tuple()->items : nullptr;
}

// pad's widths: a list of (before, after) integer pairs, from the first axis.
std::vector<std::pair<int64_t, int64_t>> widths_of(Args& a, size_t i) {
  const std::vector<Value>* items = items_of(a[i]);
  if (!items) a.fail(i, "expected a list of (before, after) pairs, got " + a_type_name(a[i]));
  std::vector<std::pair<int64_t, int64_t>> w;
  for (const Value& it : *items) {
    const std::vector<Value>* p = items_of(it);
    if (!p || p->size() != 2 || !(*p)[0].is_int() || !(*p)[1].is_int())
      a.fail(i, "expected a list of (before, after) pairs of ints, got an element " + a_type_name(it));
    w.emplace_back((*p)[0].as_int(), (*p)[1].as_int());
  }
  return w;
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
  def(vm, "einsum", "spec, *xs", [](Args& a) {
    std::vector<backend::Tensor> xs;
    for (size_t i = 0; i < a.rest().size(); ++i) {
      if (!a.rest()[i].is_tensor())
        a.fail(0, "einsum's operands are tensors; operand " + std::to_string(i + 1) + " is " + a_type_name(a.rest()[i]));
      xs.push_back(a.rest()[i].as_tensor());
    }
    return Value(backend::einsum(a.str(0), xs));
  });
  def(vm, "chunk", "x, n, axis=0", [](Args& a) {
    return list_of(backend::chunk(a.tensor(0), a.integer(1), a.integer(2)));
  });
  def(vm, "split_sizes", "x, sizes, axis=0", [](Args& a) {
    return list_of(backend::split_sizes(a.tensor(0), a.int_list(1), a.integer(2)));
  });
  def(vm, "unbind", "x, axis=0", [](Args& a) { return list_of(backend::unbind(a.tensor(0), a.integer(1))); });
  def(vm, "sort", "x, axis=-1, descending=false", [](Args& a) {
    return pair_of(backend::sort(a.tensor(0), a.integer(1), a.boolean(2)));
  });
  def(vm, "argsort", "x, axis=-1, descending=false", [](Args& a) {
    return Value(backend::argsort(a.tensor(0), a.integer(1), a.boolean(2)));
  });
  def(vm, "topk", "x, k, axis=-1, largest=true", [](Args& a) {
    return pair_of(backend::topk(a.tensor(0), a.integer(1), a.integer(2), a.boolean(3)));
  });
  def(vm, "multinomial", "probs, n=1, replacement=false", [](Args& a) {
    return Value(backend::multinomial(a.tensor(0), a.integer(1), a.boolean(2)));
  });
  def(vm, "pad", "x, widths, value=0", [](Args& a) {
    const backend::Tensor x = a.tensor(0);
    check_fill_fits(a, 2, x.dtype());  // 3e9 into i32 saturated
    return Value(backend::pad(x, widths_of(a, 1), a.number(2)));
  });
}

}  // namespace nn::frontend::builtins
