// Values that outlive their interpreter, and values of one interpreter used
// through another: never undefined behaviour, always nn::Error naming both.
#include <doctest/doctest.h>
#include <nn/nn.h>

#include <sstream>
#include <string>
#include <vector>

#include "embed/embed_helpers.h"

using nntest::embed_error_of;
using nntest::has;
using nntest::quiet_options;

TEST_CASE("a function value outliving its interpreter: readable, and calling it is an nn::Error") {
  std::ostringstream out;
  nn::Value f, lambda;
  {
    nn::Interpreter a(quiet_options(out));
    f = a.eval("fn double_it(x) { x * 2 }\ndouble_it");
    lambda = a.eval("fn (x) { x + 1 }");
    CHECK(a.call(f, 21).as_int() == 42);
  }
  CHECK(f.is_function());
  CHECK(f.str() == "<fn double_it>");
  nn::Interpreter b(quiet_options(out));
  nn::Error e = embed_error_of([&] { b.call(f, 1); });
  CHECK(has(e.message(), "cannot call fn `double_it`"));
  CHECK(has(e.message(), "which was destroyed"));
  e = embed_error_of([&] { b.call(lambda, 1); });
  CHECK(has(e.message(), "a lambda"));
  // Through a script of another interpreter: a diagnostic at its call.
  b.set("g", f);
  e = embed_error_of([&] { b.eval("1 + g(2)"); });
  CHECK(has(e.message(), "which was destroyed"));
  CHECK(e.file() == "<eval>");
  CHECK(e.line() == 1);
  CHECK(e.column() == 5);
  CHECK(b.eval("3 * 3").as_int() == 9);  // b goes on
}

TEST_CASE("a layer record outliving its interpreter keeps its tensors; calling it is an nn::Error") {
  std::ostringstream out;
  nn::Value layer;
  std::vector<double> w;
  {
    nn::Interpreter a(quiet_options(out));
    layer = a.eval("Linear(2, 3)");
    w = layer.field("w").tensor().to_vector();
  }
  REQUIRE(layer.is_record());
  CHECK(layer.field("kind").as_string() == "Linear");
  CHECK(layer.field("w").tensor().to_vector() == w);
  CHECK(layer.field("w").tensor().shape() == std::vector<int64_t>{2, 3});
  CHECK(has(layer.str(), "Linear"));
  nn::Interpreter b(quiet_options(out));
  std::vector<float> x{1, 2};
  nn::Error e = embed_error_of([&] { b.call(layer, nn::Tensor::from_blob(x.data(), {1, 2})); });
  CHECK(has(e.message(), "fn `_linear_call`"));
  CHECK(has(e.message(), "destroyed"));
}

TEST_CASE("a function of a live interpreter called through another is refused, naming both") {
  std::ostringstream out;
  nn::Interpreter a(quiet_options(out)), b(quiet_options(out));
  nn::Value f = a.eval("fn triple(x) { x * 3 }\ntriple");
  nn::Error e = embed_error_of([&] { b.call(f, 1); });
  CHECK(has(e.message(), "cannot call fn `triple` in interpreter #"));
  CHECK(has(e.message(), "it belongs to interpreter #"));
  CHECK(!has(e.message(), "destroyed"));
  nn::Value layer = a.eval("Linear(2, 2)");
  std::vector<float> x{1, 2};
  e = embed_error_of([&] { b.call(layer, nn::Tensor::from_blob(x.data(), {1, 2})); });
  CHECK(has(e.message(), "belongs to interpreter #"));
  // Through value_and_grad made in a, called by b.
  nn::Value vg = a.eval("let p = param(ones([2]))\nvalue_and_grad(fn (v) { sum(p * v) }, p)");
  e = embed_error_of([&] { b.call(vg, nn::Tensor::from_blob(x.data(), {2})); });
  CHECK(has(e.message(), "belongs to interpreter #"));
  // The owner still runs them.
  CHECK(a.call(f, 5).as_int() == 15);
  nn::Value r = a.call(vg, nn::Tensor::from_blob(x.data(), {2}));
  CHECK(r.items()[0].tensor().item() == doctest::Approx(3.0));
}

TEST_CASE("a moved-from interpreter is an nn::Error, not a crash") {
  std::ostringstream out;
  nn::Interpreter a(quiet_options(out));
  nn::Interpreter b = std::move(a);
  CHECK(b.eval("2 + 2").as_int() == 4);
  nn::Error e = embed_error_of([&] { a.eval("1"); });  // NOLINT(bugprone-use-after-move): the point
  CHECK(has(e.message(), "moved from"));
  CHECK_THROWS_AS(a.get("x"), nn::Error);
  CHECK_THROWS_AS(a.set("x", 1), nn::Error);
}

TEST_CASE("code defined by eval keeps working after later evals free theirs") {
  std::ostringstream out;
  nn::Interpreter vm(quiet_options(out));
  vm.eval("fn inc(x) { x + 1 }");
  nn::Value add3 = vm.eval("fn (x) { x + 3 }");
  vm.eval("fn bad(x) {\n  x + \"text\"\n}");
  for (int i = 0; i < 50; ++i) CHECK(vm.eval("1").as_int() == 1);
  CHECK(vm.call("inc", 1).as_int() == 2);
  CHECK(vm.call(add3, 1).as_int() == 4);
  nn::Error e = embed_error_of([&] { vm.call("bad", 1); });
  CHECK(e.file() == "<eval>");
  CHECK(e.line() == 2);
  CHECK(has(e.what(), "x + \"text\""));  // the source line is still there to show
  // A failing eval's diagnostic shows its own source line.
  e = embed_error_of([&] { vm.eval("let q = 1\nq + nope"); });
  CHECK(e.line() == 2);
  CHECK(has(e.what(), "q + nope"));
}
