// The host boundary: a missing stdlib at construction, the dtype rule for
// host tensors, and how long data<T>() points at live memory.
#include <doctest/doctest.h>
#include <nn/nn.h>

#include <cstdlib>
#include <optional>
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

TEST_CASE("copy_from of a vector checks its size against the shape") {
  // It copied the shape's bytes whatever the vector held: a read past its end.
  const std::vector<float> two{1, 2};
  nn::Error e = nntest::embed_error_of([&] { nn::Tensor::copy_from(two, {3}); });
  CHECK(e.message() == "Tensor::copy_from: the vector holds 2 elements, the shape [3] 3");
  CHECK(nntest::embed_error_of([&] { nn::Tensor::copy_from(two, {1}); }).message() ==
        "Tensor::copy_from: the vector holds 2 elements, the shape [1] 1");
  CHECK(nn::Tensor::copy_from(two, {2, 1}).to_vector() == std::vector<double>{1, 2});
}

TEST_CASE("an nn::Args kept past its call fails as an nn::Error, reading nothing of the call") {
  std::ostringstream out;
  nn::Interpreter vm(nntest::quiet_options(out));
  std::optional<nn::Args> kept;
  vm.define("keep", [&](nn::Args a) -> nn::Value {
    kept.emplace(a);
    return a[0];
  });
  CHECK(vm.eval("keep(\"s\")").str() == "s");
  // Its values stay; a failing accessor is a plain error, no longer one at
  // the script's call (whose frame is gone).
  CHECK((*kept)[0].str() == "s");
  nn::Error e = nntest::embed_error_of([&] { kept->integer(0); });
  CHECK(nntest::has(e.message(), "keep: argument 1"));
  CHECK(nntest::has(nntest::embed_error_of([&] { kept->tensor(0); }).message(), "expected a tensor, got str"));
}

TEST_CASE("values made in a host function under a memory cap fail as nn::Errors") {
  std::ostringstream out;
  nn::Options o = nntest::quiet_options(out);
  o.max_memory_bytes = 4096;
  nn::Interpreter vm(o);
  std::string caught;
  vm.define("make", [&](nn::Args) -> nn::Value {
    try {
      return nn::Value(std::string(100000, 'x'));
    } catch (const nn::Error& e) {  // it was the interpreter's OutOfMemory
      caught = e.message();
      return 0;
    }
  });
  CHECK(vm.eval("make()").as_int() == 0);
  CHECK(nntest::has(caught, "out of memory"));
  // A value nested too deeply to print is an nn::Error too.
  nn::Value d = 1;
  for (int i = 0; i < 100000; ++i) d = nn::Value::list({d});
  CHECK(nntest::has(nntest::embed_error_of([&] { (void)d.str(); }).message(), "nested too deeply"));
}
