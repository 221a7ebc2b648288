// SPEC §17: what PyTorch and NumPy habits meet in nn — a message that says
// what nn calls the thing — and the pieces added so that the habit works:
// range with a step, reversed, rand_like/randn_like, `reduction` on the
// losses, `none` and integer tensors in an index.
#include <doctest/doctest.h>

#include "script_test_util.h"

using nn::frontend::Interpreter;
using nntest::run;
using nntest::script_error;
using nntest::script_error_notes;

TEST_CASE("PyTorch habits get a message naming what nn calls the thing") {
  Interpreter vm;
  vm.run_code("a.nn", "let x = zeros([4, 64])\nlet w = param(zeros([2]))");
  CHECK(script_error_notes(vm, "x.size(0)") ==
        "a tensor f32[4, 64] has no attribute `size`, and no function `size` is in scope\n"
        "help: a tensor's dims are `x.shape` (one of them: `x.shape[0]`); `x.size` is the element count");
  CHECK(script_error(vm, "randn(64, 8)") == "randn takes the shape as one list: randn([64, 8])");
  CHECK(script_error(vm, "zeros(2, 3)") == "zeros takes the shape as one list: zeros([2, 3])");
  CHECK(script_error(vm, "x.float()") ==
        "float() gives a host number from a number or a one-element tensor, not from f32[4, 64]; to change a "
        "tensor's dtype write astype(x, f32)");
  CHECK(script_error_notes(vm, "x.long()") ==
        "a tensor f32[4, 64] has no attribute `long`, and no function `long` is in scope\n"
        "help: change a tensor's dtype with `astype(x, i64)`");
  CHECK(script_error_notes(vm, "cat([x, x])") == "unknown name `cat`\nhelp: nn calls it `concat(xs, axis=0)`");
  CHECK(script_error_notes(vm, "ReLU()") ==
        "unknown name `ReLU`\nhelp: activations are functions: `relu(x)`; a Sequential takes `relu` itself");
  CHECK(script_error_notes(vm, "let total = 0.0\nfor i in 0..2 { total += sum(w * w) }") ==
        "`+=` would overwrite f32[], which autodiff is tracking\n"
        "help: to keep only the value, write `x += item(v)` (a number) or use detach(v); `x = x + v` makes a new "
        "tensor that keeps autodiff's history of every step");
  // An optimizer given a model takes its params.
  CHECK(run(vm, "let m = Linear(2, 1)\nlen(adam(m).params) + len(sgd(m, 0.1).params)") == "4");
  // A typo still gets its guess.
  CHECK(script_error_notes(vm, "concta([x])") == "unknown name `concta`\nhelp: did you mean `concat`?");
}

TEST_CASE("range with a step and reversed, as in Python") {
  Interpreter vm;
  CHECK(run(vm, "range(0, 10, 3)") == "range(0, 10, 3)");
  CHECK(run(vm, "len(range(10, 0, -3))") == "4");
  CHECK(run(vm, "reversed(range(10, 0, -3))") == "[1, 4, 7, 10]");
  CHECK(run(vm, "let s = []\nfor i in range(5, 0, -2) { append(s, i) }\ns") == "[5, 3, 1]");
  CHECK(run(vm, "range(0, 10, 4)[2]") == "8");
  CHECK(run(vm, "len(range(0, 0, 1))") == "0");
  CHECK(run(vm, "reversed([1, \"a\", 2.5])") == "[2.5, \"a\", 1]");
  CHECK(run(vm, "reversed(\"ab\")") == "[\"b\", \"a\"]");
  CHECK(script_error(vm, "range(0, 4, 0)") == "range step cannot be zero");
  CHECK(script_error(vm, "reversed(3)") ==
        "reversed() needs lists, tuples, ranges, strings or tensors of 1 or more axes, not an int");
}

TEST_CASE("rand_like and randn_like take x's shape and dtype") {
  Interpreter vm;
  CHECK(run(vm, "randn_like(zeros([2, 3])).shape") == "[2, 3]");
  CHECK(run(vm, "rand_like(zeros([2], f64)).dtype") == "f64");
  CHECK(run(vm, "let r = rand_like(zeros([1000]))\nmin(r) >= 0.0 and max(r) < 1.0") == "true");
  CHECK(script_error(vm, "randn_like(zeros([2], i64))") == "random values like i64[2] need a float dtype; pass dtype=f32");
}

TEST_CASE("losses take reduction = mean, sum or none") {
  Interpreter vm;
  vm.run_code("a.nn", "let p = tensor([1.0, 3.0])\nlet t = tensor([0.0, 1.0])");
  CHECK(run(vm, "mse_loss(p, t, reduction=\"none\")") == "f32[2] [1.0, 4.0]");
  CHECK(run(vm, "mse_loss(p, t, reduction=\"sum\")") == "5.0");
  CHECK(run(vm, "mse_loss(p, t)") == "2.5");
  CHECK(run(vm, "l1_loss(p, t, reduction=\"sum\")") == "3.0");
  // bce at logit 0 is log 2 whatever the target.
  CHECK(run(vm, "bce_with_logits(tensor([0.0, 0.0]), t, reduction=\"none\")") == "f32[2] [0.6931472, 0.6931472]");
  // Cross-entropy of uniform logits over 3 classes is log 3 per example.
  vm.run_code("b.nn", "let z = zeros([2, 3])\nlet ids = tensor([0, 2])");
  CHECK(run(vm, "softmax_cross_entropy(z, ids, reduction=\"none\")") == "f32[2] [1.0986123, 1.0986123]");
  CHECK(run(vm, "softmax_cross_entropy(z, ids, reduction=\"sum\")") == "2.1972246");
  CHECK(run(vm, "nll_loss(log_softmax(z), ids, reduction=\"none\")") == "f32[2] [1.0986123, 1.0986123]");
  CHECK(run(vm, "softmax_cross_entropy(zeros([3]), tensor(1), reduction=\"none\")") == "1.0986123");
  CHECK(script_error(vm, "mse_loss(p, t, reduction=\"avg\")") == "reduction must be \"mean\", \"sum\" or \"none\", not \"avg\"");
  CHECK(script_error(vm, "softmax_cross_entropy(z, tensor([0, 3]), reduction=\"none\")").find("out of range") !=
        std::string::npos);
  // The gradient of the per-example losses: softmax - one_hot per row.
  CHECK(run(vm, "let w = param(z)\ngrad(sum(softmax_cross_entropy(w, ids, reduction=\"none\")), w)") ==
        "f32[2, 3]\n[[-0.6666667, 0.3333333,  0.3333333],\n [ 0.3333333, 0.3333333, -0.6666667]]");
}

TEST_CASE("`none` in an index inserts an axis; integer tensors index as NumPy's advanced indexing") {
  Interpreter vm;
  vm.run_code("a.nn", "let x = reshape(arange(12), [3, 4])\nlet y = reshape(arange(24), [2, 3, 4])");
  CHECK(run(vm, "x[:, none].shape") == "[3, 1, 4]");
  CHECK(run(vm, "x[none, :, none, 1].shape") == "[1, 3, 1]");
  // Paired: element (i, ids[i]) of each row.
  CHECK(run(vm, "x[arange(3), tensor([0, 1, 3])]") == "i64[3] [0, 5, 11]");
  // Broadcast together: rows [[0], [2]] with columns [1, 3].
  CHECK(run(vm, "x[tensor([[0], [2]]), tensor([1, 3])]") == "i64[2, 2]\n[[1,  3],\n [9, 11]]");
  // Adjacent index axes keep their place; separated ones go first.
  CHECK(run(vm, "y[:, tensor([0, 2]), tensor([1, 3])]") == "i64[2, 2]\n[[ 1, 11],\n [13, 23]]");
  CHECK(run(vm, "y[tensor([1, 0]), :, tensor([3, 0])]") == "i64[2, 3]\n[[15, 19, 23],\n [ 0,  4,  8]]");
  // An int beside index tensors is one of them (NumPy): separated, so first.
  CHECK(run(vm, "y[1, :, tensor([0])].shape") == "[1, 3]");
  CHECK(run(vm, "y[-1, tensor([0]), -1]") == "i64[1] [15]");
  // The same inside a graph, whose ids are traced (the int's range is known).
  vm.run_code("g.nn", "graph pick(y, ids) { return y[1, :, ids] }");
  CHECK(run(vm, "pick(y, tensor([0, 3]))") == "i64[2, 3]\n[[12, 16, 20],\n [15, 19, 23]]");
  CHECK(run(vm, "x[tensor([0, 2])]") == "i64[2, 4]\n[[0, 1,  2,  3],\n [8, 9, 10, 11]]");
  CHECK(run(vm, "let w = param(ones([3, 4]))\ngrad(sum(w[arange(3), tensor([0, 1, 1])]), w)") ==
        "f32[3, 4]\n[[1.0, 0.0, 0.0, 0.0],\n [0.0, 1.0, 0.0, 0.0],\n [0.0, 1.0, 0.0, 0.0]]");
  CHECK(script_error(vm, "x[tensor([0]), tensor([4])]") == "index tensor 1 holds 4, out of range for an axis of size 4");
  CHECK(script_error(vm, "x[1, 2, tensor([0])]") == "too many indices for i64[3, 4]: 3 given, 2 dimensions");
  CHECK(script_error(vm, "x[tensor([0.5])]") ==
        "an index tensor must be an integer tensor, got f32[1]; convert it with astype(ids, i64)");
  CHECK(script_error(vm, "x[none] = 1") == "assigning by index takes ints and slices, not none");
}
