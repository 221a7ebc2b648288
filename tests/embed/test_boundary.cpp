// The host boundary: a missing stdlib at construction, the dtype rule for
// host tensors, and how long data<T>() points at live memory.
#include <doctest/doctest.h>
#include <nn/nn.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "embed/embed_helpers.h"

TEST_CASE("a missing stdlib is an nn::Error at construction, naming where it looked") {
  const char* saved = std::getenv("NN_STDLIB");
  std::string keep = saved ? saved : "";
  setenv("NN_STDLIB", "/nonexistent/nn-stdlib", 1);
  std::ostringstream out;
  nn::Error e = nntest::embed_error_of([&] { nn::Interpreter vm(nntest::quiet_options(out)); });
  if (saved) setenv("NN_STDLIB", keep.c_str(), 1);
  else unsetenv("NN_STDLIB");
  CHECK(nntest::has(e.message(), "the nn stdlib was not found"));
  CHECK(nntest::has(e.message(), "/nonexistent/nn-stdlib/prelude.nn"));
  CHECK(nntest::has(e.message(), "NN_STDLIB"));
  nn::Interpreter vm(nntest::quiet_options(out));  // found again
  CHECK(vm.eval("Linear(2, 2).w").tensor().shape() == std::vector<int64_t>{2, 2});
}

TEST_CASE("host tensors enter scripts with their dtype: nn's promotion rules convert them") {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  vm.eval("let w = [[1.5, 0.0], [0.0, 2.0]]\nfn predict(x) { x @ w }");
  std::vector<int32_t> xi{1, 2};
  nn::Value y = vm.call(std::string("predict"), std::vector<nn::Value>{nn::Tensor::from_blob(xi.data(), {1, 2})});
  CHECK(y.tensor().dtype() == nn::f32);  // i32 @ f32 promotes to f32, as for a script's own tensors
  CHECK(y.tensor().to_vector() == std::vector<double>{1.5, 4.0});
  // A script that needs one dtype says so; the host gets the diagnostic.
  vm.eval("fn strict(x) {\n  assert(x.dtype == f32, \"x must be f32, not \" + str(x.dtype))\n  x\n}");
  nn::Error e = nntest::embed_error_of(
      [&] { vm.call(std::string("strict"), std::vector<nn::Value>{nn::Tensor::from_blob(xi.data(), {1, 2})}); });
  CHECK(nntest::has(e.message(), "x must be f32, not i32"));
  // data<T>() refuses a T that is not the dtype.
  CHECK(nntest::has(nntest::embed_error_of([&] { y.tensor().data<double>(); }).message(), "not f64"));
}

TEST_CASE("data<T>() lives as long as the tensor it was taken from") {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  nn::Tensor t = vm.eval("ones([4]) * 3").tensor();  // keep the tensor, then take its data
  const float* p = t.data<float>();
  vm.eval("let junk = ones([4]) * 7");  // the pool may reuse freed blocks: t's is not freed
  CHECK(p[0] == 3.0f);
  CHECK(p[3] == 3.0f);
}

TEST_CASE("from_blob refuses a shape whose size would not fit in the address space, as copy_from does") {
  float cell = 0;
  const std::vector<std::vector<int64_t>> shapes = {{1LL << 40, 1LL << 40}, {1LL << 62, 4}, {4, 1LL << 62},
                                                    {1LL << 31, 1LL << 31, 1LL << 31}};
  for (const auto& shape : shapes) {
    nn::Error blob = nntest::embed_error_of([&] { nn::Tensor::from_blob(&cell, shape, nn::f32); });
    CHECK(nntest::has(blob.message(), "Tensor::from_blob"));
    CHECK(nntest::has(blob.message(), "would not fit in the address space"));
    // A null pointer with such a shape: the size is what is wrong.
    blob = nntest::embed_error_of([&] { nn::Tensor::from_blob(nullptr, shape, nn::f32); });
    CHECK(nntest::has(blob.message(), "would not fit in the address space"));
    nn::Error copy = nntest::embed_error_of([&] { nn::Tensor::copy_from(&cell, shape, nn::f32); });
    CHECK(nntest::has(copy.message(), "would not fit in the address space"));
  }
  // Too many dimensions is an nn::Error too.
  nn::Error dims = nntest::embed_error_of([&] { nn::Tensor::from_blob(&cell, std::vector<int64_t>(9, 1), nn::f32); });
  CHECK(nntest::has(dims.message(), "at most 8 dimensions"));
  // Empty tensors and ordinary ones are still fine, a null pointer for an empty one too.
  CHECK(nn::Tensor::from_blob(nullptr, {0, 1LL << 40}, nn::f32).numel() == 0);
  CHECK(nn::Tensor::from_blob(&cell, {1, 1}, nn::f32).numel() == 1);
  CHECK(nntest::has(nntest::embed_error_of([&] { nn::Tensor::from_blob(nullptr, {2}, nn::f32); }).message(), "null"));
}
