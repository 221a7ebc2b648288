// The interpreter through its C++ interface: values of programs, globals,
// diagnostics and their notes, name checking, recursion guards, closures.
#include <doctest/doctest.h>

#include <pthread.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <sstream>

#include "backend/device.h"
#include "frontend/format.h"
#include "frontend/interpreter.h"
#include "script_test_util.h"

using namespace nn::frontend;
using namespace nntest;

TEST_CASE("a program's value is its last expression statement") {
  Interpreter vm;
  CHECK(vm.run_code("t.nn", "1 + 2").as_int() == 3);
  CHECK(vm.run_code("t.nn", "let a = 1").is_none());
  CHECK(run(vm, "[1, 2] * 3") == "i64[2] [3, 6]");
}

// 0.1 in f32 is 0.100000001490116; in f64, 0.1000000000000000055511. A
// literal given straight to tensor() is rounded once, to the dtype asked
// for; a literal on its own, or one bound to a name first, is f32.
TEST_CASE("tensor(literal, dtype) converts the literal's exact numbers") {
  Interpreter vm;
  CHECK(vm.run_code("t.nn", "tensor([1e-10, 0.1], f64)[0].item() == 1e-10").as_bool());
  CHECK(vm.run_code("t.nn", "tensor([1e-10, 0.1], f64)[1].item() == 0.1").as_bool());
  CHECK(vm.run_code("t.nn", "tensor([[0.1, 2], [3, 4]], f64)[0][0].item() == 0.1").as_bool());
  CHECK(vm.run_code("t.nn", "tensor([16777217.5], f64)[0].item()").as_float() == 16777217.5);
  CHECK(run(vm, "tensor([0.1, 0.2]).dtype") == "f32");
  CHECK(run(vm, "tensor([0.1], dtype=none).dtype") == "f32");
  CHECK(run(vm, "tensor([[1.5]]).dtype") == "f32");
  CHECK(run(vm, "tensor([1, 2]).dtype") == "i64");
  CHECK(run(vm, "tensor([true]).dtype") == "bool");
  CHECK(run(vm, "tensor([2.5, -1.5], i64)") == "i64[2] [2, -1]");
  CHECK(vm.run_code("t.nn", "tensor([0.1])[0].item()").as_float() == double(0.1f));
  CHECK(vm.run_code("t.nn", "let g = [0.1]\ntensor(g, f64)[0].item()").as_float() == double(0.1f));
  CHECK(run(vm, "[0.1, 0.2].dtype") == "f32");
}

// torch.tensor and torch.full refuse numbers an integer dtype cannot hold
// ("value cannot be converted to type int32 without overflow"); a cast
// would wrap an int (3000000000 as i32 is -1294967296) or saturate a float.
TEST_CASE("tensor() and full() refuse host numbers their integer dtype cannot hold") {
  Interpreter vm;
  const std::string i32 = " cannot be converted to i32 without overflow (i32 holds -2147483648 to 2147483647)";
  const std::string i64 =
      " cannot be converted to i64 without overflow (i64 holds -9223372036854775808 to 9223372036854775807)";
  CHECK(script_error(vm, "tensor([3000000000], i32)") == "value 3000000000" + i32);
  CHECK(script_error(vm, "tensor([-2147483649], i32)") == "value -2147483649" + i32);
  CHECK(script_error(vm, "tensor([[1], [3000000000]], i32)") == "value 3000000000" + i32);
  CHECK(script_error(vm, "tensor([0.5, 3e9], i32)") == "value 3000000000.0" + i32);
  CHECK(script_error(vm, "tensor(3000000000, i32)") == "value 3000000000" + i32);
  CHECK(script_error(vm, "let xs = []\nappend(xs, 3000000000)\ntensor(xs, i32)") == "value 3000000000" + i32);
  CHECK(script_error(vm, "tensor([1e19], i64)") == "value 1e+19" + i64);
  CHECK(script_error(vm, "full([1], 3000000000, dtype=i32)") == "value 3000000000" + i32);
  CHECK(script_error(vm, "full([1], -3e9, dtype=i32)") == "value -3000000000.0" + i32);
  CHECK(script_error(vm, "full([1], 9.3e18, dtype=i64)") == "value 9.3e+18" + i64);
  // The limits fit; floats truncate toward zero first (2147483647.9 is 2147483647).
  CHECK(run(vm, "tensor([2147483647, -2147483648], i32)") == "i32[2] [2147483647, -2147483648]");
  CHECK(run(vm, "tensor([2147483647.9, -2147483648.9], i32)") == "i32[2] [2147483647, -2147483648]");
  CHECK(run(vm, "full([1], -2147483648, dtype=i32)") == "i32[1] [-2147483648]");
  CHECK(run(vm, "full([1], 2.5, dtype=i32)") == "i32[1] [2]");
  CHECK(run(vm, "tensor([-9223372036854775808, 9223372036854775807], i64)") ==
        "i64[2] [-9223372036854775808, 9223372036854775807]");
  // A tensor's values are cast, as astype casts them.
  CHECK(run(vm, "let t = [3000000000]\ntensor(t, i32)") == "i32[1] [-1294967296]");
}

TEST_CASE("globals persist across runs and can be set from C++") {
  Interpreter vm;
  vm.run_code("a.nn", "let x = 40");
  CHECK(vm.run_code("b.nn", "x + 2").as_int() == 42);
  vm.set_global("y", Value(int64_t(5)));
  CHECK(vm.run_code("c.nn", "x + y").as_int() == 45);
  REQUIRE(vm.find_global("x") != nullptr);
  CHECK(vm.find_global("x")->as_int() == 40);
}

TEST_CASE("print writes to the configured stream") {
  std::ostringstream out;
  InterpreterOptions opts;
  opts.out = &out;
  Interpreter vm(opts);
  vm.run_code("t.nn", "print(\"a\", 1, 2.5, [true])");
  CHECK(out.str() == "a 1 2.5 bool[1] [true]\n");
}

TEST_CASE("functions: defaults, keywords, closures by reference, returns") {
  Interpreter vm;
  vm.run_code("t.nn",
              "fn f(a, b=10, c=100) { a + b + c }\n"
              "let n = 0\n"
              "fn bump() { n += 1 }\n"
              "fn early(x) { if x > 0 { return 1 } \n -1 }\n");
  CHECK(vm.run_code("t.nn", "f(1)").as_int() == 111);
  CHECK(vm.run_code("t.nn", "f(1, c=0)").as_int() == 11);
  CHECK(vm.run_code("t.nn", "f(b=2, a=1)").as_int() == 103);
  vm.run_code("t.nn", "bump(); bump()");
  CHECK(vm.run_code("t.nn", "n").as_int() == 2);
  CHECK(vm.run_code("t.nn", "early(5)").as_int() == 1);
  CHECK(vm.run_code("t.nn", "early(-5)").as_int() == -1);
  // Each call of a closure factory gets its own scope.
  vm.run_code("t.nn", "fn counter() { let c = 0 \n fn() { c += 1; c } }\nlet p = counter()\nlet q = counter()\n");
  CHECK(vm.run_code("t.nn", "p(); p(); q(); p()").as_int() == 3);
}

// A closure kept in the frame it captures (as MultiheadAttention's `heads`)
// is a cycle; the frame and its tensors must still go when the call ends.
TEST_CASE("a frame whose own closures capture it is freed when the call returns") {
  Interpreter vm;
  nn::backend::CachingPool& pool = nn::backend::cpu_device()->pool();
  vm.run_code("t.nn",
              "fn local(x) { let big = x * 2 \n let g = fn(z) { z + big } \n g(x) }\n"
              "fn recursive(x) { let fact = fn(n) { if n == 0 { 1 } else { n * fact(n - 1) } } \n x * fact(3) }\n"
              "fn in_block(x) { if true { let y = x * 3 \n let h = fn() { y } \n h() } }\n"
              "let x = zeros([256, 256])\n"  // 256 KB
              "local(x); recursive(x); in_block(x)\n");  // once first: constants made once stay
  const size_t before = pool.stats().current;
  vm.run_code("t.nn", "for i in 0..20 { local(x); recursive(x); in_block(x) }");
  CHECK(pool.stats().current == before);
  // Closures that leave the call keep their scope: handed back alone, in a
  // record, or through another closure that calls them.
  vm.run_code("t.nn",
              "fn make(k) { let g = fn(v) { v * k } \n g }\n"
              "fn boxed(k) { let g = fn(v) { v + k } \n {g: g} }\n"
              "fn chained(k) { let a = fn(v) { v - k } \n let b = fn(v) { a(v) * 10 } \n b }\n"
              "let (m, r, c) = (make(3), boxed(4), chained(1))\n");
  CHECK(vm.run_code("t.nn", "m(2) + r.g(5) + c(3)").as_int() == 6 + 9 + 20);
}

TEST_CASE("functions may call functions defined after them") {
  Interpreter vm;
  CHECK(vm.run_code("t.nn",
                    "fn is_even(n) { if n == 0 { true } else { is_odd(n - 1) } }\n"
                    "fn is_odd(n) { if n == 0 { false } else { is_even(n - 1) } }\n"
                    "is_even(10)")
            .as_bool());
}

TEST_CASE("names are checked before anything runs") {
  std::ostringstream out;
  InterpreterOptions opts;
  opts.out = &out;
  Interpreter vm(opts);
  CHECK(script_error(vm, "print(\"side effect\")\nprint(undefined_name)") == "unknown name `undefined_name`");
  CHECK(out.str().empty());
}

TEST_CASE("diagnostics carry spans and call-stack notes") {
  Interpreter vm;
  try {
    vm.run_code("m.nn", "fn g(x) {\n  x @ x\n}\ng(zeros([2, 3]))");
    FAIL("expected an error");
  } catch (const ScriptError& e) {
    const Diagnostic& d = e.diagnostics().front();
    CHECK(d.message == "matmul shapes do not fit: f32[2, 3] @ f32[2, 3] (3 != 2)");
    CHECK(vm.sources().location(d.span) == "m.nn:2:3");
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0] == "in fn g, called at m.nn:4:1");
  }
}

TEST_CASE("an error leaves the interpreter usable with its state") {
  Interpreter vm;
  vm.run_code("a.nn", "let kept = 7");
  CHECK(script_error(vm, "kept + [1, 2] @ [1, 2, 3]").find("matmul") == 0);
  CHECK(vm.run_code("b.nn", "kept").as_int() == 7);
}

TEST_CASE("host errors: types, conversions, containers") {
  Interpreter vm;
  CHECK(script_error(vm, "1 + \"a\"") == "cannot add an int and a string with `+`");
  CHECK(script_error(vm, "let r = {a: 1}\nr.b") == "record has no field `b`");
  CHECK(script_error(vm, "[1, \"a\"][5]") == "index 5 is out of range for length 2");
  CHECK(script_error(vm, "let (a, b) = (1, 2, 3)") == "cannot destructure 3 values into 2 names");
  CHECK(script_error(vm, "if zeros([2]) { }").find("is ambiguous") != std::string::npos);
  CHECK(script_error(vm, "for i in 3 { }") == "cannot iterate over an int");
  CHECK(script_error(vm, "print = 3") == "cannot assign to the built-in `print`; declare a new name with `let`");
  CHECK(script_error(vm, "assert(1 == 2, \"math\")") == "assertion failed: math");
  CHECK(script_error(vm, "let x = zeros([2, 2])\nx[0][1] = 1") ==
        "chained indexing assigns into a copy; write `x[i, j] = v` to change x itself");
}

namespace {
// Runs f on a thread of 1 MiB of stack: the guards must stop recursion
// before the stack ends.
void on_small_stack(const std::function<void()>& f) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t(1) << 20);
  pthread_t t;
  auto run = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  REQUIRE(pthread_create(&t, &attr, run, const_cast<std::function<void()>*>(&f)) == 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
}
}  // namespace

TEST_CASE("runaway recursion on a small stack is a diagnostic, not a crash") {
  std::string message;
  on_small_stack([&] {
    Interpreter vm;
    message = script_error(vm, "fn f(n) { f(n + 1) + 1 }\nf(0)");
  });
  CHECK(message.rfind("recursion too deep", 0) == 0);
}

TEST_CASE("values nested deeply or holding themselves on a small stack: diagnostics, not crashes") {
  std::string cycle_equal, deep_print, after;
  bool self_equal = false;
  // Values nested far deeper than a 1 MiB stack could recurse through.
  on_small_stack([&] {
    Interpreter vm;
    vm.run_code("a.nn", "let a = [none]\na[0] = a\nlet b = [none]\nb[0] = b\nlet same = a == a");
    self_equal = vm.run_code("b.nn", "same").as_bool();
    cycle_equal = script_error(vm, "a == b");
    vm.run_code("f.nn", "a[0] = none\nb[0] = none");  // values are reference-counted: cycles are broken by hand
    vm.run_code("c.nn", "let d = []\nfor i in 0..200000 { d = [d] }\nlet e = {x: 1}\nfor i in 0..100000 { e = {x: (e,)} }");
    deep_print = script_error(vm, "print(d)");
    vm.run_code("d.nn", "d = 0\ne = 0");  // freed here, with the stack still small
    after = to_str(vm.run_code("e.nn", "str({k: (\"v\",)})"));
  });  // and what is left, with the interpreter
  CHECK(self_equal);
  CHECK(cycle_equal == "comparison nests too deeply (a container holding itself?)");
  CHECK(deep_print == "the value is nested too deeply to print");
  CHECK(after == "{k: (\"v\",)}");
}

TEST_CASE("values nested deeply given to a graph or save: diagnostics, not crashes") {
  // Walks over a value's tensors recursed once a level: a list 3,000 deep
  // overflowed a 1 MiB stack, 50,000 the main one.
  std::string small_graph, small_save, deep_graph, deep_read, deep_save;
  on_small_stack([&] {
    Interpreter vm;
    vm.run_code("a.nn", "graph g(x) { 1 }\nlet d = ones([1])\nfor i in 0..3000 { d = [d] }");
    small_graph = script_error(vm, "g(d)");
    small_save = script_error(vm, "save(d, \"/tmp/nn_never_saved.safetensors\")");
    vm.run_code("b.nn", "d = 0");
  });
  Interpreter vm;
  vm.run_code("a.nn", "graph g(x) { 1 }\nlet d = ones([1])\nfor i in 0..10001 { d = [d] }");
  deep_graph = script_error(vm, "g(d)");
  deep_read = script_error(vm, "graph h(x) { x + len(d) }\nh(1.0)");
  deep_save = script_error(vm, "save(d, \"/tmp/nn_never_saved.safetensors\")");
  const std::string nested = "the value is nested too deeply (more than 10000 lists, tuples or records, one inside "
                             "another, or less on this thread's stack)";
  CHECK(small_graph == nested);
  CHECK(deep_graph == nested);
  CHECK(deep_read == nested);  // the trace's check for tensors escaping into `d`
  const std::string save_nested =
      "save: the value is nested more than 10000 lists, tuples or records deep, one inside another";
  CHECK(small_save == save_nested);
  CHECK(deep_save == save_nested);
  vm.run_code("c.nn", "d = 0");
}

TEST_CASE("exit() unwinds to the host with its code") {
  Interpreter vm;
  try {
    vm.run_code("t.nn", "exit(4)");
    FAIL("expected exit");
  } catch (const ExitRequest& e) {
    CHECK(e.code == 4);
  }
}

TEST_CASE("check_file parses and checks the modules a script imports, once each") {
  char dir[] = "/tmp/nn_check_modules_XXXXXX";
  REQUIRE(mkdtemp(dir));
  const std::string d = dir;
  auto write_file = [&](const std::string& name, const std::string& text) {
    std::ofstream(d + "/" + name) << text;
  };
  write_file("main.nn", "import \"a\"\nimport \"b\"\nimport \"nowhere\"\nprint(a.f(1))\n");
  write_file("a.nn", "import \"b\"\nfn f(x) { x + y }\n");  // y is unknown
  write_file("b.nn", "let k = (1 +\n");                          // a syntax error
  write_file("c.nn", "import \"d\"\n");
  write_file("d.nn", "import \"c\"\n");
  Interpreter vm;
  try {
    vm.check_file(d + "/main.nn");
    FAIL("expected errors");
  } catch (const ScriptError& e) {
    const auto& ds = e.diagnostics();
    REQUIRE(ds.size() == 3);  // b.nn's error once, though two files import it
    CHECK(vm.sources().location(ds[0].span).find("b.nn:") != std::string::npos);
    REQUIRE(ds[0].notes.size() == 2);  // b, imported by a, imported by main
    CHECK(ds[0].notes[0].starts_with("in module `b`, imported at " + d + "/a.nn:1"));
    CHECK(ds[0].notes[1].starts_with("in module `a`, imported at " + d + "/main.nn:1"));
    CHECK(ds[1].message == "unknown name `y`");
    CHECK(vm.sources().location(ds[1].span).starts_with(d + "/a.nn:2"));
    CHECK(ds[2].message == "cannot find module `nowhere`");
  }
  write_file("main.nn", "import \"c\"\n");
  Interpreter cycle;
  try {
    cycle.check_file(d + "/main.nn");
    FAIL("expected a cycle");
  } catch (const ScriptError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    CHECK(e.diagnostics()[0].message == "import cycle: c.nn -> d.nn -> c.nn");
  }
  // A module importing the script back is a cycle; the script is not checked twice.
  write_file("main.nn", "import \"back\"\nlet a = b\n");
  write_file("back.nn", "import \"main\"\n");
  Interpreter back;
  try {
    back.check_file(d + "/main.nn");
    FAIL("expected a cycle");
  } catch (const ScriptError& e) {
    REQUIRE(e.diagnostics().size() == 2);
    CHECK(e.diagnostics()[0].message == "import cycle: main.nn -> back.nn -> main.nn");
    CHECK(e.diagnostics()[1].message == "unknown name `b`");
  }
  std::filesystem::remove_all(d);
}

TEST_CASE("check_file reports every name error without running") {
  Interpreter vm;
  char path[] = "/tmp/nn_check_XXXXXX.nn";
  int fd = mkstemps(path, 3);
  REQUIRE(fd >= 0);
  std::string code = "print(\"never\")\nlet a = b\nc = 1\nbreak\n";
  REQUIRE(write(fd, code.data(), code.size()) == ssize_t(code.size()));
  close(fd);
  try {
    vm.check_file(path);
    FAIL("expected errors");
  } catch (const ScriptError& e) {
    REQUIRE(e.diagnostics().size() == 3);
    CHECK(e.diagnostics()[0].message == "unknown name `b`");
    CHECK(e.diagnostics()[1].message == "assignment to undeclared name `c`");
    CHECK(e.diagnostics()[2].message == "`break` outside a loop");
  }
  unlink(path);
}
