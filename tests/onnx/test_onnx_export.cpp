// The ONNX exporter (onnx/exporter.cpp, export_ops.cpp) on graphs traced
// here: a model written, read back and run gives the traced function's
// values at the traced batch size and at another; ops nn cannot write are
// an Error naming the op and its source location; a path that cannot be
// written is an Error and leaves no temporary file.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "backend/autograd.h"
#include "backend/error.h"
#include "backend/nn_ops.h"
#include "backend/ops.h"
#include "backend/source_loc.h"
#include "ir/tracer.h"
#include "onnx/onnx_io.h"

namespace {

using nn::backend::DType;
using nn::backend::Shape;
using nn::backend::Tensor;
namespace backend = nn::backend;
namespace ir = nn::ir;
namespace io = nn::onnx_io;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("nn_test_onnx_export_" + name)).string();
}

// The graph of f traced on an input of `type`, as save_onnx traces it.
template <class F>
ir::Graph trace(const backend::TensorType& type, F f) {
  backend::NoGradGuard no_grad;
  ir::Tracer tr("f");
  tr.graph().locate = [](const ir::Loc& l) { return "model.nn:" + std::to_string(l.begin) + ":1"; };
  tr.start();
  const Tensor x = tr.add_input(type, "x");
  const Tensor y = f(x);
  ir::Graph g = tr.finish(std::vector<Tensor>{y});
  tr.stop();
  return g;
}

io::ExportOptions options() {
  io::ExportOptions o;
  o.inputs = {"x"};
  o.outputs = {"y"};
  return o;
}

double max_diff(const Tensor& a, const Tensor& b) {
  return backend::max(backend::abs(backend::sub(a, b))).item_double();
}

}  // namespace

TEST_CASE("onnx export: an MLP and a conv net read back with a symbolic batch") {
  backend::manual_seed(3);
  const Tensor w1 = backend::param(backend::randn(Shape{4, 8})), b1 = backend::param(backend::randn(Shape{8}));
  const Tensor w2 = backend::param(backend::randn(Shape{8, 3}));
  auto mlp = [&](const Tensor& x) {
    return backend::log_softmax(backend::matmul(backend::gelu(backend::add(backend::matmul(x, w1), b1)), w2), -1);
  };
  const Tensor k = backend::param(backend::randn(Shape{2, 1, 3, 3}));
  auto cnn = [&](const Tensor& x) {
    const Tensor conv = backend::conv2d(x, k, Tensor(), backend::pair(1), backend::pair(1));
    const Tensor y = backend::max_pool2d(backend::relu(conv),
                                         backend::pair(2));
    return backend::flatten(backend::mul(y, backend::scalar(0.5, DType::f64, /*weak=*/true)));
  };
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> f;
    Shape traced, other;
  };
  const Case cases[] = {{"mlp", mlp, Shape{2, 4}, Shape{5, 4}}, {"cnn", cnn, Shape{2, 1, 6, 6}, Shape{3, 1, 6, 6}}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string path = temp_path(std::string(c.name) + ".onnx");
    REQUIRE_NOTHROW(io::save(trace({DType::f32, c.traced}, c.f), options(), path));
    const auto model = io::load(path);
    const io::ModelSignature& sig = io::signature(*model);
    CHECK(sig.inputs == std::vector<std::string>{"x"});
    CHECK(sig.outputs == std::vector<std::string>{"y"});
    REQUIRE(sig.input_types.size() == 1);
    CHECK(sig.input_types[0].shape[0] == -1);  // "N"
    std::vector<Tensor> inits;
    for (const auto& i : sig.initializers) inits.push_back(i.value);
    for (const Shape& s : {c.traced, c.other}) {
      const Tensor x = backend::randn(s);
      const auto out = io::run(*model, inits, std::vector<Tensor>{x});
      REQUIRE(out.size() == 1);
      CHECK(max_diff(out[0], c.f(x)) < 1e-5);
    }
    std::filesystem::remove(path);
  }
}

TEST_CASE("onnx export: a fixed batch when asked") {
  const std::string path = temp_path("fixed.onnx");
  io::ExportOptions o = options();
  o.dynamic_batch = false;
  const ir::Graph g = trace({DType::f32, Shape{2, 3}}, [](const Tensor& x) { return backend::tanh(x); });
  REQUIRE_NOTHROW(io::save(g, o, path));
  const auto model = io::load(path);
  CHECK(io::signature(*model).input_types[0].shape[0] == 2);
  std::filesystem::remove(path);
}

TEST_CASE("onnx export: ops nn cannot write name the op and where it was called") {
  const std::string path = temp_path("random.onnx");
  std::filesystem::remove(path);
  backend::set_op_loc(backend::SourceLoc{1, 12, 14});
  const ir::Graph g = trace({DType::f32, Shape{2, 3}}, [](const Tensor& x) {
    return backend::dropout(x, 0.5, /*training=*/true);
  });
  backend::set_op_loc(backend::SourceLoc{});
  try {
    io::save(g, options(), path);
    FAIL("a random draw was written");
  } catch (const backend::Error& e) {
    const std::string what = e.what();
    CHECK(what.find("`rand` at model.nn:12:1") != std::string::npos);
    CHECK(what.find("draws random numbers") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("onnx export: a path that cannot be written") {
  const ir::Graph g = trace({DType::f32, Shape{2}}, [](const Tensor& x) { return backend::relu(x); });
  CHECK_THROWS_WITH_AS(io::save(g, options(), "/nonexistent-dir/m.onnx"), doctest::Contains("cannot write"),
                       backend::Error);
}

TEST_CASE("onnx export: the table lists the ops it writes") {
  const auto ops = io::exportable_ops();
  CHECK(std::is_sorted(ops.begin(), ops.end()));
  for (const char* op : {"matmul", "conv2d", "max_pool2d", "layer_norm", "batch_norm_apply", "softmax", "reshape",
                         "slice", "take", "gelu", "where", "sum"})
    CHECK(std::find(ops.begin(), ops.end(), op) != ops.end());
  CHECK(std::find(ops.begin(), ops.end(), "rand") == ops.end());
}

TEST_CASE("onnx export: ops that graph passes make, and the rarer ones") {
  // batch_norm_apply and batch_norm_scale (the recompute pass's), the
  // transposed products (transpose-into-matmul's), scatter_add, a weak
  // integer in a float op, a comparison of a float with an integer tensor.
  backend::manual_seed(5);
  const Tensor gamma = backend::param(backend::randn(Shape{3})), beta = backend::param(backend::randn(Shape{3}));
  const Tensor mean = backend::randn(Shape{3});
  const Tensor var = backend::add(backend::rand(Shape{3}), backend::scalar(0.5, DType::f32));
  const Tensor w = backend::param(backend::randn(Shape{4, 3}));
  const Tensor ids = backend::from_ints({2, 0, 1, 1, 0, 2}, Shape{2, 3}, DType::i64);
  auto f = [&](const Tensor& x) {  // x [N, 3]
    const backend::Attrs eps{{"eps", 1e-5}};
    const Tensor bn = backend::call(backend::op(backend::OpId::batch_norm_apply), {x, gamma, beta, mean, var}, eps);
    const Tensor scale = backend::call(backend::op(backend::OpId::batch_norm_scale), {gamma, var}, eps);
    const Tensor nt = backend::call(backend::op(backend::OpId::matmul_nt), {backend::mul(bn, scale), w});  // [N, 4]
    const Tensor tn = backend::call(backend::op(backend::OpId::matmul_tn), {w, w});                        // [3, 3]
    const Tensor s = backend::scatter_add(backend::zeros(Shape{2, 3}), ids, backend::ones(Shape{2, 3}), 1);
    const Tensor mixed = backend::astype(backend::gt(x, backend::scalar_int(0, DType::i64, /*weak=*/true)), DType::f32);
    const Tensor rows = backend::add(backend::sum(tn), backend::sum(s));
    return backend::concat({nt, backend::cumsum(mixed, 1), backend::mul(x, rows)}, 1);
  };
  const std::string path = temp_path("rare.onnx");
  REQUIRE_NOTHROW(io::save(trace({DType::f32, Shape{2, 3}}, f), options(), path));
  const auto model = io::load(path);
  std::vector<Tensor> inits;
  for (const auto& i : io::signature(*model).initializers) inits.push_back(i.value);
  for (const Shape& s : {Shape{2, 3}, Shape{4, 3}}) {
    const Tensor x = backend::randn(s);
    const auto out = io::run(*model, inits, std::vector<Tensor>{x});
    REQUIRE(out.size() == 1);
    CHECK(max_diff(out[0], f(x)) < 1e-5);
  }
  std::filesystem::remove(path);
}

TEST_CASE("onnx export: scatter_add's ids and values broadcast, i32 one_hot ids, f64 layer_norm's statistics") {
  // nn broadcasts one row of ids and values over x's rows; ScatterElements
  // took them as one row (row 1 got nothing), or refused ids of one row
  // beside values of two.
  const Tensor ids = backend::from_ints({0, 1}, Shape{1, 2}, DType::i64);
  const auto scatter = [&](const Tensor& x) {
    return backend::add(backend::scatter_add(x, ids, backend::ones(Shape{1, 2}), 1),
                        backend::scatter_add(x, ids, backend::full(Shape{2, 2}, 2.0), 1));
  };
  const auto hot = [](const Tensor& x) { return backend::one_hot(backend::astype(x, DType::i32), 3); };
  // f64 data: mean and variance in f64 (LayerNormalization's stash_type was
  // left f32, 1.7e-4 off on values near 5000).
  const auto norm = [](const Tensor& x) {
    return backend::layer_norm(x, backend::ones(Shape{4}, DType::f64), backend::zeros(Shape{4}, DType::f64));
  };
  const Tensor x = backend::from_doubles({1, 2, 3, 4, 5, 6, 7, 8}, Shape{2, 4}, DType::f32);
  const Tensor big = backend::from_doubles({5000.1, 4999.3, 5001.7, 4998.2, 1, 2, 3, 4.5}, Shape{2, 4}, DType::f64);
  const Tensor small = backend::from_doubles({2, 0, 1, 1}, Shape{4}, DType::f32);
  const std::string path = temp_path("broadcast_ops.onnx");
  io::ExportOptions fixed = options();
  fixed.dynamic_batch = false;
  // One row spread over a batch that can change has no ONNX form.
  CHECK_THROWS_WITH(io::save(trace(x.type(), scatter), options(), path),
                    doctest::Contains("it spreads ids or values over the batch axis (pass dynamic_batch=false)"));
  for (auto [f, in, tol] : {std::tuple{std::function<Tensor(const Tensor&)>(scatter), x, 0.0},
                            std::tuple{std::function<Tensor(const Tensor&)>(hot), small, 0.0},
                            std::tuple{std::function<Tensor(const Tensor&)>(norm), big, 1e-12}}) {
    for (const io::ExportOptions& o : {options(), fixed}) {
      if (o.dynamic_batch && in.shape() == x.shape() && in.dtype() == DType::f32) continue;  // the scatter, above
      REQUIRE_NOTHROW(io::save(trace(in.type(), f), o, path));
      const auto model = io::load(path);
      std::vector<Tensor> inits;
      for (const auto& i : io::signature(*model).initializers) inits.push_back(i.value);
      const auto out = io::run(*model, inits, std::vector<Tensor>{in});
      REQUIRE(out.size() == 1);
      CHECK(max_diff(backend::astype(out[0], DType::f64), backend::astype(f(in), DType::f64)) <= tol);
    }
  }
  std::filesystem::remove(path);
}

TEST_CASE("onnx export: a constant joined to the input (concat, pad) is written before the node reading it") {
  // Concat names its inputs after making its node: the constant's node came
  // after the Concat, which ONNX's checker refuses. x [2, 3] joined to ones
  // [2, 1], and padded by (1, 2) rows (a concat of zeros), read back and run.
  io::ExportOptions o = options();
  o.dynamic_batch = false;
  const auto joined = [](const Tensor& x) { return backend::concat({x, backend::ones(Shape{2, 1})}, 1); };
  const auto padded = [](const Tensor& x) { return backend::pad(x, {{1, 2}}); };
  for (const auto& f : {std::function<Tensor(const Tensor&)>(joined), std::function<Tensor(const Tensor&)>(padded)}) {
    const std::string path = temp_path("constant_first.onnx");
    REQUIRE_NOTHROW(io::save(trace({DType::f32, Shape{2, 3}}, f), o, path));
    const auto model = io::load(path);
    const Tensor x = backend::from_doubles({1, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::f32);
    const auto out = io::run(*model, {}, std::vector<Tensor>{x});
    REQUIRE(out.size() == 1);
    CHECK(out[0].shape() == f(x).shape());
    CHECK(max_diff(out[0], f(x)) == 0);
    std::filesystem::remove(path);
  }
}

TEST_CASE("onnx export: a concat of mixed dtypes casts before the Concat that reads the casts") {
  // in_as made its Cast after the Concat node: the checker refused the model.
  const auto joined = [](const Tensor& x) { return backend::concat({x, backend::astype(x, DType::i32)}, 1); };
  const std::string path = temp_path("mixed_concat.onnx");
  REQUIRE_NOTHROW(io::save(trace({DType::f32, Shape{2, 3}}, joined), options(), path));
  const Tensor x = backend::from_doubles({1.5, 2, 3, 4, 5, 6}, Shape{2, 3}, DType::f32);
  const auto out = io::run(*io::load(path), {}, std::vector<Tensor>{x});
  REQUIRE(out.size() == 1);
  CHECK(max_diff(out[0], joined(x)) == 0);
  std::filesystem::remove(path);
}

TEST_CASE("onnx export: slicing the batch axis with a dynamic batch is refused") {
  // x[-1] traced at batch 2 read row 1 of every batch: the bounds stayed
  // the traced ones. With a fixed batch it is written.
  const auto last = [](const Tensor& x) {
    backend::IndexItem i;
    i.kind = backend::IndexItem::index;
    i.i = -1;
    return backend::index(x, {i});
  };
  const std::string path = temp_path("batch_slice.onnx");
  try {
    io::save(trace({DType::f32, Shape{2, 3}}, last), options(), path);
    FAIL("a slice of the batch axis was written with a dynamic batch");
  } catch (const backend::Error& e) {
    CHECK(std::string(e.what()).find("it slices or indexes the batch axis (pass dynamic_batch=false)") !=
          std::string::npos);
  }
  io::ExportOptions o = options();
  o.dynamic_batch = false;
  REQUIRE_NOTHROW(io::save(trace({DType::f32, Shape{2, 3}}, last), o, path));
  std::filesystem::remove(path);
}

TEST_CASE("onnx export: bounds that happen to cover the traced batch are refused with a dynamic batch") {
  // x[0:2] of a batch of 2 is all of it, and 2 rows of any other batch: it
  // was written as no slice at all, so a batch of 3 gave 3 rows.
  using Item = backend::IndexItem;
  auto slice = [](std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step = {}) {
    Item i;
    i.start = start;
    i.stop = stop;
    i.step = step;
    return i;
  };
  Item first;
  first.kind = Item::index;
  const std::vector<std::pair<Shape, Item>> pinned = {
      {Shape{2, 3}, slice(0, 2)}, {Shape{2, 3}, slice(-2, {})}, {Shape{2, 3}, slice({}, 5)},
      {Shape{2, 3}, slice(-5, {})}, {Shape{1, 3}, first}};
  for (const auto& [shape, item] : pinned) {
    const auto f = [&item](const Tensor& x) { return backend::mul(backend::index(x, {item}), backend::scalar(2, DType::f32)); };
    try {
      io::save(trace({DType::f32, shape}, f), options(), temp_path("pinned_slice.onnx"));
      FAIL("a slice bounded at the traced batch was written as the whole batch: " << shape.str());
    } catch (const backend::Error& e) {
      CHECK(std::string(e.what()).find("it slices or indexes the batch axis (pass dynamic_batch=false)") !=
            std::string::npos);
    }
  }
  // Open bounds follow any batch: traced at 2, run at 3.
  const std::string path = temp_path("open_slice.onnx");
  for (const Item& item : {slice({}, {}), slice(0, {}), slice({}, {}, 1)}) {
    const auto f = [&item, &slice](const Tensor& x) { return backend::index(x, {item, slice(1, 3)}); };
    REQUIRE_NOTHROW(io::save(trace({DType::f32, Shape{2, 4}}, f), options(), path));
    const Tensor x = backend::from_doubles({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{3, 4}, DType::f32);
    const auto out = io::run(*io::load(path), {}, std::vector<Tensor>{x});
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].shape() == Shape{3, 2});
    CHECK(max_diff(out[0], backend::from_doubles({2, 3, 6, 7, 10, 11}, Shape{3, 2}, DType::f32)) == 0);
  }
  std::filesystem::remove(path);
}

TEST_CASE("onnx export: a reshape to a shape holding a 0 is refused with a dynamic batch") {
  // Axis 0 written as -1 beside a 0 is ambiguous: ONNX refused the model,
  // and nn called it its own bug.
  const auto empty = [](const Tensor& x) {
    backend::IndexItem all, none_of;
    all.kind = none_of.kind = backend::IndexItem::slice;
    none_of.start = 0;
    none_of.stop = 0;
    return backend::reshape(backend::index(x, {all, none_of}), {x.shape()[0], 0, 3});
  };
  try {
    io::save(trace({DType::f32, Shape{2, 6}}, empty), options(), temp_path("empty_reshape.onnx"));
    FAIL("an ambiguous reshape was written");
  } catch (const backend::Error& e) {
    CHECK(std::string(e.what()).find("leaves ambiguous (pass dynamic_batch=false") != std::string::npos);
  }
}

TEST_CASE("onnx export: ops ONNX has no bf16 or bool form of compute in another type, and match nn") {
  // Sin, Cos, Softplus and Round take no bf16 in opset 17 (the checker
  // refused the model as an internal error): they compute in f32 and round
  // once, as nn does; MatMul takes no bools: counted in i32, any true.
  const Tensor h = backend::astype(backend::from_doubles({0.5, 1.5, 2.5, -3.25}, Shape{2, 2}, DType::f32), DType::bf16);
  const Tensor b = backend::from_ints({1, 0, 0, 0}, Shape{2, 2}, DType::boolean);
  using F = std::function<Tensor(const Tensor&)>;
  const std::pair<F, Tensor> cases[] = {
      {[](const Tensor& x) { return backend::sin(x); }, h},
      {[](const Tensor& x) { return backend::cos(x); }, h},
      {[](const Tensor& x) { return backend::softplus(x); }, h},
      {[](const Tensor& x) { return backend::round(x); }, h},
      {[](const Tensor& x) { return backend::matmul(x, backend::transpose(x, 0, 1)); }, b},
  };
  io::ExportOptions fixed = options();
  fixed.dynamic_batch = false;
  const std::string path = temp_path("other_types.onnx");
  for (const auto& [f, in] : cases) {
    REQUIRE_NOTHROW(io::save(trace(in.type(), f), fixed, path));
    const auto model = io::load(path);
    const auto out = io::run(*model, {}, std::vector<Tensor>{in});
    REQUIRE(out.size() == 1);
    CHECK(out[0].dtype() == in.dtype());
    CHECK(max_diff(backend::astype(out[0], DType::f64), backend::astype(f(in), DType::f64)) == 0);
  }
  std::filesystem::remove(path);
}
