// The autodiff built-ins through the interpreter: the structure of grad's
// result, value_and_grad, no_grad restoring grad mode after an error, and
// the diagnostics of wrong arguments.
#include <doctest/doctest.h>

#include <string>

#include "backend/autograd.h"
#include "frontend/format.h"
#include "frontend/interpreter.h"
#include "script_test_util.h"

using namespace nn::frontend;
using namespace nntest;

TEST_CASE("grad answers in the structure of wrt") {
  Interpreter vm;
  vm.run_code("a.nn", "let x = param([1.0, 2.0])\nlet y = sum(x * x)");
  CHECK(to_str(vm.run_code("b.nn", "grad(y, x)")) == "f32[2] [2.0, 4.0]");
  Value t = vm.run_code("c.nn", "grad(y, (x, [x], {a: x}))");
  REQUIRE(t.is_tuple());
  REQUIRE(t.as_tuple()->items.size() == 3);
  CHECK(t.as_tuple()->items[1].is_list());
  Value r = t.as_tuple()->items[2];
  REQUIRE(r.is_record());
  REQUIRE(r.as_record()->fields.size() == 1);
  CHECK(symbol_name(r.as_record()->fields[0].first) == "a");
  CHECK(to_str(r.as_record()->fields[0].second) == "f32[2] [2.0, 4.0]");
  // An empty structure is refused, as PyTorch's "grad requires non-empty
  // inputs": the loss depends on none of it (SPEC §17), as when weights
  // were made without param().
  CHECK(script_error(vm, "grad(y, [])") ==
        "grad: wrt holds no tensor, so there is nothing to differentiate with respect to; make weights with "
        "param(...)");
  CHECK(script_error(vm, "grad(y, {})") ==
        "grad: wrt holds no tensor, so there is nothing to differentiate with respect to; make weights with "
        "param(...)");
}

TEST_CASE("value_and_grad calls f with its arguments") {
  Interpreter vm;
  vm.run_code("a.nn", "let w = param([3.0])\nlet vg = value_and_grad(fn(a, b) { sum(w * a + b) }, [w])");
  Value t = vm.run_code("c.nn", "vg(2.0, 1.0)");
  REQUIRE(t.is_tuple());
  CHECK(t.as_tuple()->items[0].as_tensor().item_double() == 7.0);
  CHECK(to_str(t.as_tuple()->items[1]) == "[f32[1] [2.0]]");
  CHECK(script_error(vm, "value_and_grad(fn() { (1, 2) }, w)()") ==
        "value_and_grad: the function must return a scalar tensor, not a tuple");
  CHECK(script_error(vm, "value_and_grad(3, w)") == "value_and_grad needs a function, not an int");
}

TEST_CASE("no_grad restores grad mode even when its function fails") {
  Interpreter vm;
  CHECK(script_error(vm, "no_grad(fn() { assert(false) })") == "assertion failed");
  CHECK(nn::backend::grad_enabled());
  vm.run_code("a.nn", "let x = param([1.0])\nlet y = no_grad(fn() { x * 2.0 })");
  CHECK(to_str(vm.run_code("b.nn", "requires_grad(y)")) == "false");
  CHECK(to_str(vm.run_code("c.nn", "no_grad(fn() { 41 + 1 })")) == "42");
}

TEST_CASE("autodiff diagnostics") {
  Interpreter vm;
  vm.run_code("a.nn", "let x = param([1.0, 2.0])");
  CHECK(script_error(vm, "grad(x * 2.0, x)") ==
        "grad needs a scalar loss, not f32[2]; reduce it first, e.g. with sum() or mean()");
  CHECK(script_error(vm, "grad(sum(x), [x, 3])") ==
        "wrt must be a tensor or a list, tuple or record of tensors, but it holds an int");
  CHECK(script_error(vm, "grad(none, x)") == "grad needs a scalar tensor as the loss, not none");
  CHECK(script_error(vm, "param([1, 2])") ==
        "param needs a float tensor, not i64[2]; convert it first, e.g. astype(x, f32)");
  CHECK(script_error(vm, "no_grad(1)") == "no_grad needs a function to call, not an int");
}

// SPEC §17: no silent no-ops.
TEST_CASE("grad of a loss that depends on none of wrt is a diagnostic") {
  Interpreter vm;
  vm.run_code("a.nn", "let w = tensor([1.0, 2.0])\nlet p = param([3.0])\nlet m = {l: {w: tensor([1.0])}}");
  CHECK(script_error(vm, "grad(sum(w * w), w)") ==
        "grad: `w` (f32[2]) is not a param, so autodiff treats it as a constant and the loss cannot depend on "
        "it; make weights with param(...)");
  CHECK(script_error(vm, "grad(sum(w), [m.l.w, w])") ==
        "grad: `m.l.w` (f32[1]) and the others of wrt are not a param, so autodiff treats them as a constant and "
        "the loss cannot depend on them; make weights with param(...)");
  CHECK(script_error(vm, "grad(sum(detach(p) * 2.0), p)") ==
        "grad: the loss does not depend on the tensor it is differentiated with respect to; was it computed "
        "without them, under no_grad, or from detach()ed values?");
  // One unused entry among used ones still gets zeros.
  CHECK(to_str(vm.run_code("b.nn", "grad(sum(p * 2.0), [p, w])")) == "[f32[1] [2.0], f32[2] [0.0, 0.0]]");
}

TEST_CASE("grad of a value a graph returned is a diagnostic") {
  Interpreter vm;
  vm.run_code("a.nn", "let p = param([3.0])\ngraph f() { sum(p * p) }");
  CHECK(script_error(vm, "grad(f(), p)") ==
        "grad: the loss was computed by a graph, and a graph's results carry no autodiff history; call grad (or "
        "minimize) inside the graph");
  CHECK(to_str(vm.run_code("b.nn", "graph h() { grad(sum(p * p), p) }\nh()")) == "f32[1] [6.0]");
}
