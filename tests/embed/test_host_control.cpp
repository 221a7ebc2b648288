// Host control over a running script: interrupt() from another thread and
// Options::time_limit end the run with an nn::Error; the interpreter goes on.
#include <doctest/doctest.h>
#include <nn/nn.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <sstream>
#include <thread>

#include "embed/embed_helpers.h"

using nntest::embed_error_of;
using nntest::has;
using Clock = std::chrono::steady_clock;

namespace {
// Runs `code` (which calls started() first) and interrupts it from another
// thread `after_ms` later; gives the error and the latency in ms.
std::pair<nn::Error, double> interrupt_during(nn::Interpreter& vm, const std::string& code, int after_ms) {
  std::atomic<bool> started{false};
  vm.define("started", [&](nn::Args) -> nn::Value {
    started = true;
    return nn::Value();
  });
  Clock::time_point asked;
  std::thread stopper([&] {
    while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(after_ms));
    asked = Clock::now();
    vm.interrupt();
  });
  nn::Error e = embed_error_of([&] { vm.eval(code); });
  const Clock::time_point ended = Clock::now();
  stopper.join();
  return {e, std::chrono::duration<double, std::milli>(ended - asked).count()};
}
}  // namespace

TEST_CASE("interrupt() from a second thread ends `while true {}` within 100 ms") {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  auto [e, latency_ms] = interrupt_during(vm, "started()\nlet n = 0\nwhile true { n += 1 }", 20);  // well inside the loop
  CHECK(e.message() == "interrupted");
  CHECK(e.file() == "<eval>");
  CHECK(e.line() == 3);
  MESSAGE("interrupt latency: " << latency_ms << " ms");
  CHECK(latency_ms < 100.0);
  // The interpreter stays usable, its state as the loop left it.
  CHECK(vm.eval("n > 0").as_bool());
  CHECK(vm.eval("2 + 3").as_int() == 5);
}

TEST_CASE("an interrupt while nothing runs does not stop the next call") {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  vm.interrupt();
  CHECK(vm.eval("let s = 0\nfor i in 0..1000 { s += i }\ns").as_int() == 499500);
}

TEST_CASE("interrupt() stops a script function called by the host, and a nested one") {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  vm.define("stop_me", [&](nn::Args) -> nn::Value {
    vm.interrupt();  // from inside the run: the next statement stops
    return nn::Value();
  });
  vm.eval("fn spin() { stop_me()\nwhile true { } }");
  nn::Error e = embed_error_of([&] { vm.call(std::string("spin"), std::vector<nn::Value>{}); });
  CHECK(e.message() == "interrupted");
  // The request was taken: the next call runs to its end.
  CHECK(vm.eval("40 + 2").as_int() == 42);
}

TEST_CASE("Options::time_limit ends a run that takes too long; later calls get their own limit") {
  std::ostringstream out;
  nn::Options o = nntest::quiet_options(out);
  o.time_limit = 0.05;
  nn::Interpreter vm(o);
  auto t0 = Clock::now();
  nn::Error e = embed_error_of([&] { vm.eval("while true { }"); });
  const double took_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  CHECK(has(e.message(), "time limit exceeded"));
  CHECK(has(e.message(), "0.05 s"));
  MESSAGE("a 50 ms time limit ended the run after " << took_ms << " ms");
  CHECK(took_ms >= 50.0);
  CHECK(took_ms < 1000.0);
  // Each call from the host starts its own limit.
  for (int i = 0; i < 3; ++i) CHECK(vm.eval("let s = 0\nfor i in 0..100 { s += i }\ns").as_int() == 4950);
  vm.eval("fn forever() { while true { } }");
  e = embed_error_of([&] { vm.call(std::string("forever"), std::vector<nn::Value>{}); });
  CHECK(has(e.message(), "time limit exceeded"));
  nn::Options bad = o;
  bad.time_limit = -1;
  CHECK(has(embed_error_of([&] { nn::Interpreter x(bad); }).message(), "time_limit"));
}

TEST_CASE("interrupt() reaches a long kernel: a big matmul stops between its slices") {
  std::ostringstream out;
  nn::Options o = nntest::quiet_options(out);
  o.threads = 2;  // one thread runs a gemm whole; several split it into slices
  nn::Interpreter vm(o);
  vm.eval("let a = rand([3000, 3000])");  // 2.7e10 multiply-adds: about a second
  auto [e, latency_ms] = interrupt_during(vm, "started()\nlet c = a @ a", 30);
  CHECK(e.message() == "interrupted");
  CHECK(e.line() == 2);
  MESSAGE("interrupt latency inside a matmul: " << latency_ms << " ms");
  CHECK(latency_ms < 100.0);
  CHECK(vm.eval("(a[0:2, 0:2] @ ones([2, 1])).shape[0]").as_int() == 2);
}

TEST_CASE("interrupt() reaches a compiled graph between its nodes") {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  vm.eval(
      "graph chain(a, n) {\n  let x = a\n  for i in 0..n { x = tanh(x @ a) }\n  sum(x)\n}\n"
      "let a = rand([1000, 1000]) * 0.001\nchain(a, 2)");
  // 60 gemms of 1e9 multiply-adds on one thread: a second or more.
  auto [e, latency_ms] = interrupt_during(vm, "started()\nchain(a, 60)", 50);
  CHECK(e.message() == "interrupted");
  MESSAGE("interrupt latency inside a graph: " << latency_ms << " ms");
  CHECK(latency_ms < 100.0);
  CHECK(vm.eval("item(chain(a, 2)) > 0").as_bool());
}

TEST_CASE("a time limit of 1e9 s or more, or infinity, is no limit") {
  // 1e10 overflowed the clock's deadline: every call failed at once.
  for (double limit : {1e9, 1e10, 1e18, std::numeric_limits<double>::infinity()}) {
    nn::Options o;
    o.threads = 1;
    o.time_limit = limit;
    nn::Interpreter vm(o);
    CHECK(vm.eval("let s = 0\nfor i in 0..100 { s = s + i }\ns").as_int() == 4950);
  }
}
