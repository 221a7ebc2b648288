// Mixed precision (SPEC §15): autocast(dtype, f) runs f with the backend's
// autocast on (backend/autocast.h), restored however f ends.
#include "backend/autocast.h"
#include "backend/half.h"
#include "frontend/builtins/builtins.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {

void install_precision(Interpreter& vm) {
  def(vm, "autocast", "dtype, fn", [](Args& a) {
    const backend::DType t = a.dtype(0);
    if (!backend::is_half_float(t) && t != backend::DType::f32)
      a.fail(0, "autocast computes in bf16 or f16 (or f32, to turn it off), not " +
                    std::string(backend::dtype_name(t)));
    if (!a[1].is_function()) a.fail(1, "autocast needs a function to call, not " + a_type_name(a[1]));
    backend::AutocastScope scope(t);
    return a.vm().call(a[1], {}, {}, a.call_span());
  });
}

}  // namespace nn::frontend::builtins
