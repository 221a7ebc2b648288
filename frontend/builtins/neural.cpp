// Built-ins for neural networks and losses (SPEC §7 "Neural", "Losses"):
// thin bindings of backend/nn_ops.h. Spatial arguments (stride, padding,
// dilation, pooling windows) take an int for both dims or an (h, w) pair.
#include <fmt/core.h>

#include <tuple>

#include "backend/nn_ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/interpreter.h"

namespace nn::frontend::builtins {
namespace {
using backend::Pair;
using backend::Tensor;

Pair pair_arg(Args& a, size_t i) {
  std::vector<int64_t> v = a.int_list(i);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  a.fail(i, "expected an int or a pair of ints (h, w), got " + std::to_string(v.size()) + " ints");
}

Tensor tensor_or_none(Args& a, size_t i) { return a[i].is_none() ? Tensor() : a.tensor(i); }

// A loss's `reduction`, as PyTorch spells it.
backend::Reduction reduction(Args& a, size_t i) {
  const std::string& r = a.str(i);
  if (r == "mean") return backend::Reduction::mean;
  if (r == "sum") return backend::Reduction::sum;
  if (r == "none") return backend::Reduction::none;
  a.fail(i, "reduction must be \"mean\", \"sum\" or \"none\", not \"" + r + "\"");
}

// Pools: (x, k, stride=none, padding=0); stride none means the window.
template <Tensor (*Pool)(const Tensor&, Pair, std::optional<Pair>, Pair)>
Value pool(Args& a) {
  std::optional<Pair> stride;
  if (!a[2].is_none()) stride = pair_arg(a, 2);
  return Value(Pool(a.tensor(0), pair_arg(a, 1), stride, pair_arg(a, 3)));
}
}  // namespace

void install_neural(Interpreter& vm) {
  def(vm, "conv2d", "x, w, b=none, stride=1, padding=0, dilation=1, groups=1", [](Args& a) {
    return Value(backend::conv2d(a.tensor(0), a.tensor(1), tensor_or_none(a, 2), pair_arg(a, 3), pair_arg(a, 4),
                                 pair_arg(a, 5), a.integer(6)));
  });
  def(vm, "max_pool2d", "x, k, stride=none, padding=0", pool<backend::max_pool2d>);
  def(vm, "avg_pool2d", "x, k, stride=none, padding=0", pool<backend::avg_pool2d>);
  def(vm, "batch_norm", "x, gamma, beta, mean, var, training, momentum=0.1, eps=1e-5", [](Args& a) {
    // The running statistics are updated in place: the tensors the caller holds.
    Tensor mean = tensor_or_none(a, 3), var = tensor_or_none(a, 4);
    const bool training = a.boolean(5) && !a.vm().exporting();
    return Value(backend::batch_norm(a.tensor(0), tensor_or_none(a, 1), tensor_or_none(a, 2), mean, var, training,
                                     a.number(6), a.number(7)));
  });
  def(vm, "layer_norm", "x, gamma, beta, eps=1e-5", [](Args& a) {
    return Value(backend::layer_norm(a.tensor(0), tensor_or_none(a, 1), tensor_or_none(a, 2), a.number(3)));
  });
  def(vm, "dropout", "x, p, training=true", [](Args& a) {
    double p = a.number(1);
    if (!(p >= 0.0 && p < 1.0)) a.fail(1, fmt::format("dropout probability must be in [0, 1), got {}", p));
    return Value(backend::dropout(a.tensor(0), p, a.boolean(2) && !a.vm().exporting()));
  });
  def(vm, "softmax", "x, axis=-1", [](Args& a) { return Value(backend::softmax(a.tensor(0), a.integer(1))); });
  def(vm, "log_softmax", "x, axis=-1", [](Args& a) { return Value(backend::log_softmax(a.tensor(0), a.integer(1))); });
  def(vm, "embedding", "ids, table", [](Args& a) { return Value(backend::embedding(a.tensor(0), a.tensor(1))); });
  def(vm, "one_hot", "ids, n", [](Args& a) { return Value(backend::one_hot(a.tensor(0), a.integer(1))); });

  using Loss = Tensor (*)(const Tensor&, const Tensor&, backend::Reduction);
  // The losses over class ids take PyTorch's ignore_index.
  for (auto [name, fn, params] : {
           std::tuple<const char*, Loss, const char*>{"softmax_cross_entropy", backend::softmax_cross_entropy,
                                                      "logits, labels, reduction=\"mean\", ignore_index=none"},
           {"nll_loss", backend::nll_loss, "logp, labels, reduction=\"mean\", ignore_index=none"}}) {
    def(vm, name, params, [fn, name](Args& a) {
      const backend::Reduction r = reduction(a, 2);
      const Tensor x = a.tensor(0), labels = a.tensor(1);
      if (a[3].is_none()) return Value(fn(x, labels, r));
      if (!backend::is_integral(labels.dtype()))
        a.fail(3, std::string(name) + ": ignore_index names a class id, but the labels are " + labels.type().str() +
                      " (probabilities)");
      return Value(backend::ignoring_index(labels, a.integer(3), r, [&](const Tensor& ids) {
        return fn(x, ids, backend::Reduction::none);
      }));
    });
  }
  for (auto [name, fn, params] : {
           std::tuple<const char*, Loss, const char*>{"mse_loss", backend::mse_loss,
                                                      "pred, target, reduction=\"mean\""},
           {"l1_loss", backend::l1_loss, "pred, target, reduction=\"mean\""},
           {"bce_with_logits", backend::bce_with_logits, "logits, targets, reduction=\"mean\""}})
    def(vm, name, params, [fn](Args& a) { return Value(fn(a.tensor(0), a.tensor(1), reduction(a, 2))); });
  def(vm, "accuracy", "logits, labels", [](Args& a) { return Value(backend::accuracy(a.tensor(0), a.tensor(1))); });
}

}  // namespace nn::frontend::builtins
