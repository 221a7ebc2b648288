// Built-ins for several processes (SPEC §14): world(), the collectives
// all_reduce, broadcast, all_gather and barrier, and the helpers of the
// prelude's data_parallel (_data_parallel_start, _average_gradients).
#include "backend/comm/communicator.h"
#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/format.h"
#include "frontend/interpreter.h"
#include "ir/tracer.h"

namespace nn::frontend::builtins {
namespace {

using backend::comm::communicator;

std::vector<backend::Tensor> tensor_list(Args& a, size_t i) {
  if (!a[i].is_list()) a.fail(i, "expected a list of tensors, got " + a_type_name(a[i]));
  std::vector<backend::Tensor> out;
  for (const Value& v : a[i].as_list()->items) {
    if (!v.is_tensor()) a.fail(i, "expected a list of tensors, got an element " + a_type_name(v));
    out.push_back(v.as_tensor());
  }
  return out;
}

}  // namespace

void install_distributed(Interpreter& vm) {
  def(vm, "world", "", [](Args&) {
    const backend::comm::World& w = communicator().world();
    RecordPtr r = make_record();
    r->set(intern("rank"), Value(int64_t(w.rank)));
    r->set(intern("size"), Value(int64_t(w.size)));
    r->set(intern("local_rank"), Value(int64_t(w.local_rank)));
    return Value(r);
  });
  def(vm, "all_reduce", "x, op=\"sum\"", [](Args& a) {
    backend::comm::ReduceOp op;
    if (!backend::comm::parse_reduce_op(a.str(1), op))
      a.fail(1, "all_reduce: op is \"sum\", \"mean\", \"max\" or \"min\", not \"" + a.str(1) + "\"");
    return Value(backend::all_reduce(a.tensor(0), op));
  });
  def(vm, "broadcast", "x, root=0", [](Args& a) { return Value(backend::broadcast(a.tensor(0), a.integer(1))); });
  def(vm, "all_gather", "x", [](Args& a) { return Value(backend::all_gather(a.tensor(0))); });
  def(vm, "barrier", "", [](Args&) {
    // In a graph, every run waits: a host call node.
    if (ir::Tracer* tr = ir::Tracer::active()) {
      backend::check_collective_call("barrier()");
      tr->add_host_call("barrier", {}, [](std::span<const backend::Tensor>) { communicator().barrier(); });
      return Value();
    }
    backend::barrier();
    return Value();
  });
  // data_parallel's start: checks the optimizer and the bucket size, and
  // every rank's params take rank 0's values, in place.
  def(vm, "_data_parallel_start", "opt, bucket_mb", [](Args& a) {
    const Value* params = a[0].is_record() ? a[0].as_record()->find(intern("params")) : nullptr;
    const Value* step = a[0].is_record() ? a[0].as_record()->find(intern("step")) : nullptr;
    if (!params || !step || !step->is_function())
      a.fail(0, "data_parallel: expected an optimizer record (sgd(params(model)), adam(...)), got " +
                    a_type_name(a[0]));
    const double mb = a.number(1);
    if (!(mb > 0)) a.fail(1, "data_parallel: bucket_mb must be positive, got " + to_str(a[1]));
    if (!params->is_list()) a.fail(0, "data_parallel: the optimizer's params are not a list of tensors");
    std::vector<backend::Tensor> ps;
    for (const Value& v : params->as_list()->items) {
      if (!v.is_tensor()) a.fail(0, "data_parallel: the optimizer's params hold " + a_type_name(v));
      ps.push_back(v.as_tensor());
    }
    if (communicator().world().size == 1) return Value();
    for (const backend::Tensor& p : ps) {
      backend::Tensor target = p;
      backend::index_assign(target, {}, backend::broadcast(p, 0));
    }
    return Value();
  });
  def(vm, "_average_gradients", "grads, bucket_mb", [](Args& a) {
    return list_of(backend::average_gradients(tensor_list(a, 0), a.number(1)));
  });
}

}  // namespace nn::frontend::builtins
