// bind_args: positional, keyword and default arguments bound to parameters,
// and the diagnostics of calls that do not fit, the same for nn functions
// and built-ins.
#include <doctest/doctest.h>

#include <string>

#include "frontend/bind_args.h"
#include "frontend/interpreter.h"
#include "script_test_util.h"

using namespace nn::frontend;
using namespace nntest;

namespace {

// A built-in's parameter list: zeros(shape, dtype=f32).
std::vector<Parameter> zeros_params() {
  std::vector<Parameter> ps{{"shape", intern("shape"), std::nullopt, nullptr},
                            {"dtype", intern("dtype"), Value(nn::backend::DType::f32), nullptr}};
  return ps;
}

CallArgs call_of(std::vector<Value> positional, std::vector<std::pair<const char*, Value>> keywords = {}) {
  CallArgs call;
  call.positional = std::move(positional);
  for (auto& [name, v] : keywords) call.keywords.push_back(KeywordArg{intern(name), std::move(v), {}, {}});
  return call;
}

std::string bind_error(const Parameters& params, CallArgs call, Interpreter& vm) {
  try {
    bind_args(params, call, vm, nullptr);
  } catch (const ScriptError& e) {
    return e.diagnostics().front().message;
  }
  return "";
}

// The first diagnostic of `code`: its message, notes and where it points.
struct Raised {
  std::string message, notes, at;
};
Raised raised(Interpreter& vm, const std::string& code) {
  try {
    vm.run_code("t.nn", code);
  } catch (const ScriptError& e) {
    const Diagnostic& d = e.diagnostics().front();
    Raised r{d.message, "", vm.sources().location(d.span)};
    for (auto& n : d.notes) r.notes += n + "\n";
    return r;
  }
  return {};
}

}  // namespace

TEST_CASE("bind_args: positional, then keywords, then defaults") {
  Interpreter vm;
  const auto ps = zeros_params();
  const Parameters zeros{"zeros", ps, Parameters::Rest::none, 0};

  CallArgs call = call_of({Value(int64_t(3))});
  BoundArgs b = bind_args(zeros, call, vm, nullptr);
  REQUIRE(b.values.size() == 2);
  CHECK(b.values[0].as_int() == 3);
  CHECK(b.values[1].as_dtype() == nn::backend::DType::f32);  // the default
  CHECK(b.given[0]);
  CHECK_FALSE(b.given[1]);

  // Keywords in any order land on their parameters.
  call = call_of({}, {{"dtype", Value(nn::backend::DType::i32)}, {"shape", Value(int64_t(4))}});
  b = bind_args(zeros, call, vm, nullptr);
  CHECK(b.values[0].as_int() == 4);
  CHECK(b.values[1].as_dtype() == nn::backend::DType::i32);
  CHECK(b.given[0]);
  CHECK(b.given[1]);
  CHECK(b.rest.empty());
}

TEST_CASE("bind_args: extra positional arguments kept apart or collected in a list") {
  Interpreter vm;
  std::vector<Parameter> ps{{"sep", intern("sep"), Value(std::string(" ")), nullptr}};
  const Parameters apart{"print", ps, Parameters::Rest::apart, 0};
  CallArgs call = call_of({Value(int64_t(1)), Value(int64_t(2)), Value(int64_t(3))});
  BoundArgs b = bind_args(apart, call, vm, nullptr);
  REQUIRE(b.values.size() == 1);
  CHECK(b.values[0].as_int() == 1);
  REQUIRE(b.rest.size() == 2);
  CHECK(b.rest[1].as_int() == 3);

  const Parameters list{"`f`", ps, Parameters::Rest::list, intern("rest")};
  call = call_of({Value(int64_t(1)), Value(int64_t(2)), Value(int64_t(3))});
  b = bind_args(list, call, vm, nullptr);
  REQUIRE(b.values.size() == 2);
  REQUIRE(b.values[1].is_list());
  CHECK(b.values[1].as_list()->items.size() == 2);
  // No extra arguments: an empty list.
  call = call_of({Value(int64_t(1))});
  b = bind_args(list, call, vm, nullptr);
  CHECK(b.values[1].as_list()->items.empty());
}

TEST_CASE("bind_args: each wrong call has its message") {
  Interpreter vm;
  const auto ps = zeros_params();
  const Parameters zeros{"zeros", ps, Parameters::Rest::none, 0};
  CHECK(bind_error(zeros, call_of({Value(1), Value(2), Value(3)}), vm) ==
        "zeros takes at most 2 arguments but 3 were given");
  CHECK(bind_error(zeros, call_of({}), vm) == "zeros is missing its argument `shape`");
  CHECK(bind_error(zeros, call_of({Value(1)}, {{"dtyp", Value()}}), vm) ==
        "unknown keyword argument `dtyp` for zeros");
  CHECK(bind_error(zeros, call_of({Value(1)}, {{"shape", Value(2)}}), vm) ==
        "argument `shape` of zeros is given twice");

  // Without defaults no "at most"; one argument "was" given.
  std::vector<Parameter> none;
  const Parameters nothing{"`g`", none, Parameters::Rest::none, 0};
  CHECK(bind_error(nothing, call_of({Value(1)}), vm) == "`g` takes 0 arguments but 1 was given");

  std::vector<Parameter> one{{"a", intern("a"), std::nullopt, nullptr}};
  const Parameters rest{"`h`", one, Parameters::Rest::list, intern("more")};
  CHECK(bind_error(rest, call_of({Value(1)}, {{"more", Value(2)}}), vm) ==
        "the rest parameter `*more` of `h` cannot be given by keyword");
}

TEST_CASE("bind_args: nn functions' defaults are evaluated at each call, in their scope") {
  Interpreter vm;
  vm.run_code("t.nn", "let n = 1\nfn f(a, b=n * 10) { a + b }\n");
  CHECK(run(vm, "f(1)") == "11");
  vm.run_code("t.nn", "n = 2");
  CHECK(run(vm, "f(1)") == "21");
  CHECK(run(vm, "f(1, b=0)") == "1");
  CHECK(run(vm, "f(b=5, a=1)") == "6");
  // A default that is not needed is not evaluated.
  vm.run_code("t.nn", "fn g(a=assert(false, \"evaluated\")) { a }\n");
  CHECK(run(vm, "g(3)") == "3");
}

TEST_CASE("bind_args: a built-in and an nn function give the same message for the same mistake") {
  Interpreter vm;
  // A name as long as `zeros`, so that the diagnostics point at the same columns.
  vm.run_code("t.nn", "fn zero2(shape, dtype=f32) { zeros(shape, dtype) }\n");
  struct {
    const char* builtin;
    const char* nn;
    const char* builtin_message;
    const char* nn_message;
  } cases[] = {
      {"zeros([2], dtyp=f32)", "zero2([2], dtyp=f32)", "unknown keyword argument `dtyp` for zeros",
       "unknown keyword argument `dtyp` for `zero2`"},
      {"zeros([2], f32, 1)", "zero2([2], f32, 1)", "zeros takes at most 2 arguments but 3 were given",
       "`zero2` takes at most 2 arguments but 3 were given"},
      {"zeros()", "zero2()", "zeros is missing its argument `shape`", "`zero2` is missing its argument `shape`"},
      {"zeros([2], shape=[3])", "zero2([2], shape=[3])", "argument `shape` of zeros is given twice",
       "argument `shape` of `zero2` is given twice"},
  };
  for (auto& c : cases) {
    CAPTURE(std::string(c.builtin));
    Raised b = raised(vm, c.builtin), f = raised(vm, c.nn);
    CHECK(b.message == c.builtin_message);
    CHECK(f.message == c.nn_message);
    CHECK(b.notes == f.notes);
    CHECK(b.at == f.at);
  }
  CHECK(raised(vm, "zeros([2], dtyp=f32)").notes == "help: did you mean `dtype`?\n");
  // Graph functions bind as nn functions do, before any trace.
  vm.run_code("t.nn", "graph zerog(shape, dtype=f32) { zeros(shape, dtype) }\n");
  CHECK(raised(vm, "zerog([2], dtyp=f32)").message == "unknown keyword argument `dtyp` for `zerog`");
  CHECK(raised(vm, "zerog([2], dtyp=f32)").notes == "help: did you mean `dtype`?\n");
  // PyTorch's names of nn's parameters, and the list where nothing is close.
  CHECK(raised(vm, "mean(ones([2, 2]), dim=1)").notes == "help: did you mean `axis`?\n");
  CHECK(raised(vm, "clip(ones([2]), min=0.0, max=0.5)").notes == "help: did you mean `lo`?\n");
  CHECK(raised(vm, "sum(ones([2]), foo=1)").notes == "help: it takes `x`, `axis` and `keepdims`\n");
  CHECK(raised(vm, "zerog()").message == "`zerog` is missing its argument `shape`");
  vm.run_code("t.nn", "graph scaled(x, k=2) { x * k }\n");
  CHECK(run(vm, "scaled(ones([2], dtype=i32))") == "i32[2] [2, 2]");
  CHECK(run(vm, "scaled(k=3, x=ones([2], dtype=i32))") == "i32[2] [3, 3]");
}

TEST_CASE("bind_args: where the diagnostics point") {
  Interpreter vm;
  vm.run_code("t.nn", "fn f(a, b=1) { a }\nfn r(*xs) { xs }\n");
  // A repeated argument: at it, `name=value`.
  CHECK(raised(vm, "f(1, a=2)").at == "t.nn:1:6");
  CHECK(raised(vm, "r(1, xs=2)").at == "t.nn:1:6");
  CHECK(raised(vm, "r(1, xs=2)").message == "the rest parameter `*xs` of `r` cannot be given by keyword");
  // The call as a whole when no one argument is at fault.
  CHECK(raised(vm, "  f(1, 2, 3)").at == "t.nn:1:3");
  CHECK(raised(vm, "  f()").at == "t.nn:1:3");
  CHECK(raised(vm, "  f(1, c=2)").at == "t.nn:1:3");
  // A method call binds its receiver first: `x.f(a=1)` gives `a` twice.
  CHECK(raised(vm, "let x = 1\nx.f(a=1)").message == "argument `a` of `f` is given twice");
  // Lambdas are named "function".
  CHECK(raised(vm, "(fn(a) { a })()").message == "function is missing its argument `a`");
}

TEST_CASE("closest_name: the nearest typo, none past 100 characters") {
  using nn::frontend::closest_name;
  CHECK(closest_name("lenght", {"len", "length", "lengths"}) == "length");
  CHECK(closest_name("abcdef", {"abcdefghijk", "abcdeg"}) == "abcdeg");  // one edit, not five
  CHECK(closest_name("abcdef", {"uvwxyz"}).empty());                       // six edits: no typo
  // The distance table is quadratic in the lengths: a 40,000-character
  // name took 29 s and 12 GB. Past 100 characters nothing is suggested.
  CHECK(closest_name(std::string(100, 'x'), {std::string(99, 'x')}) == std::string(99, 'x'));
  CHECK(closest_name(std::string(5000, 'x'), {std::string(4999, 'x')}).empty());
}
