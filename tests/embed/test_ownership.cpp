// Values that outlive their interpreter, and values of one interpreter used
// through another: never undefined behaviour, always nn::Error naming both.
#include <doctest/doctest.h>
#include <nn/nn.h>

#include <memory>
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

TEST_CASE("a host function runs only in the interpreter that defined it") {
  std::ostringstream out;
  nn::Interpreter a(quiet_options(out)), b(quiet_options(out));
  int runs = 0;
  a.define("who", [&runs](nn::Args) -> nn::Value {
    ++runs;
    return "a's host function";
  });
  nn::Value hf = a.get("who");
  REQUIRE(hf.is_function());
  nn::Error e = embed_error_of([&] { b.call(hf); });
  CHECK(has(e.message(), "cannot call host function `who` in interpreter #"));
  CHECK(has(e.message(), "it belongs to interpreter #"));
  CHECK(!has(e.message(), "destroyed"));
  // Through a script of the other interpreter: a diagnostic at its call.
  b.set("w", hf);
  e = embed_error_of([&] { b.eval("1 + w()"); });
  CHECK(has(e.message(), "cannot call host function `who`"));
  CHECK(e.file() == "<eval>");
  CHECK(e.column() == 5);
  // As a method: `v.w()` calls w(v).
  e = embed_error_of([&] { b.eval("let v = 2\nv.w()"); });
  CHECK(has(e.message(), "belongs to interpreter #"));
  CHECK(runs == 0);
  // The owner still runs it, by name and as a value.
  CHECK(a.call(hf).as_string() == "a's host function");
  CHECK(a.eval("who()").as_string() == "a's host function");
  CHECK(runs == 2);
  CHECK(b.eval("3 * 3").as_int() == 9);  // b goes on
}

TEST_CASE("a host function outliving its interpreter is refused, not run against the freed one") {
  std::ostringstream out;
  auto a = std::make_unique<nn::Interpreter>(quiet_options(out));
  nn::Interpreter* owner = a.get();
  // Holds its interpreter, as host functions that call back in do.
  a->define("twice_in_a", [owner](nn::Args args) -> nn::Value { return owner->eval("2").as_int() * args.integer(0); });
  CHECK(a->eval("twice_in_a(3)").as_int() == 6);
  nn::Value hf = a->get("twice_in_a");
  a.reset();
  CHECK(hf.is_function());
  CHECK(hf.str() == "<built-in fn twice_in_a>");
  nn::Interpreter b(quiet_options(out));
  nn::Error e = embed_error_of([&] { b.call(hf, 7); });
  CHECK(has(e.message(), "cannot call host function `twice_in_a`"));
  CHECK(has(e.message(), "which was destroyed"));
  b.set("t", hf);
  e = embed_error_of([&] { b.eval("t(7)"); });
  CHECK(has(e.message(), "which was destroyed"));
  CHECK(b.eval("1 + 1").as_int() == 2);
}

TEST_CASE("built-in functions are no interpreter's: they run through any") {
  std::ostringstream out_a, out_b;
  nn::Value print_fn, len_fn;
  {
    nn::Interpreter a(quiet_options(out_a));
    print_fn = a.get("print");
    len_fn = a.get("len");
  }
  nn::Interpreter b(quiet_options(out_b));
  b.call(print_fn, "hello");
  CHECK(out_b.str() == "hello\n");
  CHECK(out_a.str().empty());
  CHECK(b.call(len_fn, nn::Value::list({1, 2, 3})).as_int() == 3);
  b.set("l", len_fn);
  CHECK(b.eval("l([1, 2])").as_int() == 2);
}
