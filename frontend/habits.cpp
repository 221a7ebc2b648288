// The table of habit_hint (frontend/habits.h).
#include "frontend/habits.h"

#include <algorithm>
#include <iterator>

namespace nn::frontend {
namespace {

struct Habit {
  std::string_view name;  // as PyTorch or NumPy spells it
  std::string_view nn;    // what nn calls it
};

// Sorted by name: looked up by binary search.
constexpr Habit kHabits[] = {
    {"Adam", "the optimizers are functions: `adam(params(model), lr)`"},
    {"BCEWithLogitsLoss", "losses are functions: `bce_with_logits(logits, targets)`"},
    {"BatchNorm1d", "`BatchNorm2d(C)` normalises [N, C] inputs too"},
    {"CrossEntropyLoss", "losses are functions: `softmax_cross_entropy(logits, labels)`"},
    {"GELU", "activations are functions: `gelu(x)`; a Sequential takes `gelu` itself"},
    {"MSELoss", "losses are functions: `mse_loss(pred, target)`"},
    {"ReLU", "activations are functions: `relu(x)`; a Sequential takes `relu` itself"},
    {"SGD", "the optimizers are functions: `sgd(params(model), lr)`"},
    {"Sigmoid", "activations are functions: `sigmoid(x)`; a Sequential takes `sigmoid` itself"},
    {"Softmax", "`softmax(x, axis=-1)` is a function"},
    {"Tanh", "activations are functions: `tanh(x)`; a Sequential takes `tanh` itself"},
    {"backward", "nn has no backward(): `grad(loss, params(model))` gives the gradients, "
                 "`minimize(loss, opt)` takes an optimizer step"},
    {"bmm", "nn calls it `matmul(a, b)` (batched)"},
    {"cat", "nn calls it `concat(xs, axis=0)`"},
    {"clamp", "nn calls it `clip(x, lo, hi)`"},
    {"clip_grad_value", "clip each gradient with `clip(g, -v, v)`; `clip_grad_norm(grads, m)` scales them by their norm"},
    {"clip_grad_value_", "clip each gradient with `clip(g, -v, v)`; `clip_grad_norm(grads, m)` scales them by their norm"},
    {"clone", "nn calls it `copy(x)`"},
    {"concatenate", "nn calls it `concat(xs, axis=0)`"},
    {"cpu", "move a tensor with `to(x, \"cpu\")`"},
    {"cuda", "move a tensor with `to(x, \"cuda\")`"},
    {"double", "change a tensor's dtype with `astype(x, f64)`"},
    {"expand", "nn calls it `broadcast_to(x, shape)`"},
    {"long", "change a tensor's dtype with `astype(x, i64)`"},
    {"mm", "nn calls it `matmul(a, b)`"},
    {"named_parameters", "`params(model)` gives a model's params (a list)"},
    {"nn", "nn's layers and functions are built in: `Linear(4, 2)`, `relu(x)`"},
    {"np", "nn's functions are built in: `zeros([2, 3])`, `arange(5)`"},
    {"numel", "the element count is `x.size`"},
    {"numpy", "a tensor prints as it is; `item(x)` gives a one-element tensor's number"},
    {"param_groups", "an optimizer has one group: make one optimizer per group, and give each `step` its gradients"},
    {"parameters", "`params(model)` gives a model's params (a list)"},
    {"size", "a tensor's dims are `x.shape` (one of them: `x.shape[0]`); `x.size` is the element count"},
    {"tolist", "`item(x)` gives a one-element tensor's number; index a tensor for its rows"},
    {"torch", "nn's functions are built in: `randn([2, 3])`, not `torch.randn(2, 3)`"},
    {"view", "nn calls it `reshape(x, shape)`"},
    {"weight", "a layer's weight and bias are its fields `w` and `b`"},
    {"zero_grad", "there is nothing to zero: grad() returns new gradients on each call"},
};

}  // namespace

std::string habit_hint(std::string_view name) {
  static_assert(std::is_sorted(std::begin(kHabits), std::end(kHabits),
                               [](const Habit& a, const Habit& b) { return a.name < b.name; }));
  auto it = std::lower_bound(std::begin(kHabits), std::end(kHabits), name,
                             [](const Habit& h, std::string_view n) { return h.name < n; });
  if (it == std::end(kHabits) || it->name != name) return "";
  return "help: " + std::string(it->nn);
}

}  // namespace nn::frontend
