// The embedding API (include/nn/nn.h), through the shared library hosts link:
// values both ways, tensors without copies, host functions, and every bad
// input ending as an nn::Error while the host keeps running.
#include <doctest/doctest.h>
#include <nn/nn.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mapped_libraries.h"

namespace {

// The nn::Error f throws (failing the test when it throws none).
nn::Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const nn::Error& e) {
    return e;
  }
  FAIL("no nn::Error was thrown");
  return nn::Error("", "");
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

nn::Options quiet(std::ostringstream& out) {
  nn::Options o;
  o.threads = 1;
  o.out = &out;
  return o;
}

const char* kModel = R"(
let w = [[1.0, 0.0, -1.0],
         [0.5, 2.0, 0.0]]
fn predict(x) { x @ w }
fn twice(v) { v * 2 }
let table = [10.0, 20.0, 30.0]
fn pick(ids) { table[ids] }
)";

}  // namespace

TEST_CASE("eval returns the last expression and values convert both ways") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  CHECK(vm.eval("1 + 2").as_int() == 3);
  CHECK(vm.eval("1.5 * 2").as_float() == doctest::Approx(3.0));
  CHECK(vm.eval("\"a\" + \"b\"").as_string() == "ab");
  CHECK(vm.eval("true").as_bool());
  CHECK(vm.eval("let q = 1").is_none());
  nn::Value l = vm.eval("[1, 2, 3]");
  CHECK((l.is_list() || l.is_tensor()));
  nn::Value r = vm.eval("{a: 1, b: \"x\"}");
  REQUIRE(r.is_record());
  CHECK(r.field("a").as_int() == 1);
  CHECK(r.fields().size() == 2);
  vm.set("t", nn::Value::tuple({1, "two", 3.0}));
  CHECK(vm.eval("t[1]").as_string() == "two");
  vm.set("rec", nn::Value::record({{"k", 7}}));
  CHECK(vm.eval("rec.k + 1").as_int() == 8);
  vm.set("lst", nn::Value::list({1, 2}));
  CHECK(vm.eval("len(lst)").as_int() == 2);
  vm.eval("print(\"hello\")");
  CHECK(out.str() == "hello\n");
  CHECK(vm.get("q").is_int());
  CHECK(vm.has("q"));
  CHECK_FALSE(vm.has("nope"));
}

TEST_CASE("tensors: from_blob shares the host's memory, copy_from copies") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  std::vector<float> buf = {1, 2, 3, 4};
  vm.set("x", nn::Tensor::from_blob(buf.data(), {2, 2}, nn::f32));
  CHECK(vm.eval("x.sum()").tensor().item() == doctest::Approx(10));
  buf[0] = 11;  // no copy: the script sees the change
  CHECK(vm.eval("x.sum()").tensor().item() == doctest::Approx(20));

  std::vector<double> src = {1, 2, 3};
  nn::Tensor c = nn::Tensor::copy_from(src.data(), {3}, nn::f64);
  src[0] = 100;
  CHECK(c.data<double>()[0] == 1.0);
  CHECK(c.dtype() == nn::f64);
  CHECK(c.shape() == std::vector<int64_t>{3});
  CHECK(c.type() == "f64[3]");
  CHECK(c.device() == "cpu");

  nn::Tensor y = vm.eval("x * 2").tensor();
  CHECK(y.shape() == std::vector<int64_t>{2, 2});
  CHECK(y.data<float>()[0] == 22.0f);
  CHECK(y.to_vector() == std::vector<double>{22, 4, 6, 8});
}

TEST_CASE("call by name and by value; function values round-trip") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  vm.eval(kModel);
  std::vector<float> in = {1, 2, 3, 4};
  nn::Value y = vm.call("predict", nn::Tensor::from_blob(in.data(), {2, 2}, nn::f32));
  std::vector<float> got(y.tensor().data<float>(), y.tensor().data<float>() + 6);
  CHECK(got == std::vector<float>{2, 4, -1, 5, 8, -3});
  nn::Value twice = vm.get("twice");
  CHECK(twice.is_function());
  CHECK(vm.call(twice, 21).as_int() == 42);
}

TEST_CASE("host functions are callable from scripts") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  vm.define("add", [](nn::Args a) -> nn::Value {
    a.expect(2);
    return a.number(0) + a.number(1);
  });
  vm.define("shape_of", [](nn::Args a) -> nn::Value {
    a.expect(1);
    std::vector<nn::Value> dims;
    for (int64_t d : a.tensor(0).shape()) dims.push_back(d);
    return nn::Value::list(dims);
  });
  vm.define("greet", [](nn::Args a) -> nn::Value { return "hi " + a.str(0); });
  CHECK(vm.eval("add(1, 2.5)").as_float() == doctest::Approx(3.5));
  CHECK(vm.eval("shape_of(zeros([2, 3]))").items().size() == 2);
  CHECK(vm.eval("greet(\"nn\")").as_string() == "hi nn");
  // Visible inside script functions too.
  vm.eval("fn f(v) { add(v, 1) }");
  CHECK(vm.eval("f(1)").as_float() == doctest::Approx(2));
}

TEST_CASE("a host function's exception becomes a diagnostic at the script's call") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  vm.define("boom", [](nn::Args) -> nn::Value { throw std::runtime_error("kaboom"); });
  vm.define("weird", [](nn::Args) -> nn::Value { throw 42; });
  nn::Error e = error_of([&] { vm.eval("let a = 1\nlet b = boom()"); });
  CHECK(contains(e.message(), "host function `boom` failed: kaboom"));
  CHECK(e.file() == "<eval>");
  CHECK(e.line() == 2);
  CHECK(e.column() == 9);
  CHECK(contains(e.what(), "error: host function `boom` failed: kaboom"));
  CHECK(contains(e.what(), "boom()"));
  nn::Error w = error_of([&] { vm.eval("weird()"); });
  CHECK(contains(w.message(), "unknown exception"));
  // The host keeps running.
  CHECK(vm.eval("2 * 3").as_int() == 6);
}

TEST_CASE("a script calling a host function wrongly gets a diagnostic") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  vm.define("pair", [](nn::Args a) -> nn::Value {
    a.expect(2);
    return a.integer(0) + a.integer(1);
  });
  vm.define("name", [](nn::Args a) -> nn::Value { return a.str(0); });
  vm.define("first", [](nn::Args a) -> nn::Value { return a[0]; });
  vm.define("flag", [](nn::Args a) -> nn::Value { return a.boolean(0); });
  vm.define("tens", [](nn::Args a) -> nn::Value { return a.tensor(0); });
  CHECK(contains(error_of([&] { vm.eval("pair(1, 2, 3)"); }).message(), "pair: takes 2 arguments but 3 were given"));
  CHECK(contains(error_of([&] { vm.eval("pair(1, \"x\")"); }).message(), "pair: argument 2: expected an int, got"));
  CHECK(contains(error_of([&] { vm.eval("name(3)"); }).message(), "name: argument 1: expected a string, got int"));
  CHECK(contains(error_of([&] { vm.eval("first()"); }).message(), "first: is missing argument 1"));
  CHECK(contains(error_of([&] { vm.eval("flag(1.5)"); }).message(), "flag: argument 1: expected a bool"));
  CHECK(contains(error_of([&] { vm.eval("tens(\"s\")"); }).message(), "tens: argument 1: expected a tensor"));
  CHECK(contains(error_of([&] { vm.eval("pair(1, 2, z=3)"); }).message(), "unknown keyword argument"));
  nn::Error e = error_of([&] { vm.eval("\n  name(3)"); });
  CHECK(e.line() == 2);
  CHECK(e.column() == 3);
  CHECK(vm.eval("pair(1, 2)").as_int() == 3);
  CHECK(vm.eval("tens(2.0)").tensor().item() == doctest::Approx(2.0));
}

TEST_CASE("a host passing a wrong tensor to a script function gets the script's diagnostic") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  vm.eval(kModel);
  std::vector<float> wrong(6, 1.0f);
  nn::Error shape = error_of([&] { vm.call("predict", nn::Tensor::from_blob(wrong.data(), {2, 3}, nn::f32)); });
  CHECK(contains(shape.message(), "matmul"));
  CHECK(contains(shape.message(), "f32[2, 3]"));
  CHECK(contains(shape.what(), "x @ w"));
  std::vector<float> floats = {0, 1};
  nn::Error dtype = error_of([&] { vm.call("pick", nn::Tensor::from_blob(floats.data(), {2}, nn::f32)); });
  CHECK(contains(dtype.message(), "must be an integer tensor, got f32[2]"));
  CHECK(contains(dtype.what(), "in fn pick, called by the host"));
  std::vector<int64_t> ids = {2, 0};
  CHECK(vm.call("pick", nn::Tensor::from_blob(ids.data(), {2}, nn::i64)).tensor().to_vector() ==
        std::vector<double>{30, 10});
  // Still running, with the same state.
  std::vector<float> ok = {1, 0, 0, 1};
  CHECK(vm.call("predict", nn::Tensor::from_blob(ok.data(), {2, 2}, nn::f32)).tensor().numel() == 6);
}

TEST_CASE("script errors: syntax, names, exit; wrong kinds in the host") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  nn::Error syn = error_of([&] { vm.eval("let = 3"); });
  CHECK(syn.file() == "<eval>");
  CHECK(syn.line() == 1);
  CHECK(contains(syn.what(), "error:"));
  CHECK(contains(error_of([&] { vm.eval("undefined_thing + 1"); }).message(), "undefined_thing"));
  nn::Error ex = error_of([&] { vm.eval("exit(3)"); });
  REQUIRE(ex.exit_code().has_value());
  CHECK(*ex.exit_code() == 3);
  CHECK(contains(error_of([&] { vm.get("missing"); }).message(), "no global named `missing`"));
  CHECK(contains(error_of([&] { vm.call("missing"); }).message(), "missing"));
  vm.set("n", 5);
  CHECK(contains(error_of([&] { vm.call("n"); }).message(), "not a function"));
  nn::Value five = vm.get("n");
  CHECK(contains(error_of([&] { (void)five.as_string(); }).message(), "not a string"));
  CHECK(contains(error_of([&] { (void)five.tensor(); }).message(), "not a tensor"));
  CHECK(contains(error_of([&] { (void)five.items(); }).message(), "not a list"));
  CHECK(contains(error_of([&] { (void)five.field("a"); }).message(), "not a record"));
  nn::Tensor t = vm.eval("zeros([2])").tensor();
  CHECK(contains(error_of([&] { (void)t.data<double>(); }).message(), "not f64"));
  CHECK(contains(error_of([&] { (void)nn::Tensor().shape(); }).message(), "undefined"));
  CHECK(contains(error_of([&] { nn::Value v{nn::Tensor()}; }).message(), "undefined"));
  CHECK(contains(error_of([&] { nn::Tensor::from_blob(nullptr, {2}, nn::f32); }).message(), "null"));
  CHECK(contains(error_of([&] { nn::Tensor::copy_from(nullptr, {-1}, nn::f32); }).message(), "negative"));
  nn::Options bad;
  bad.device = "tpu";
  CHECK(contains(error_of([&] { nn::Interpreter x(bad); }).message(), "device `tpu`"));
  CHECK(vm.eval("1").as_int() == 1);
}

TEST_CASE("allow_files=false denies every file access") {
  std::string path = "nn_embed_test_file.nn";
  {
    std::ofstream f(path);
    f << "let from_file = 1\n";
  }
  std::ostringstream out;
  nn::Options o = quiet(out);
  nn::Interpreter open_vm(o);
  open_vm.run_file(path);
  CHECK(open_vm.get("from_file").as_int() == 1);

  o.allow_files = false;
  nn::Interpreter vm(o);
  CHECK_THROWS_AS(vm.run_file(path), nn::Error);
  CHECK_THROWS_AS(vm.eval("import \"nn_embed_test_file\" as m"), nn::Error);
  CHECK(contains(error_of([&] { vm.eval("save_npy(zeros([2]), \"out.npy\")"); }).message(), "not allowed"));
  CHECK(contains(error_of([&] { vm.eval("load_npy(\"in.npy\")"); }).message(), "not allowed"));
  CHECK(vm.eval("1 + 1").as_int() == 2);
  std::remove(path.c_str());
}

TEST_CASE("max_memory_bytes makes a bigger allocation a diagnostic") {
  std::ostringstream out;
  nn::Options o = quiet(out);
  o.max_memory_bytes = 1 << 20;
  nn::Interpreter small(o);
  nn::Error e = error_of([&] { small.eval("let big = zeros([1024, 1024])\nbig.sum()"); });
  CHECK(contains(e.message(), "memory"));
  CHECK(small.eval("zeros([16]).sum()").tensor().item() == 0.0);
  // Another interpreter without a limit is not bound by it.
  nn::Interpreter large(quiet(out));
  CHECK(large.eval("zeros([1024, 1024]).sum()").tensor().item() == 0.0);
}

TEST_CASE("interpreters are independent") {
  std::ostringstream out_a, out_b;
  nn::Interpreter a(quiet(out_a)), b(quiet(out_b));
  a.set("x", 1);
  b.set("x", 2);
  a.define("only_in_a", [](nn::Args) -> nn::Value { return 7; });
  a.eval("fn f() { x * 10 }");
  CHECK(a.eval("f()").as_int() == 10);
  CHECK(a.eval("only_in_a()").as_int() == 7);
  CHECK(b.eval("x").as_int() == 2);
  CHECK_THROWS_AS(b.eval("f()"), nn::Error);
  CHECK_THROWS_AS(b.eval("only_in_a()"), nn::Error);
  a.eval("print(\"a\")");
  b.eval("print(\"b\")");
  CHECK(out_a.str() == "a\n");
  CHECK(out_b.str() == "b\n");
  // Values outlive their interpreter.
  nn::Value kept;
  {
    nn::Interpreter c(quiet(out_a));
    kept = c.eval("ones([3]) * 2");
  }
  CHECK(kept.tensor().to_vector() == std::vector<double>{2, 2, 2});
}

TEST_CASE("a host function may call back into its interpreter") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  vm.eval("fn sq(v) { v * v }");
  vm.define("via_script", [&vm](nn::Args a) -> nn::Value { return vm.call("sq", a.integer(0)); });
  vm.define("bad_nested", [&vm](nn::Args) -> nn::Value { return vm.eval("no_such_name"); });
  CHECK(vm.eval("via_script(7) + 1").as_int() == 50);
  nn::Error e = error_of([&] { vm.eval("bad_nested()"); });
  CHECK(contains(e.message(), "bad_nested: "));
  CHECK(contains(e.message(), "no_such_name"));
  CHECK(vm.eval("sq(3)").as_int() == 9);
  nn::Interpreter moved = std::move(vm);
  CHECK(moved.eval("sq(4)").as_int() == 16);
}

TEST_CASE("exit() in a host function's nested eval or call ends the outer run with its code") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  vm.define("nest", [&vm](nn::Args) -> nn::Value { return vm.eval("exit(4)"); });
  vm.eval("fn leave(code) { exit(code) }");
  vm.define("nest_call", [&vm](nn::Args a) -> nn::Value { return vm.call("leave", a.integer(0)); });
  nn::Error e = error_of([&] { vm.eval("nest()"); });
  REQUIRE(e.exit_code().has_value());
  CHECK(*e.exit_code() == 4);
  CHECK(contains(e.message(), "the script called exit(4)"));
  CHECK(!contains(e.message(), "nest:"));
  // The rest of the outer script does not run.
  e = error_of([&] { vm.eval("let before = 1\nnest_call(7)\nprint(\"after\")"); });
  REQUIRE(e.exit_code().has_value());
  CHECK(*e.exit_code() == 7);
  CHECK(out.str().empty());
  e = error_of([&] { vm.call("nest"); });
  REQUIRE(e.exit_code().has_value());
  CHECK(*e.exit_code() == 4);
  // A nested error that is no exit stays a diagnostic with no exit code.
  vm.define("nest_bad", [&vm](nn::Args) -> nn::Value { return vm.eval("no_such_name"); });
  CHECK(!error_of([&] { vm.eval("nest_bad()"); }).exit_code().has_value());
  CHECK(vm.eval("1 + 1").as_int() == 2);  // usable after
}

TEST_CASE("set and define take only names a script can use") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  auto fn = [](nn::Args) -> nn::Value { return 1; };
  for (const char* bad : {"", "let", "for", "none", "1a b", "1abc", "a-b", "a b", "\u00e9t\u00e9", "x.y"}) {
    nn::Error s = error_of([&] { vm.set(bad, 1); });
    CHECK(contains(s.message(), std::string("set(`") + bad + "`)"));
    nn::Error d = error_of([&] { vm.define(bad, fn); });
    CHECK(contains(d.message(), std::string("define(`") + bad + "`)"));
    CHECK(contains(d.message(), "no script could use"));
  }
  CHECK(contains(error_of([&] { vm.set("", 1); }).message(), "the name is empty"));
  CHECK(contains(error_of([&] { vm.set("let", 1); }).message(), "`let` is a keyword"));
  CHECK(contains(error_of([&] { vm.define("1a b", fn); }).message(), "`1a b` is not a name"));
  CHECK(!vm.has("let"));
  // Names as SPEC §2 defines them: a letter or `_`, then letters, digits, `_`.
  vm.set("_x1", 2);
  vm.set("lets", 3);  // a keyword's prefix is a name
  vm.define("F_2", fn);
  CHECK(vm.eval("_x1 + lets + F_2()").as_int() == 6);
}

TEST_CASE("Args::expect with its minimum above its maximum is the host's mistake, said so") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  vm.define("bad_range", [](nn::Args a) -> nn::Value {
    a.expect(3, 1);
    return 0;
  });
  vm.define("one_or_two", [](nn::Args a) -> nn::Value {
    a.expect(1, 2);
    return int64_t(a.size());
  });
  vm.define("exactly_two", [](nn::Args a) -> nn::Value {
    a.expect(2, 2);
    return int64_t(a.size());
  });
  for (const char* call : {"bad_range()", "bad_range(1, 2)", "bad_range(1, 2, 3)"}) {
    nn::Error e = error_of([&] { vm.eval(call); });
    CHECK(contains(e.message(), "bad_range: Args::expect(3, 1): the minimum is greater than the maximum"));
    CHECK(contains(e.message(), "host function"));
    CHECK(!contains(e.message(), "takes 3 to 1"));
  }
  CHECK(vm.eval("one_or_two(1, 2)").as_int() == 2);
  CHECK(contains(error_of([&] { vm.eval("one_or_two()"); }).message(), "takes 1 to 2 arguments but 0 were given"));
  CHECK(vm.eval("exactly_two(1, 2)").as_int() == 2);
  CHECK(contains(error_of([&] { vm.eval("exactly_two(1)"); }).message(), "takes 2 arguments but 1 was given"));
  // Outside a script's call too.
  nn::Args args("host", {}, nullptr);
  CHECK(contains(error_of([&] { args.expect(5, 0); }).message(), "minimum is greater than the maximum"));
}

TEST_CASE("a CPU run maps no CUDA library; asking for a GPU loads the CUDA plugin") {
  std::ostringstream out;
  {
    nn::Interpreter vm(quiet(out));
    vm.eval("print(sum(ones([64, 64]) @ ones([64, 64])))");
  }
  CHECK(out.str() == "262144.0\n");
  CHECK(nntest::mapped_cuda_libraries().empty());
  nn::Options gpu = quiet(out);
  gpu.device = "cuda";
  std::string why;
  try {
    nn::Interpreter vm(gpu);
  } catch (const nn::Error& e) {
    why = e.message();
  }
  if (contains(why, "no CUDA backend") || contains(why, "could not be loaded")) {
    MESSAGE("CUDA plugin not loaded: " << why);
    return;
  }
  // Loaded: found beside libnn_embed.so (or in the build tree), with the
  // CUDA runtime it needs.
  CHECK(nntest::mapped_libraries({"libnn_cuda.so"}).size() == 1);
  CHECK(nntest::mapped_libraries({"libcudart"}).size() == 1);
}

TEST_CASE("a model written and read back through the library loads the ONNX plugin") {
  std::ostringstream out;
  nn::Interpreter vm(quiet(out));
  const std::string model = "embed_relu.onnx";
  std::string why;
  try {
    vm.eval("save_onnx(fn(x) { relu(x) * 2.0 }, [ones([1, 3])], \"" + model + "\")");
  } catch (const nn::Error& e) {
    why = e.message();
  }
  if (contains(why, "no ONNX support")) {
    MESSAGE("built without ONNX: " << why);
    return;
  }
  REQUIRE(why.empty());
  // relu([-1, 3, 0.5]) * 2 = [0, 6, 1].
  CHECK(vm.eval("item(sum(load_onnx(\"" + model + "\")(reshape(tensor([-1.0, 3.0, 0.5]), [1, 3]))))").as_float() == 7.0);
  // Found beside libnn_embed.so (or in the build tree), with protobuf.
  CHECK(nntest::mapped_libraries({"libnn_onnx.so"}).size() == 1);
  CHECK(!nntest::mapped_libraries({"libprotobuf"}).empty());
  std::remove(model.c_str());
}
