// Recursion a host cannot see coming ends in a diagnostic, never a crash:
// code nested deeply on a thread with a small stack (the parser and the
// syntax tree's builder watch the stack too), a host function that
// evaluates code calling it again, and a script's own deep recursion there
// (named as recursion, not as the comparison that happened to trip first).
#include <pthread.h>

#include <functional>
#include <string>

#include "embed_helpers.h"

using nntest::embed_error_of;
using nntest::has;

namespace {
// A sanitizer's frames are several times larger, and its runtime has its own
// stack needs: the small stacks below are sized for the plain build.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
// Under ThreadSanitizer, recursion until the main thread's stack is nearly
// full took all of CI's memory (24 GB) before the guard stopped it.
#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitized = true;
#else
constexpr bool kThreadSanitized = false;
#endif

// Runs f on a new thread with a stack of `kb` KiB.
void on_stack_of(size_t kb, const std::function<void()>& f) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kb * 1024);
  pthread_t thread;
  auto* task = new std::function<void()>(f);
  REQUIRE(pthread_create(
              &thread, &attr,
              [](void* p) -> void* {
                auto* t = static_cast<std::function<void()>*>(p);
                (*t)();
                delete t;
                return nullptr;
              },
              task) == 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}
}  // namespace

TEST_CASE("code nested within the nesting limit on a 256 KiB stack is a diagnostic; the interpreter goes on" *
          doctest::skip(kSanitized)) {
  std::string message, after;
  on_stack_of(256, [&] {
    std::ostringstream out;
    nn::Interpreter vm(nntest::quiet_options(out));
    const std::string deep = std::string(399, '(') + "1" + std::string(399, ')');  // the limit is 400
    message = embed_error_of([&] { vm.eval(deep); }).message();
    after = vm.eval("(((2)))").str();
  });
  CHECK(has(message, "nests too deeply for the stack"));
  CHECK(after == "2");
}

TEST_CASE("a host function evaluating code that calls it again ends in one diagnostic, named once" *
          doctest::skip(kThreadSanitized)) {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  vm.define("run", [&vm](nn::Args a) -> nn::Value { return vm.eval(a.str(0)); });
  const std::string message = embed_error_of([&] { vm.eval("let s = \"run(s)\"\nrun(s)"); }).message();
  CHECK((has(message, "nests too deeply for the stack") || has(message, "recursion too deep")));
  CHECK(message.starts_with("run: "));
  CHECK(!has(message, "run: run:"));  // every level used to add its name: 12 KB of them
  CHECK(vm.eval("1 + 1").as_int() == 2);
}

TEST_CASE("a script's deep recursion on a small stack is named as recursion" * doctest::skip(kSanitized)) {
  for (size_t kb : {448, 512, 768}) {
    std::string message;
    on_stack_of(kb, [&] {
      std::ostringstream out;
      nn::Interpreter vm(nntest::quiet_options(out));
      message = embed_error_of([&] { vm.eval("fn f(n) { if n == 0 { 0 } else { f(n - 1) + 1 } }\nf(100000)"); }).message();
    });
    CAPTURE(kb);
    CHECK(has(message, "recursion too deep"));  // not "comparison nests too deeply"
  }
}

TEST_CASE("a host function's tensor argument of another kind says what it got, once") {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  vm.define("g", [](nn::Args a) -> nn::Value { return nn::Value(a.tensor(0)); });
  const std::string message = embed_error_of([&] { vm.eval("g(\"text\")"); }).message();
  CHECK(has(message, "g: argument 1: expected a tensor or a number, got a string"));
}
