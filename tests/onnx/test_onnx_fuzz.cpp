// The ONNX loader on damaged files: models cut short and models with bytes
// changed at random (seeded) are loaded and, when they load, run on inputs
// of their declared types. Every outcome is a result or a backend::Error:
// never a crash, an abort or another exception (the sanitizer build runs
// this too). Also: a hand-built model's outputs against values by hand.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "backend/error.h"
#include "backend/ops.h"
#include "onnx/onnx_io.h"

namespace {

using nn::backend::Tensor;
namespace io = nn::onnx_io;

// y = relu(x @ w + b): x f32[N, 2], w [[1, -1, 0.5], [2, 0, -1]], b [0, 1, -3].
std::string small_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("small");
  auto add_init = [&](const char* name, std::vector<int64_t> dims, std::vector<float> v) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float f : v) t->add_float_data(f);
  };
  add_init("w", {2, 3}, {1, -1, 0.5f, 2, 0, -1});
  add_init("b", {3}, {0, 1, -3});
  auto add_value = [](onnx::ValueInfoProto* v, const char* name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = tt->mutable_shape();
    shape->add_dim()->set_dim_param("N");
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  };
  add_value(g->add_input(), "x", {2});
  add_value(g->add_output(), "y", {3});
  auto add_node = [&](const char* op, std::vector<const char*> in, const char* out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(std::string(op) + "_0");
    for (const char* i : in) n->add_input(i);
    n->add_output(out);
  };
  add_node("MatMul", {"x", "w"}, "xw");
  add_node("Add", {"xw", "b"}, "z");
  add_node("Relu", {"z"}, "y");
  return m.SerializeAsString();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("nn_onnx_" + std::to_string(::getpid()) + "_" + name)).string();
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Loads and runs the file; true when it ran, false on a backend::Error.
// Anything else fails the test.
bool load_and_run(const std::string& path) {
  try {
    auto m = io::load(path);
    const io::ModelSignature& sig = io::signature(*m);
    std::vector<Tensor> inits, inputs;
    for (const auto& i : sig.initializers) inits.push_back(i.value);
    for (const auto& t : sig.input_types) {
      std::vector<int64_t> dims(t.shape.dims().begin(), t.shape.dims().end());
      int64_t n = 1;
      for (int64_t& d : dims) n *= (d = d < 0 ? 1 : std::min<int64_t>(d, 64));
      if (n > (1 << 20)) return false;  // a damaged shape: too large to feed
      inputs.push_back(nn::backend::zeros(nn::backend::Shape::of(dims), t.dtype));
    }
    io::run(*m, inits, inputs);
    return true;
  } catch (const nn::backend::Error&) {
    return false;
  } catch (const std::exception& e) {
    FAIL("not a backend::Error: " << e.what());
  } catch (...) {
    FAIL("an exception that is not a std::exception");
  }
  return false;
}

// The models damaged: the hand-built one and some of ONNX's own test models.
std::vector<std::string> sample_models() {
  std::vector<std::string> models{small_model()};
  const std::string dir = "/usr/share/libonnx-testdata/data/pytorch-converted/";
  for (const char* name : {"test_Conv2d", "test_BatchNorm2d_eval", "test_Linear", "test_MaxPool2d", "test_Embedding"})
    if (std::filesystem::exists(dir + name + "/model.onnx")) models.push_back(read(dir + name + "/model.onnx"));
  return models;
}

}  // namespace

TEST_CASE("onnx: a hand-built model computes relu(x @ w + b)") {
  if (!io::built()) return;
  const std::string path = temp_path("small.onnx");
  write(path, small_model());
  auto m = io::load(path);
  const io::ModelSignature& sig = io::signature(*m);
  REQUIRE(sig.inputs == std::vector<std::string>{"x"});
  REQUIRE(sig.outputs == std::vector<std::string>{"y"});
  REQUIRE(sig.initializers.size() == 2);
  CHECK(sig.initializers[0].trainable);
  std::vector<Tensor> inits{sig.initializers[0].value, sig.initializers[1].value};
  // x = [[1, 2], [-1, 1]]: xw = [[5, -1, -1.5], [1, 1, -1.5]], + b = [[5, 0, -4.5], [1, 2, -4.5]]
  Tensor x = nn::backend::from_doubles({1, 2, -1, 1}, {2, 2}, nn::backend::DType::f32);
  Tensor y = io::run(*m, inits, std::vector<Tensor>{x})[0];
  REQUIRE(y.shape() == nn::backend::Shape{2, 3});
  const float want[] = {5, 0, 0, 1, 2, 0};
  for (int i = 0; i < 6; ++i) CHECK(y.data<float>()[i] == doctest::Approx(want[i]));
  // A wrong input type is an error naming the input.
  Tensor bad = nn::backend::zeros({2, 5});
  CHECK_THROWS_WITH_AS(io::run(*m, inits, std::vector<Tensor>{bad}), doctest::Contains("input `x` is f32[?, 2]"),
                       nn::backend::Error);
  std::remove(path.c_str());
}

TEST_CASE("onnx: missing, empty and foreign files are errors naming the file") {
  if (!io::built()) return;
  CHECK_THROWS_WITH_AS(io::load("/nonexistent/model.onnx"),
                       doctest::Contains("`/nonexistent/model.onnx`: cannot open: No such file"), nn::backend::Error);
  // Only regular files: /dev/zero was read until memory ran out, a FIFO
  // no one writes blocked the open for ever.
  CHECK_THROWS_WITH_AS(io::load("/dev/zero"), "`/dev/zero`: is not a regular file", nn::backend::Error);
  CHECK_THROWS_WITH_AS(io::load("/tmp"), "`/tmp`: is a folder, not a file", nn::backend::Error);
  const std::string fifo = temp_path("fifo.onnx");
  std::remove(fifo.c_str());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(io::load(fifo), ("`" + fifo + "`: is not a regular file").c_str(), nn::backend::Error);
  std::remove(fifo.c_str());
  const std::string path = temp_path("text.onnx");
  write(path, "this is not a model\n");
  CHECK_THROWS_WITH_AS(io::load(path), doctest::Contains("is not an ONNX model"), nn::backend::Error);
  write(path, "");
  CHECK_THROWS_AS(io::load(path), nn::backend::Error);
  std::remove(path.c_str());
}

TEST_CASE("onnx: damaged models load and run, or fail with an error; never crash") {
  if (!io::built()) return;
  const std::string path = temp_path("damaged.onnx");
  std::mt19937 rng(20261128);
  int ran = 0, refused = 0;
  for (const std::string& model : sample_models()) {
    // Cut short at a spread of lengths.
    for (size_t k = 1; k <= 24; ++k) {
      write(path, model.substr(0, model.size() * k / 25));
      (load_and_run(path) ? ran : refused)++;
    }
    // 1 to 4 bytes changed at random.
    for (int trial = 0; trial < 60; ++trial) {
      std::string bytes = model;
      const int changes = 1 + int(rng() % 4);
      for (int c = 0; c < changes; ++c) bytes[rng() % bytes.size()] = char(rng() & 0xff);
      write(path, bytes);
      (load_and_run(path) ? ran : refused)++;
    }
  }
  std::remove(path.c_str());
  MESSAGE("damaged models: " << ran << " ran, " << refused << " refused");
  CHECK(refused > 0);
}
