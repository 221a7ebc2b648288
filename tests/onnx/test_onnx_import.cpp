// The ONNX importer on hand-built models (what ONNX's own test cases, run by
// tests/onnx_cases, do not show): shape arithmetic folded while a graph is
// traced, and the errors a user gets for an op nn does not import or an
// input of the wrong dtype.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "backend/error.h"
#include "backend/ops.h"
#include "ir/compile.h"
#include "ir/executor.h"
#include "ir/tracer.h"
#include "onnx/onnx_io.h"

using namespace nn;
using backend::DType;
using backend::Tensor;

namespace {

void add_value(onnx::ValueInfoProto* v, const std::string& name, int elem, const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                          std::vector<std::string> out, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

void add_int_constant(onnx::GraphProto* g, const std::string& out, const std::vector<int64_t>& v, bool i32) {
  auto* n = add_node(g, "Constant", {}, {out}, out + "_const");
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(i32 ? onnx::TensorProto::INT32 : onnx::TensorProto::INT64);
  t->add_dims(int64_t(v.size()));
  for (int64_t x : v) {
    if (i32) t->add_int32_data(int32_t(x));
    else t->add_int64_data(x);
  }
}
void add_int64_constant(onnx::GraphProto* g, const std::string& out, const std::vector<int64_t>& v) {
  add_int_constant(g, out, v, false);
}

onnx::ModelProto model_with(const std::function<void(onnx::GraphProto*)>& build) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  build(g);
  return m;
}

std::string write_model(const onnx::ModelProto& m, const std::string& file) {
  const auto path = std::filesystem::temp_directory_path() / file;
  std::ofstream out(path, std::ios::binary);
  REQUIRE(m.SerializeToOstream(&out));
  return path.string();
}

// x f32[2, 3, 4] -> Reshape(x, Concat(Gather(Shape(x), [0]), [-1])) * 2: f32[2, 12].
std::string reshape_chain_model() {
  return write_model(model_with([](onnx::GraphProto* g) {
                       add_value(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3, 4});
                       add_value(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 12});
                       add_node(g, "Shape", {"x"}, {"s"}, "shape");
                       add_int64_constant(g, "zero", {0});
                       add_node(g, "Gather", {"s", "zero"}, {"batch"}, "gather");
                       add_int64_constant(g, "minus_one", {-1});
                       add_node(g, "Concat", {"batch", "minus_one"}, {"target"}, "concat")->add_attribute()->CopyFrom([] {
                         onnx::AttributeProto a;
                         a.set_name("axis");
                         a.set_type(onnx::AttributeProto::INT);
                         a.set_i(0);
                         return a;
                       }());
                       add_node(g, "Reshape", {"x", "target"}, {"r"}, "reshape");
                       add_node(g, "Add", {"r", "r"}, {"y"}, "double");
                     }),
                     "nn_test_reshape_chain.onnx");
}

// The Error loading the model at `path` gives ("" when it loads).
std::string load_error(const std::string& path) {
  try {
    onnx_io::load(path);
  } catch (const backend::Error& e) {
    return e.what();
  }
  return "";
}

Tensor arange_input() {
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[size_t(i)] = i - 7.5;
  return backend::from_doubles(v, backend::Shape{2, 3, 4}, DType::f32);
}

// What the model computes, worked out on the host: row-major order is kept
// by the reshape, so element k of the [2, 12] result is 2 * (k - 7.5).
void check_doubled(const Tensor& y) {
  REQUIRE(y.shape() == backend::Shape{2, 12});
  REQUIRE(y.dtype() == DType::f32);
  const Tensor h = backend::to_device(y, backend::cpu_device());
  for (int k = 0; k < 24; ++k) CHECK(h.data<float>()[k] == doctest::Approx(2 * (k - 7.5)));
}

}  // namespace

TEST_CASE("onnx import: Shape -> Gather -> Concat -> Reshape runs eagerly") {
  const auto model = onnx_io::load(reshape_chain_model());
  const Tensor x = arange_input();
  const auto out = onnx_io::run(*model, {}, std::vector<Tensor>{x});
  REQUIRE(out.size() == 1);
  check_doubled(out[0]);
}

TEST_CASE("onnx import: the shape arithmetic folds while a graph is traced") {
  const auto model = onnx_io::load(reshape_chain_model());
  ir::Tracer tr("t");
  tr.start();
  const Tensor tx = tr.add_input(backend::TensorType{DType::f32, backend::Shape{2, 3, 4}}, "x");
  std::vector<Tensor> traced;
  REQUIRE_NOTHROW(traced = onnx_io::run(*model, {}, std::vector<Tensor>{tx}));
  REQUIRE(traced.size() == 1);
  CHECK(traced[0].is_traced());
  CHECK(traced[0].shape() == backend::Shape{2, 12});
  ir::Graph g = tr.finish(traced);
  tr.stop();
  const ir::CompiledGraph c = ir::compile(std::move(g));
  const auto out = ir::run(c.graph, c.plan, std::vector<Tensor>{arange_input()});
  REQUIRE(out.size() == 1);
  check_doubled(out[0]);
}

TEST_CASE("onnx import: an input that says how a node works (CumSum's axis, Pad's pads) is read inside a trace") {
  // x f32[2, 3] -> CumSum(x, axis [1] as i32) then Pad(.., pads [0, 1, 0,
  // 2]): the rows' running sums with a zero column before and two after. A
  // Constant is known while the graph is traced; reading it (and widening
  // the i32 axis) must not be traced too.
  const std::string path = write_model(model_with([](onnx::GraphProto* g) {
                                         add_value(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
                                         add_value(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 6});
                                         add_int_constant(g, "axis", {1}, /*i32=*/true);
                                         add_node(g, "CumSum", {"x", "axis"}, {"c"}, "cumsum");
                                         add_int64_constant(g, "pads", {0, 1, 0, 2});
                                         add_node(g, "Pad", {"c", "pads"}, {"y"}, "pad");
                                       }),
                                       "nn_test_known_inputs.onnx");
  const auto model = onnx_io::load(path);
  ir::Tracer tr("t");
  tr.start();
  const Tensor tx = tr.add_input(backend::TensorType{DType::f32, backend::Shape{2, 3}}, "x");
  std::vector<Tensor> traced;
  REQUIRE_NOTHROW(traced = onnx_io::run(*model, {}, std::vector<Tensor>{tx}));
  ir::Graph g = tr.finish(traced);
  tr.stop();
  const ir::CompiledGraph c = ir::compile(std::move(g));
  const Tensor x = backend::from_doubles({1, 2, 3, 4, 5, 6}, backend::Shape{2, 3}, DType::f32);
  const auto out = ir::run(c.graph, c.plan, std::vector<Tensor>{x});
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].shape() == backend::Shape{2, 6});
  const std::vector<float> want{0, 1, 3, 6, 0, 0, 0, 4, 9, 15, 0, 0};
  CHECK(std::vector<float>(out[0].data<float>(), out[0].data<float>() + 12) == want);
}

TEST_CASE("onnx import: an op nn does not import names the op, the node and the opset") {
  const std::string path = write_model(model_with([](onnx::GraphProto* g) {
                                         add_value(g->add_input(), "x", onnx::TensorProto::FLOAT, {3});
                                         add_value(g->add_output(), "y", onnx::TensorProto::FLOAT, {3});
                                         add_node(g, "Acos", {"x"}, {"y"}, "arc");
                                       }),
                                       "nn_test_unknown_op.onnx");
  const std::string msg = load_error(path);
  CHECK(msg.find("Acos") != std::string::npos);
  CHECK(msg.find("`arc`") != std::string::npos);
  CHECK(msg.find("opset 17") != std::string::npos);
}

TEST_CASE("onnx import: an op of another domain names its domain, not the default domain's opset") {
  onnx::ModelProto m = model_with([](onnx::GraphProto* g) {
    add_value(g->add_input(), "x", onnx::TensorProto::FLOAT, {3});
    add_value(g->add_output(), "y", onnx::TensorProto::FLOAT, {3});
    add_node(g, "Foo", {"x"}, {"y"}, "custom")->set_domain("com.example");
  });
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  const std::string path = write_model(m, "nn_test_custom_domain.onnx");
  const std::string msg = load_error(path);
  CHECK(msg.find("com.example.Foo") != std::string::npos);
  CHECK(msg.find("domain `com.example`") != std::string::npos);
  CHECK(msg.find("opset") == std::string::npos);
}

TEST_CASE("onnx import: a bool tensor's raw bytes other than 0 are true, held as 1") {
  // Raw bytes 02 01 00: copied as they were, the first compared unequal to
  // true and cast to 2.
  const auto model = onnx_io::load(write_model(model_with([](onnx::GraphProto* g) {
                                                 add_value(g->add_output(), "y", onnx::TensorProto::BOOL, {3});
                                                 auto* c = g->add_initializer();
                                                 c->set_name("c");
                                                 c->set_data_type(onnx::TensorProto::BOOL);
                                                 c->add_dims(3);
                                                 c->set_raw_data(std::string("\x02\x01\x00", 3));
                                                 add_node(g, "Identity", {"c"}, {"y"}, "same");
                                               }),
                                               "nn_test_bool_raw.onnx"));
  const Tensor c = onnx_io::signature(*model).initializers.at(0).value;
  const Tensor i = backend::astype(c, DType::i32);
  CHECK(i.data<int32_t>()[0] == 1);
  CHECK(i.data<int32_t>()[1] == 1);
  CHECK(i.data<int32_t>()[2] == 0);
}

TEST_CASE("onnx import: a node of another domain with no name and no output is named by its op") {
  // node.output(0) of no outputs made protobuf abort the process.
  onnx::ModelProto m = model_with([](onnx::GraphProto* g) {
    add_value(g->add_input(), "x", onnx::TensorProto::FLOAT, {2});
    add_value(g->add_output(), "x", onnx::TensorProto::FLOAT, {2});
    add_node(g, "Bar", {"x"}, {}, "")->set_domain("foo");
  });
  auto* custom = m.add_opset_import();
  custom->set_domain("foo");
  custom->set_version(1);
  const std::string msg = load_error(write_model(m, "nn_test_no_output.onnx"));
  CHECK(msg.find("node `Bar` is foo.Bar, of the domain `foo`") != std::string::npos);
}

TEST_CASE("onnx import: an input of another dtype than the model declares is an Error") {
  const std::string path = write_model(model_with([](onnx::GraphProto* g) {
                                         add_value(g->add_input(), "x", onnx::TensorProto::FLOAT, {3});
                                         add_value(g->add_output(), "y", onnx::TensorProto::FLOAT, {3});
                                         add_node(g, "Neg", {"x"}, {"y"}, "negate");
                                       }),
                                       "nn_test_dtype.onnx");
  const auto model = onnx_io::load(path);
  const Tensor wrong = backend::from_ints({1, 2, 3}, backend::Shape{3}, DType::i64);
  CHECK_THROWS_AS(onnx_io::run(*model, {}, std::vector<Tensor>{wrong}), backend::Error);
  // The right dtype runs: -[1.5, -2, 0] is [-1.5, 2, 0].
  const Tensor right = backend::from_doubles({1.5, -2, 0}, backend::Shape{3}, DType::f32);
  const Tensor y = backend::to_device(onnx_io::run(*model, {}, std::vector<Tensor>{right})[0], backend::cpu_device());
  CHECK(y.data<float>()[0] == -1.5f);
  CHECK(y.data<float>()[1] == 2.0f);
  CHECK(y.data<float>()[2] == 0.0f);
}

TEST_CASE("onnx import: QuantizeLinear saturates to the zero point's type, which nn holds widened") {
  // y = saturate(round(x / 0.5) + zp): int8 zero point 1 saturates to [-128, 127], uint8 to [0, 255].
  auto build = [](int zp_type, int zp) {
    return model_with([&](onnx::GraphProto* g) {
      add_value(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
      add_value(g->add_output(), "y", zp_type, {4});
      auto* scale = g->add_initializer();
      scale->set_name("scale");
      scale->set_data_type(onnx::TensorProto::FLOAT);
      scale->add_float_data(0.5f);
      auto* z = g->add_initializer();
      z->set_name("zp");
      z->set_data_type(zp_type);
      z->add_int32_data(zp);
      add_node(g, "QuantizeLinear", {"x", "scale", "zp"}, {"y"}, "quantize");
    });
  };
  const Tensor x = backend::from_doubles({-1000, -1.25, 0.75, 1000}, backend::Shape{4}, DType::f32);
  auto run = [&](const onnx::ModelProto& m, const std::string& file) {
    const auto model = onnx_io::load(write_model(m, file));
    std::vector<Tensor> inits;
    for (const auto& i : onnx_io::signature(*model).initializers) inits.push_back(i.value);
    return backend::to_device(onnx_io::run(*model, inits, std::vector<Tensor>{x})[0], backend::cpu_device());
  };
  // -1.25 / 0.5 = -2.5 rounds (half to even) to -2; 0.75 / 0.5 = 1.5 rounds to 2.
  const Tensor s8 = run(build(onnx::TensorProto::INT8, 1), "nn_test_quantize_int8.onnx");
  REQUIRE(s8.dtype() == DType::i32);
  CHECK(s8.data<int32_t>()[0] == -128);
  CHECK(s8.data<int32_t>()[1] == -1);
  CHECK(s8.data<int32_t>()[2] == 3);
  CHECK(s8.data<int32_t>()[3] == 127);
  const Tensor u8 = run(build(onnx::TensorProto::UINT8, 1), "nn_test_quantize_uint8.onnx");
  CHECK(u8.data<int32_t>()[0] == 0);
  CHECK(u8.data<int32_t>()[1] == 0);
  CHECK(u8.data<int32_t>()[2] == 3);
  CHECK(u8.data<int32_t>()[3] == 255);
}

// A Pad whose pads overflow an axis, ask for more memory than there is, or
// crop more than the axis holds (-2^63 included) is an error when the model
// runs, never a hang or a silently wrong crop.
TEST_CASE("onnx import: Pad's huge or over-cropping pads are errors") {
  auto run_error = [](const char* mode, const std::vector<int64_t>& pads, const char* file) {
    const std::string path = write_model(model_with([&](onnx::GraphProto* g) {
                                           add_value(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
                                           add_value(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
                                           add_int64_constant(g, "pads", pads);
                                           auto* a = add_node(g, "Pad", {"x", "pads"}, {"y"}, "pad")->add_attribute();
                                           a->set_name("mode");
                                           a->set_type(onnx::AttributeProto::STRING);
                                           a->set_s(mode);
                                         }),
                                         file);
    const auto model = onnx_io::load(path);
    try {
      onnx_io::run(*model, {}, std::vector<Tensor>{backend::ones(backend::Shape{2, 3}, DType::f32)});
    } catch (const backend::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const int64_t huge = int64_t(1) << 40, lowest = std::numeric_limits<int64_t>::min();
  CHECK(run_error("reflect", {0, huge, 0, huge}, "nn_test_pad_huge.onnx").find("out of memory") != std::string::npos);
  CHECK(run_error("edge", {0, huge, 0, huge}, "nn_test_pad_huge_edge.onnx").find("out of memory") != std::string::npos);
  CHECK(run_error("edge", {0, std::numeric_limits<int64_t>::max(), 0, 5}, "nn_test_pad_overflow.onnx")
            .find("longer than 2^63") != std::string::npos);
  CHECK(run_error("constant", {0, -5, 0, 0}, "nn_test_pad_crop.onnx").find("pad -5 crops more than axis 1's 3") !=
        std::string::npos);
  CHECK(run_error("constant", {0, 0, 0, lowest}, "nn_test_pad_crop_min.onnx").find("crops more than axis 1's 3") !=
        std::string::npos);
}
