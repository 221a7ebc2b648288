// Tests of the op tables and the registry made from them: every OpId has an
// entry named after it with a CPU kernel, every line of the elementwise
// tables has its kernels where the build says it has them (a CUDA kernel in
// a CUDA build, tile kernels for fusion), attributes default as the table
// says, and a call records an attribute only where it differs from its
// default.
#include <doctest/doctest.h>

#include <string>

#include "backend/cuda_backend.h"
#include "backend/ops/elementwise_params.h"
#include "tensor_test_util.h"

using namespace nn::backend;
using namespace nntest;

TEST_CASE("op tables: every OpId has a registry entry named after it, with a CPU kernel") {
  CHECK(Registry::get().missing().empty());
  for (int i = 0; i < kOpCount; ++i) {
    const OpId id = static_cast<OpId>(i);
    const OpDef& d = op(id);
    CAPTURE(d.name);
    CHECK(d.id == id);
    CHECK(d.name == op_name(id));
    CHECK(Registry::get().find(d.name) == &d);
    CHECK(bool(d.cpu));
  }
  CHECK(Registry::get().find("no_such_op") == nullptr);
  CHECK_THROWS_WITH_AS(op("no_such_op"), "internal: no op named `no_such_op`", Error);
}

TEST_CASE("op tables: each elementwise line has tile kernels, and a CUDA kernel in a CUDA build") {
  // In a CUDA build, the CUDA kernels come with the plugin (loaded here, no
  // GPU needed); a plugin that cannot load here is the CUDA tests' concern.
  const bool cuda = cuda_built() && cuda_load_error().empty();
  auto check_line = [cuda](OpId id, int arity) {
    const OpDef& d = op(id);
    CAPTURE(d.name);
    CHECK(d.num_inputs == arity);
    CHECK(d.elementwise);
    CHECK(bool(d.tile.f32));
    CHECK(bool(d.tile.f64));
    if (cuda) CHECK(bool(d.cuda));
  };
#define NN_CHECK_UNARY(id, ...) check_line(OpId::id, 1);
  NN_UNARY_OPS(NN_CHECK_UNARY)
#undef NN_CHECK_UNARY
#define NN_CHECK_BINARY(id, ...) check_line(OpId::id, 2);
  NN_BINARY_OPS(NN_CHECK_BINARY)
#undef NN_CHECK_BINARY
}

TEST_CASE("op tables: differentiable exactly where the table gives a gradient") {
  CHECK(bool(op(OpId::exp).backward));
  CHECK(bool(op(OpId::floor).backward));  // a defined zero
  CHECK_FALSE(bool(op(OpId::isnan).backward));
  CHECK_FALSE(bool(op(OpId::logical_not).backward));
  CHECK(bool(op(OpId::add).backward));
  CHECK_FALSE(bool(op(OpId::eq).backward));
}

TEST_CASE("op tables: attributes default as the table says and are recorded only when they differ") {
  const OpDef& lr = op(OpId::leaky_relu);
  REQUIRE(lr.attrs.size() == 1);
  CHECK(std::string(lr.attrs[0].name) == "slope");
  CHECK(std::get<double>(lr.attrs[0].fallback) == 0.01);
  CHECK(params_of(lr, {}).v[0] == 0.01);
  CHECK(params_of(lr, Attrs{{"slope", 0.25}}).v[0] == 0.25);
  CHECK(call_attrs(lr, 0.01).empty());
  CHECK(call_attrs(lr, 0.25).get<double>("slope") == 0.25);
  CHECK(params_of(op(OpId::gelu), Attrs{{"approximate", true}}).v[0] == 1.0);
  CHECK(op(OpId::exp).attrs.empty());
  // The default computes as the table says: -2 * 0.01.
  check_values(leaky_relu(t32({-2, 3})), {-0.02, 3});
  check_values(leaky_relu(t32({-2, 3}), 0.5), {-1, 3});
}
