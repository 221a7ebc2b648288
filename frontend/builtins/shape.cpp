// Built-ins that change shapes, dtypes and devices.
#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {
std::vector<backend::Tensor> tensor_list(Args& a, size_t i) {
  const Value& v = a[i];
  if (v.is_tensor() && v.as_tensor().ndim() > 0) {
    // A tensor stands for the list of its rows, as in NumPy.
    std::vector<backend::Tensor> rows;
    for (int64_t r = 0; r < v.as_tensor().shape()[0]; ++r)
      rows.push_back(backend::index(v.as_tensor(), {backend::IndexItem{backend::IndexItem::index, r, {}, {}, {}}}));
    if (rows.empty()) a.fail(i, "expected a non-empty list of tensors");
    return rows;
  }
  const std::vector<Value>* items = v.is_list() ? &v.as_list()->items : v.is_tuple() ? &v.as_tuple()->items : nullptr;
  if (!items) a.fail(i, "expected a list of tensors, got " + a_type_name(v));
  if (items->empty()) a.fail(i, "expected a non-empty list of tensors");
  std::vector<backend::Tensor> ts;
  for (auto& it : *items) ts.push_back(a.vm().to_tensor(it, a.span(i)));
  return ts;
}
}  // namespace

void install_shape(Interpreter& vm) {
  def(vm, "reshape", "x, shape", [](Args& a) { return Value(backend::reshape(a.tensor(0), a.int_list(1))); });
  def(vm, "permute", "x, dims", [](Args& a) { return Value(backend::permute(a.tensor(0), a.int_list(1))); });
  def(vm, "transpose", "x, a=-2, b=-1", [](Args& a) {
    return Value(backend::transpose(a.tensor(0), a.integer(1), a.integer(2)));
  });
  def(vm, "flatten", "x, start=1, end=-1",
      [](Args& a) { return Value(backend::flatten(a.tensor(0), a.integer(1), a.integer(2))); });
  def(vm, "squeeze", "x, axis=none", [](Args& a) {
    std::optional<int64_t> axis;
    if (!a[1].is_none()) axis = a.integer(1);
    return Value(backend::squeeze(a.tensor(0), axis));
  });
  def(vm, "unsqueeze", "x, axis", [](Args& a) { return Value(backend::unsqueeze(a.tensor(0), a.integer(1))); });
  def(vm, "flip", "x, axis=none", [](Args& a) { return Value(backend::flip(a.tensor(0), a.axes(1))); });
  // roll(x, shift, axis=none): a shift per axis when both are lists, as torch.roll.
  def(vm, "roll", "x, shift, axis=none", [](Args& a) {
    backend::Tensor x = a.tensor(0);
    if (a[1].is_int() || a[1].is_bool()) {
      std::optional<int64_t> axis;
      if (!a[2].is_none()) axis = a.integer(2);
      return Value(backend::roll(x, a.integer(1), axis));
    }
    const std::vector<int64_t> shifts = a.int_list(1);
    const std::optional<std::vector<int64_t>> axes = a.axes(2);
    if (!axes || axes->size() != shifts.size())
      a.fail(2, "a list of " + std::to_string(shifts.size()) + " shifts needs a list of as many axes");
    for (size_t i = 0; i < shifts.size(); ++i) x = backend::roll(x, shifts[i], (*axes)[i]);
    return Value(x);
  });
  def(vm, "concat", "xs, axis=0", [](Args& a) { return Value(backend::concat(tensor_list(a, 0), a.integer(1))); });
  def(vm, "stack", "xs, axis=0", [](Args& a) { return Value(backend::stack(tensor_list(a, 0), a.integer(1))); });
  def(vm, "broadcast_to", "x, shape", [](Args& a) {
    return Value(backend::broadcast_to(a.tensor(0), a.shape(1)));
  });
  def(vm, "astype", "x, dtype", [](Args& a) {
    backend::Tensor r = backend::astype(a.tensor(0), a.dtype(1));
    return Value(r);
  });
  def(vm, "to", "x, device", [](Args& a) {
    backend::Device* d = nullptr;
    if (a[1].is_device()) d = a[1].as_device();
    else if (a[1].is_str()) d = backend::find_device(a[1].as_str());
    else a.fail(1, "expected a device or a device name, got " + a_type_name(a[1]));
    if (!d) a.fail(1, "device `" + a.str(1) + "` is not available: " + backend::device_unavailable_reason(a.str(1)));
    return Value(backend::to_device(a.tensor(0), d));
  });
}

}  // namespace nn::frontend::builtins
