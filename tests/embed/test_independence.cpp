// Interpreters are independent (SPEC §12): each has its own random stream,
// kernel thread count and default device, whatever others do on this or
// another thread; notes go to the interpreter's own Options::out.
#include <doctest/doctest.h>
#include <nn/nn.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "embed/embed_helpers.h"

namespace {
nn::Options seeded(std::ostringstream& out, uint64_t seed) {
  nn::Options o = nntest::quiet_options(out);
  o.seed = seed;
  return o;
}
std::vector<double> draw(nn::Interpreter& vm) { return vm.eval("rand([6])").tensor().to_vector(); }
}  // namespace

TEST_CASE("creating and using another interpreter does not change one's random stream") {
  std::ostringstream out;
  std::vector<double> first, second;
  {
    nn::Interpreter ref(seeded(out, 1));
    first = draw(ref);
    second = draw(ref);
  }
  CHECK(first != second);
  nn::Interpreter a(seeded(out, 1));
  CHECK(draw(a) == first);
  nn::Interpreter b(seeded(out, 5));  // made between a's draws, seeded, drawing
  std::vector<double> from_b = draw(b);
  b.eval("seed(99)\nrand([100])");
  CHECK(draw(a) == second);
  CHECK(from_b != first);
  nn::Interpreter b2(seeded(out, 5));
  CHECK(draw(b2) == from_b);
}

TEST_CASE("two threads, each with its own interpreter, get the same weights on every run") {
  auto weights = [](uint64_t seed) {
    std::ostringstream out;
    nn::Interpreter vm(seeded(out, seed));
    std::vector<double> all;
    for (int i = 0; i < 20; ++i) {
      std::vector<double> w = vm.eval("Linear(8, 8).w").tensor().to_vector();
      all.insert(all.end(), w.begin(), w.end());
    }
    return all;
  };
  const std::vector<double> ref3 = weights(3), ref4 = weights(4);
  for (int run = 0; run < 3; ++run) {
    std::vector<double> w3, w4;
    std::thread t3([&] { w3 = weights(3); });
    std::thread t4([&] { w4 = weights(4); });
    t3.join();
    t4.join();
    CHECK(w3 == ref3);
    CHECK(w4 == ref4);
  }
}

TEST_CASE("Options::threads is the interpreter's own") {
  std::ostringstream out;
  nn::Options one = nntest::quiet_options(out), two = nntest::quiet_options(out);
  one.threads = 1;
  two.threads = 2;
  nn::Interpreter a(one), b(two);
  // Each computes with its own setting, whichever was made last; a big
  // elementwise op (split over threads when there are several) agrees.
  CHECK(a.eval("sum(ones([200000]) * 2).item()").as_float() == doctest::Approx(400000.0));
  CHECK(b.eval("sum(ones([200000]) * 2).item()").as_float() == doctest::Approx(400000.0));
  CHECK(a.options().threads == 1);
  CHECK(b.options().threads == 2);
}

TEST_CASE("a graph's retrace note goes to Options::out, placed at the host's call") {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  vm.eval("graph twice(x) { return x * 2 }");
  for (int n = 1; n <= 9; ++n) {
    std::vector<float> x(size_t(n), 1.0f);
    nn::Value y = vm.call(std::string("twice"), std::vector<nn::Value>{nn::Tensor::from_blob(x.data(), {n})});
    CHECK(y.tensor().to_vector() == std::vector<double>(size_t(n), 2.0));
  }
  CHECK(nntest::has(out.str(), "note: graph twice retraced at a call from the host"));
  CHECK(!nntest::has(out.str(), "<unknown>"));
}
