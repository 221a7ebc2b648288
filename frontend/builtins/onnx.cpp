// ONNX (SPEC §16): save_onnx(f, args, path, dynamic_batch=true) traces f's
// forward on example arguments and writes the graph as an ONNX model;
// load_onnx(path) gives a layer record whose `weights` hold the model's
// initializers (the float ones are params, so it trains further) and whose
// `call` runs its nodes as nn ops, eagerly or inside a graph.
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <unistd.h>

#include "backend/autograd.h"
#include "backend/error.h"
#include "backend/ops.h"
#include "backend/untraced.h"
#include "frontend/builtins/builtins.h"
#include "frontend/builtins/file_io.h"
#include "frontend/host_data.h"
#include "frontend/interpreter.h"
#include "ir/tracer.h"
#include "onnx/onnx_io.h"

namespace nn::frontend::builtins {
namespace {

// The example arguments: a tuple or list of tensors, or one tensor.
std::vector<backend::Tensor> example_args(Args& a, size_t i) {
  std::vector<Value> items;
  if (a[i].is_tuple()) items = a[i].as_tuple()->items;
  else if (a[i].is_list()) items = a[i].as_list()->items;
  else items = {a[i]};
  std::vector<backend::Tensor> ts;
  for (const Value& v : items) {
    if (!v.is_tensor()) a.fail(i, "save_onnx's example arguments are tensors, not " + a_type_name(v));
    ts.push_back(v.as_tensor());
  }
  return ts;
}

// The result's tensors: one, or a tuple or list of them.
std::vector<backend::Tensor> result_tensors(Args& a, const Value& r) {
  std::vector<Value> items;
  if (r.is_tuple()) items = r.as_tuple()->items;
  else if (r.is_list()) items = r.as_list()->items;
  else items = {r};
  std::vector<backend::Tensor> ts;
  for (const Value& v : items) {
    if (!v.is_tensor()) a.fail(0, "save_onnx needs a function that returns tensors, and this one returned " + a_type_name(v));
    ts.push_back(v.as_tensor());
  }
  return ts;
}

std::string param_name(const Value& f, size_t i) {
  const Function& fn = *f.as_function();
  if (fn.kind == Function::Kind::Closure && i < fn.def->params.size()) return fn.def->params[i].name;
  return "input" + std::to_string(i);
}

void check_path(Args& a, size_t i, bool write) {
  std::string denied = fileio::access_denied(a.vm().options().allow_files, a.str(i), write);
  if (!denied.empty()) a.fail(i, denied);
}

// f traced on the example arguments into the forward graph save_onnx
// writes; the names of its inputs and outputs go into `options`.
ir::Graph trace_forward(Args& a, const std::vector<backend::Tensor>& examples, onnx_io::ExportOptions& options) {
  backend::NoGradGuard forward_only;
  struct EvalMode {  // dropout and batch norm as in evaluation, for the trace
    Interpreter& vm;
    explicit EvalMode(Interpreter& v) : vm(v) { vm.begin_export(); }
    ~EvalMode() { vm.end_export(); }
  } eval_mode(a.vm());
  ir::Tracer tr(options.graph_name);
  a.vm().start_trace(tr);
  std::vector<Value> traced;
  options.inputs.clear();
  options.outputs.clear();
  for (size_t i = 0; i < examples.size(); ++i) {
    options.inputs.push_back(param_name(a[0], i));
    traced.emplace_back(tr.add_input(examples[i].type(), options.inputs.back()));
  }
  const Value r = a.vm().call(a[0], traced, {}, a.call_span());
  const std::vector<backend::Tensor> outs = result_tensors(a, r);
  for (size_t i = 0; i < outs.size(); ++i) options.outputs.push_back(outs.size() == 1 ? "output" : "output" + std::to_string(i));
  return tr.finish(outs);
}

// Where the model's result differs from f's beyond float rounding: "" when
// they agree, else how ("holds 2 at element 0 where f gives 3").
std::string difference(const backend::Tensor& model, const backend::Tensor& f) {
  if (model.shape() != f.shape()) return "has shape " + model.shape().str() + " where f's has " + f.shape().str();
  const backend::Tensor x = backend::astype(backend::to_device(model, backend::cpu_device()), backend::DType::f64);
  const backend::Tensor y = backend::astype(backend::to_device(f, backend::cpu_device()), backend::DType::f64);
  const double rtol = backend::dtype_size(f.dtype()) == 2 ? 1e-2 : 1e-4, atol = rtol / 10;
  for (int64_t k = 0; k < x.numel(); ++k) {
    const double u = x.data<double>()[k], v = y.data<double>()[k];
    if ((u != u && v != v) || std::abs(u - v) <= atol + rtol * std::abs(v)) continue;
    return fmt::format("holds {:.6g} at element {} where f gives {:.6g}", u, k, v);
  }
  return "";
}

// With dynamic_batch=true a model traced at batch B must compute f at any
// batch. Where the exporter read the batch wrong (a number that equals the
// traced batch by chance, the batch size used as a number, a squeeze of a
// batch of 1) it would be silently wrong at other sizes. So f is traced
// again at B + 1 (the examples and a row more) and written with fixed
// sizes, and both models must agree there.
void check_other_batch(Args& a, const std::vector<backend::Tensor>& examples, const onnx_io::ExportOptions& options,
                       const std::string& written) {
  int64_t batch = -1;
  std::vector<backend::Tensor> bigger;
  {
    backend::NoGradGuard no_grad;
    backend::Untraced eager;
    for (const backend::Tensor& e : examples) {
      if (e.ndim() == 0) {
        bigger.push_back(e);
        continue;
      }
      batch = e.shape()[0];
      backend::IndexItem first;
      first.stop = 1;
      backend::Tensor row = backend::index(e, {first});
      // Its row differs from the others, so a model that reads one row for all shows it.
      if (backend::is_floating(e.dtype())) row = backend::mul(row, backend::scalar(1.5, e.dtype(), true));
      bigger.push_back(e.shape()[0] == 0 ? e : backend::concat({e, row}, 0));
    }
  }
  if (batch <= 0) return;
  const std::string at = "at batch " + std::to_string(batch + 1);
  const std::string fixed_sizes = " (pass dynamic_batch=false to save_onnx for fixed sizes)";
  auto refuse = [&](const std::string& why) {
    a.fail(2, "save_onnx: with dynamic_batch=true the model must compute f at any batch size, traced at " +
                  std::to_string(batch) + "; " + why + fixed_sizes);
  };
  onnx_io::ExportOptions fixed = options;
  fixed.dynamic_batch = false;
  const std::string reference = written + ".fixed";
  struct Remove {
    const std::string& path;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  } remove_reference{reference};
  try {
    onnx_io::save(trace_forward(a, bigger, fixed), fixed, reference);
  } catch (ScriptError& e) {
    refuse("f fails " + at + ": " + e.first().message);
  } catch (const backend::Error& e) {
    refuse("f cannot be written " + at + ": " + e.what());
  }
  backend::NoGradGuard no_grad;
  backend::Untraced eager;
  auto run = [&bigger](const std::string& path) {
    const auto model = onnx_io::load(path);
    std::vector<backend::Tensor> weights;
    for (const auto& init : onnx_io::signature(*model).initializers) weights.push_back(init.value);
    return onnx_io::run(*model, weights, bigger);
  };
  std::vector<backend::Tensor> got, want = run(reference);
  try {
    got = run(written);
  } catch (const backend::Error& e) {
    refuse("the model fails " + at + ": " + e.what());
  }
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const std::string d = difference(got[i], want[i]);
    if (!d.empty())
      refuse(at + " its output `" + options.outputs[i] + "` " + d +
             ": a number in f equals the traced batch size, or f uses the batch size as a number or squeezes a "
             "batch of 1");
  }
}

}  // namespace

void install_onnx(Interpreter& vm) {
  def(vm, "save_onnx", "f, args, path, dynamic_batch=true", [](Args& a) {
    if (!a[0].is_function())
      a.fail(0, "save_onnx needs a function, not " + a_type_name(a[0]) +
                    (a[0].is_record() ? " (for a layer, pass fn(x) { layer(x) })" : ""));
    const std::vector<backend::Tensor> examples = example_args(a, 1);
    check_path(a, 2, true);
    onnx_io::ExportOptions options;
    options.dynamic_batch = a.boolean(3);
    options.graph_name = a[0].as_function()->name();
    options.name_of = [&vm = a.vm()](const backend::Tensor& t) { return vm.user_name(t); };
    const ir::Graph g = trace_forward(a, examples, options);
    if (!options.dynamic_batch) {
      onnx_io::save(g, options, a.str(2));  // backend::Error: a diagnostic at the call
      return Value();
    }
    // Written beside the file, checked, then put in its place: a model that
    // fails the check leaves an older file as it was.
    const std::string checking = a.str(2) + ".checking-" + std::to_string(getpid());
    try {
      onnx_io::save(g, options, checking);
      check_other_batch(a, examples, options, checking);
      std::error_code ec;
      std::filesystem::rename(checking, a.str(2), ec);
      if (ec) a.fail(2, "save_onnx: cannot write `" + a.str(2) + "`: " + ec.message());
    } catch (...) {
      std::error_code ec;
      std::filesystem::remove(checking, ec);
      throw;
    }
    return Value();
  });

  def(vm, "load_onnx", "path", [](Args& a) {
    check_path(a, 0, false);
    auto model = onnx_io::load(a.str(0));
    const onnx_io::ModelSignature& sig = onnx_io::signature(*model);
    auto weights = make_record();
    for (const auto& init : sig.initializers) {
      backend::Tensor t = on_default_device(init.value);  // --device cuda: the weights on the GPU
      weights->set(intern(init.name), Value(init.trainable ? backend::param(t) : t));
    }
    std::vector<Value> inputs, outputs;
    for (const auto& n : sig.inputs) inputs.emplace_back(n);
    for (const auto& n : sig.outputs) outputs.emplace_back(n);

    // call(self, *inputs): the model's nodes on self's current weights.
    auto call = std::make_shared<Builtin>();
    call->name = "onnx_call";
    Parameter self;
    self.name = "self";
    self.sym = intern("self");
    call->params.push_back(self);
    call->variadic = true;
    call->fn = [model](Args& c) {
      const onnx_io::ModelSignature& sig = onnx_io::signature(*model);
      if (!c[0].is_record()) c.fail(0, "an ONNX model's call takes the model record first");
      const Value* w = c[0].as_record()->find(intern("weights"));
      if (!w || !w->is_record()) c.fail(0, "the model record has lost its `weights`");
      std::vector<backend::Tensor> inits;
      for (const auto& init : sig.initializers) {
        const Value* v = w->as_record()->find(intern(init.name));
        if (!v || !v->is_tensor()) c.fail(0, "the model's weight `" + init.name + "` is no longer a tensor");
        inits.push_back(v->as_tensor());
      }
      std::vector<backend::Tensor> ins;
      for (const Value& v : c.rest()) ins.push_back(c.vm().to_tensor(v, c.call_span()));
      const std::vector<backend::Tensor> outs = onnx_io::run(*model, inits, ins);
      if (outs.size() == 1) return Value(outs[0]);
      std::vector<Value> items(outs.begin(), outs.end());
      return Value(make_tuple(std::move(items)));
    };
    auto fn = std::make_shared<Function>();
    fn->kind = Function::Kind::Builtin;
    fn->builtin = call;

    auto r = make_record();
    r->set(intern("kind"), Value("OnnxModel"));
    r->set(intern("file"), Value(a.str(0)));
    r->set(intern("inputs"), Value(make_list(std::move(inputs))));
    r->set(intern("outputs"), Value(make_list(std::move(outputs))));
    r->set(intern("weights"), Value(weights));
    r->set(intern("call"), Value(FunctionPtr(fn)));
    return Value(r);
  });
}

}  // namespace nn::frontend::builtins
