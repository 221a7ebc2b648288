// The profiler on eager op calls: with one active, each kernel an op call
// runs is one `eager` event, in call order; views run no kernel and are not
// recorded; with none active nothing is.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "backend/ops.h"
#include "backend/profiler.h"
#include "tensor_test_util.h"

using namespace nn::backend;
using nntest::check_values;

TEST_CASE("profiler: each eager op call is one event in call order; views are none") {
  Tensor x = full(Shape({2, 3}), 1.5);
  Profiler prof;
  Profiler::set_active(&prof);
  Tensor y = add(x, x);
  Tensor z = reshape(y, {3, 2});
  Tensor w = exp(z);
  Profiler::set_active(nullptr);
  Tensor after = add(w, w);  // not recorded
  check_values(w, std::vector<double>(6, std::exp(3.0)), 1e-5);
  REQUIRE(prof.events().size() == 2);
  CHECK(prof.events()[0].name == "add");
  CHECK(prof.events()[1].name == "exp");
  for (const ProfileEvent& e : prof.events()) {
    CHECK(std::string(e.category) == "eager");
    CHECK(e.end_ns >= e.start_ns);
  }
  CHECK(prof.events()[1].start_ns >= prof.events()[0].end_ns);
}
