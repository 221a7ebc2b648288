// What the stdlib's optimizers take (SPEC §13, §17): each param once (a
// model that holds one twice lists it once), the arguments PyTorch's
// optimizers refuse, and rates and corrections in an f64 param's own
// precision. Expected values by hand, and from PyTorch 1.13 where named.
#include <doctest/doctest.h>

#include "script_test_util.h"

using nn::frontend::Interpreter;
using nntest::run;
using nntest::script_error;

TEST_CASE("a param a model holds twice is listed and updated once") {
  Interpreter vm;
  // Tied weights: loss = sum((x @ e @ e)^2) with x = [1, -1]. By hand,
  // u = x @ e = [-2, -2], y = u @ e = [-8, -12], dy = 2y = [-16, -24];
  // through the second use u^T dy = [[32, 48], [32, 48]], through the first
  // x^T (dy @ e^T) = [[-64, -144], [64, 144]]: the gradient [[-32, -96],
  // [96, 192]], and e - 0.001 of it (PyTorch: [[1.032, 2.096], [2.904, 3.808]]).
  // Listed twice, e moved twice as far.
  vm.run_code("a.nn",
              "let e = param(tensor([[1.0, 2.0], [3.0, 4.0]], f64))\n"
              "let m = {emb: {w: e}, head: {w: e}}\n"
              "let opt = sgd(params(m), lr=0.001)\n"
              "let x = tensor([[1.0, -1.0]], f64)\n"
              "minimize(sum((x @ m.emb.w @ m.head.w) ** 2), opt)");
  CHECK(run(vm, "len(params(m))") == "1");
  CHECK(run(vm, "e") == "f64[2, 2]\n[[1.032, 2.096],\n [2.904, 3.808]]");
  // A layer used twice in a Sequential: its weight and bias, once each.
  CHECK(run(vm, "let l = Linear(2, 2)\nlen(params(Sequential(l, relu, l)))") == "2");
  CHECK(run(vm, "len(adam(Sequential(l, relu, l)).m)") == "2");
}

TEST_CASE("optimizers refuse what PyTorch's refuse") {
  Interpreter vm;
  vm.run_code("a.nn", "let w = param(tensor([1.0, 2.0]))");
  // Weights made without param(): every step would do nothing.
  CHECK(script_error(vm, "sgd(params({w: tensor([1.0])}), lr=0.1)") ==
        "sgd: the list of params is empty (a tensor becomes a param through param(...))");
  CHECK(script_error(vm, "adam([])") == "adam: the list of params is empty (a tensor becomes a param through param(...))");
  CHECK(script_error(vm, "sgd(w, lr=0.1)") == "sgd: params are a list of tensors or a model, not a tensor");
  CHECK(run(vm, "len(sgd((w,), lr=0.1).params)") == "1");
  CHECK(script_error(vm, "sgd([w, w], lr=0.1)") ==
        "sgd: the list of params holds a tensor twice; each step would update it twice");
  CHECK(script_error(vm, "sgd([w], lr=-0.1)") == "sgd: invalid learning rate -0.1 (it must be 0 or more)");
  CHECK(script_error(vm, "sgd([w], lr=0.1, momentum=-1)") == "sgd: invalid momentum -1 (it must be 0 or more)");
  CHECK(script_error(vm, "sgd([w], lr=0.1, nesterov=true)") == "sgd: nesterov momentum needs a momentum above 0");
  CHECK(script_error(vm, "sgd([w], lr=0.1, momentum=0.9, nesterov=5)") ==
        "sgd: nesterov must be true or false, not 5");
  // b1 = 1 makes Adam's bias correction 1 - 1^t = 0: NaN params.
  CHECK(script_error(vm, "adam([w], lr=0.1, b1=1.0)") == "adam: invalid b1 1.0 (it must be in [0, 1))");
  CHECK(script_error(vm, "adamw([w], b2=1.5)") == "adamw: invalid b2 1.5 (it must be in [0, 1))");
  CHECK(script_error(vm, "adam([w], eps=-1)") == "adam: invalid eps -1 (it must be 0 or more)");
  CHECK(script_error(vm, "adagrad([w], lr=-1)") == "adagrad: invalid learning rate -1 (it must be 0 or more)");
  CHECK(script_error(vm, "rmsprop([w], alpha=-0.5)") == "rmsprop: invalid alpha -0.5 (it must be 0 or more)");
  CHECK(script_error(vm, "cosine_lr(-1, 10, 0.1)") == "cosine_lr: step and warmup must be 0 or more, not -1 and 0");
  CHECK(script_error(vm, "step_lr(3, 0.1, -2)") ==
        "step_lr: step must be 0 or more and step_size above 0, not 3 and -2");
  // What they take: a zero rate, an lr tensor, momentum with nesterov.
  CHECK(run(vm, "len(sgd([w], lr=tensor(0.0), momentum=0.9, nesterov=true).params)") == "1");
}

TEST_CASE("an f64 param steps by an f64 rate, beside f32 params too") {
  Interpreter vm;
  // 1 - 0.1 * 1 in double is 0.9; through an f32 rate it was 0.8999999985098839.
  vm.run_code("a.nn",
              "let a = param(tensor([1.0]))\n"
              "let b = param(tensor([1.0], f64))\n"
              "let o = sgd([a, b], lr=0.1)\n"
              "o.step([tensor([1.0]), tensor([1.0], f64)])");
  CHECK(run(vm, "item(b)") == "0.9");
  CHECK(run(vm, "a") == "f32[1] [0.9]");
  // Adam's bias corrections in f64 for f64 params: three steps of lr 0.1
  // on sum(b^3) from [1, -2]; PyTorch 1.13 in f64 gives
  // [0.7041537958715121, -2.3004937905256657] (with f32 corrections
  // 0.7041537919910319).
  vm.run_code("b.nn",
              "let c = param(tensor([1.0, -2.0], f64))\n"
              "let o2 = adam([c], lr=0.1)\n"
              "for i in 0..3 { minimize(sum(c * c * c), o2) }");
  CHECK(run(vm, "abs(item(c[0]) - 0.7041537958715121) < 1e-14 and abs(item(c[1]) + 2.3004937905256657) < 1e-14") ==
        "true");
}
