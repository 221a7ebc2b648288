// Mixed precision (SPEC §15): autocast(dtype, f) runs f with the backend's
// autocast on (backend/autocast.h), restored however f ends; and what the
// prelude's f16 loss scaling needs (minimize): the autocast dtype, copies
// of an optimizer's tensors, and whole-tensor writes that are state
// updates inside a graph, so that a skipped step needs no host read.
#include "backend/autocast.h"
#include "backend/autograd.h"
#include "backend/half.h"
#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/builtins/training_state.h"
#include "frontend/host_data.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {

const backend::Tensor& tensor_arg(Args& a, size_t i) {
  if (!a[i].is_tensor()) a.fail(i, "expected a tensor, got " + a_type_name(a[i]));
  return a[i].as_tensor();
}

}  // namespace

void install_precision(Interpreter& vm) {
  // The loss scale of f16 training and its count of good steps, made on
  // first use (on the default device, never traced: a graph captures them
  // as state), one pair per interpreter.
  auto scaler = std::make_shared<RecordPtr>();
  def(vm, "_loss_scale", "", [scaler](Args&) {
    if (!*scaler) {
      Untraced untraced;
      RecordPtr r = make_record();
      r->fields.emplace_back(intern("scale"), Value(on_default_device(backend::scalar(65536.0, backend::DType::f32))));
      r->fields.emplace_back(intern("good"), Value(on_default_device(backend::scalar(0.0, backend::DType::f32))));
      *scaler = r;
    }
    return Value(*scaler);
  });
  def(vm, "autocast", "dtype, fn", [](Args& a) {
    const backend::DType t = a.dtype(0);
    if (!backend::is_half_float(t) && t != backend::DType::f32)
      a.fail(0, "autocast computes in bf16 or f16 (or f32, to turn it off), not " +
                    std::string(backend::dtype_name(t)));
    if (!a[1].is_function()) a.fail(1, "autocast needs a function to call, not " + a_type_name(a[1]));
    backend::AutocastScope scope(t);
    return a.vm().call(a[1], {}, {}, a.call_span());
  });
  def(vm, "_autocast_dtype", "", [](Args&) { return Value(backend::autocast_dtype()); });
  // Copies of the tensors of state(x) (an optimizer: its params and
  // buffers), in its order: x * 1, a copy eagerly and no node in a graph.
  def(vm, "_snapshot", "x", [](Args& a) {
    backend::NoGradGuard no_grad;
    std::vector<backend::Tensor> copies;
    for (auto& [name, t] : state_entries(a[0])) copies.push_back(backend::mul(t, backend::scalar(1.0, t.dtype(), true)));
    return list_of(copies);
  });
  // Each tensor of state(x) keeps its new value where `ok` (a bool tensor)
  // holds, and takes back its copy from _snapshot where it does not.
  def(vm, "_restore_unless", "ok, x, copies", [](Args& a) {
    backend::NoGradGuard no_grad;
    const backend::Tensor& ok = tensor_arg(a, 0);
    const auto entries = state_entries(a[1]);
    if (!a[2].is_list() || a[2].as_list()->items.size() != entries.size())
      a.fail(2, "expected the list _snapshot made of the same record");
    for (size_t i = 0; i < entries.size(); ++i) {
      const backend::Tensor& t = entries[i].second;
      write_whole(t, backend::where(ok, t, a[2].as_list()->items[i].as_tensor()));
    }
    return Value();
  });
  def(vm, "_assign", "target, v", [](Args& a) {
    backend::NoGradGuard no_grad;
    write_whole(tensor_arg(a, 0), tensor_arg(a, 1));
    return Value();
  });
}

}  // namespace nn::frontend::builtins
