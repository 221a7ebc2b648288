// Each interpreter's memory cap (Options::max_memory_bytes) counts its own
// CPU tensors and host values (strings, lists, tuples), whatever other
// interpreters on other threads hold; memory is given back when a value goes,
// also after its interpreter is destroyed.
#include <doctest/doctest.h>
#include <nn/nn.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "embed/embed_helpers.h"

using nntest::embed_error_of;
using nntest::has;

namespace {
nn::Options capped(std::ostringstream& out, size_t bytes) {
  nn::Options o = nntest::quiet_options(out);
  o.max_memory_bytes = bytes;
  return o;
}
// 2 MiB of f32.
constexpr const char* kAlloc = "fn alloc() { zeros([524288]).sum() }";
}  // namespace

TEST_CASE("one interpreter's cap neither binds nor spares another on another thread") {
  std::ostringstream out_a, out_b;
  nn::Interpreter small(capped(out_a, 1 << 20)), large(nntest::quiet_options(out_b));
  small.eval(kAlloc);
  large.eval(kAlloc);
  constexpr int kTries = 2000;
  std::atomic<int> small_through{0}, large_refused{0};
  std::thread a([&] {
    for (int i = 0; i < kTries; ++i) {
      try {
        small.call("alloc");
        ++small_through;
      } catch (const nn::Error& e) {
        if (!has(e.message(), "out of memory on cpu")) ++small_through;  // another error: counted as a failure
      }
    }
  });
  std::thread b([&] {
    for (int i = 0; i < kTries; ++i) {
      try {
        large.call("alloc");
      } catch (const nn::Error&) {
        ++large_refused;
      }
    }
  });
  a.join();
  b.join();
  CHECK(small_through == 0);
  CHECK(large_refused == 0);
  // Under its cap the small one still works, and its refusals left no charge behind.
  CHECK(small.eval("zeros([1024]).sum()").tensor().item() == 0.0);
  CHECK(small.eval("let keep = zeros([200000])\nkeep.sum()").tensor().item() == 0.0);  // 0.8 MB of 1 MB
}

TEST_CASE("strings are counted by the cap, and given back when they go") {
  std::ostringstream out;
  nn::Interpreter vm(capped(out, 16 << 20));
  // Doubling a string: 2^24 characters is 16 MiB, past the cap.
  nn::Error e = embed_error_of([&] { vm.eval("let s = \"x\"\nfor i in 0..27 {\n  s = s + s\n}"); });
  CHECK(has(e.message(), "out of memory on cpu"));
  CHECK(has(e.message(), "limit 16.0 MB"));
  CHECK(e.line() == 3);
  // `s` kept its last length; once it is dropped, 8 MiB fits again.
  CHECK(vm.eval("len(s)").as_int() == (1 << 23));
  vm.eval("s = \"\"");
  CHECK(vm.eval("let t = \"y\"\nfor i in 0..23 { t = t + t }\nlen(t)").as_int() == (1 << 23));
  // Held at once, two of them do not fit.
  CHECK_THROWS_AS(vm.eval("let u = t + \"\""), nn::Error);
  vm.eval("t = \"\"");
  CHECK(vm.eval("let u = \"z\"\nfor i in 0..23 { u = u + u }\nlen(u)").as_int() == (1 << 23));
}

TEST_CASE("lists and tuples are counted by the cap") {
  std::ostringstream out;
  nn::Interpreter vm(capped(out, 4 << 20));
  nn::Error e = embed_error_of([&] { vm.eval("let l = []\nfor i in 0..1000000 { append(l, i) }"); });
  CHECK(has(e.message(), "out of memory on cpu"));
  CHECK(e.line() == 2);
  // A list under the cap is fine, and a failed append left the list as it was.
  CHECK(vm.eval("let m = []\nfor i in 0..1000 { append(m, i) }\nlen(m)").as_int() == 1000);
  CHECK(vm.eval("len(l) < 1000000").as_bool());
  CHECK_THROWS_AS(vm.eval("let big = reversed(0..1000000)"), nn::Error);
}

TEST_CASE("tensors kept by the host after their interpreter is gone still give their memory back") {
  std::ostringstream out;
  nn::Value kept;
  {
    nn::Interpreter vm(capped(out, 1 << 20));
    kept = vm.eval("ones([1000])");
  }
  CHECK(kept.tensor().to_vector().size() == 1000);
  kept = nn::Value();  // refunds an account nothing else holds (ASan checks it)
}
