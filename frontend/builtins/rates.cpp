// Learning rates a graph reads on every run (SPEC §13): `_rate(o)` gives
// the optimizer record o's `lr` as a 0-d tensor (f32, or f64 for f64
// params; weak like a host number) that the optimizers' steps multiply by. The tensor is fed
// (backend TensorImpl::fed): a graph that traced the step reads it on every
// run, and before each run the graph copies o.lr's current value in, so
// that `opt.lr = cosine_lr(...)` between steps changes the rate without
// tracing again. One tensor per record, kept while the record lives. An
// `lr` tensor the graph itself writes is read as that tensor.
#include <memory>

#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/host_data.h"
#include "frontend/host_read_guard.h"
#include "frontend/interpreter.h"
#include "ir/tracer.h"

namespace nn::frontend::builtins {
namespace {

struct FedRate {
  std::weak_ptr<Record> record;
  backend::Tensor tensor;
};

}  // namespace

void install_rates(Interpreter& vm) {
  auto rates = std::make_shared<std::vector<FedRate>>();
  def(vm, "_rate", "o", [rates](Args& a) {
    if (!a[0].is_record()) a.fail(0, "expected an optimizer record, got " + a_type_name(a[0]));
    const RecordPtr& o = a[0].as_record();
    static const Symbol lr = intern("lr");
    const Value* v = o->find(lr);
    // In the params' own float type, so that graph fusion takes the rate
    // into the update's kernel (an f64 rate would keep f32 updates apart);
    // f64 where any param is f64, which would lose digits to an f32 rate
    // (the f32 ones round it once, as a host number: it is weak).
    auto params_dtype = [&o] {
      static const Symbol params = intern("params");
      if (const Value* ps = o->find(params); ps && ps->is_list())
        for (const Value& p : ps->as_list()->items)
          if (p.is_tensor() && p.as_tensor().dtype() == backend::DType::f64) return backend::DType::f64;
      return backend::DType::f32;
    };
    // A rate tensor the graph being traced made or wrote into (`lr *= 0.5`
    // before the step, with opt.lr that tensor) is read as that tensor: the
    // step takes the new rate, as eager code does (a fed copy held the rate
    // from before the run). Others are fed: a new tensor put in opt.lr
    // between steps is read without tracing again.
    const ir::Tracer* tr = ir::Tracer::active();
    if (v && v->is_tensor() && v->as_tensor().numel() == 1 && is_floating(v->as_tensor().dtype()) &&
        (v->as_tensor().is_traced() || (tr && tr->wrote_into(v->as_tensor())))) {
      backend::Tensor r = backend::reshape(v->as_tensor(), std::vector<int64_t>{});
      const backend::DType d = params_dtype();
      return Value(r.dtype() == d ? r : backend::astype(r, d));
    }
    const std::optional<double> rate = v ? fed_number(*v) : std::nullopt;
    if (!rate)
      a.fail(0, "an optimizer's `lr` must be a number, got " + (v ? a_type_name(*v) : std::string("no field `lr`")));
    backend::Tensor t;
    std::erase_if(*rates, [](const FedRate& r) { return r.record.expired(); });
    for (const FedRate& r : *rates)
      if (r.record.lock() == o) t = r.tensor;
    if (!t.defined()) {
      t = on_default_device(backend::scalar(0.0, params_dtype()));
      t.set_weak(true);
      t.impl()->fed = true;
      rates->push_back({o, t});
    }
    write_fed(t, *rate);
    a.vm().note_fed(o, lr, t);
    return Value(t);
  });
}

}  // namespace nn::frontend::builtins
