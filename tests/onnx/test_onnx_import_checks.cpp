// The importer against onnxruntime where they once differed silently:
// Resize's coordinate transforms with non-integer scales, unsigned integer
// types, opsets past what nn reads, and what node errors name. Models are
// written as protobuf text; expected values are worked out by hand from the
// spec's formulas, and each was also what onnxruntime 1.30 (onnxruntime-node)
// gave for the same model and input.
#include <doctest/doctest.h>
#include <google/protobuf/text_format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
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

// A model of opset `opset` whose graph is `graph` (text of a GraphProto's
// fields), written to a temporary file; returns its path.
std::string model_file(const std::string& name, const std::string& graph, int opset = 17) {
  onnx::ModelProto m;
  const std::string text = "ir_version: 8 opset_import { domain: \"\" version: " + std::to_string(opset) +
                           " } graph { name: \"g\" " + graph + " }";
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &m));
  const auto path = std::filesystem::temp_directory_path() / ("nn_test_" + name + ".onnx");
  std::ofstream out(path, std::ios::binary);
  REQUIRE(m.SerializeToOstream(&out));
  return path.string();
}

std::string input(const std::string& name, int elem, const std::vector<int64_t>& dims) {
  std::string s = "input { name: \"" + name + "\" type { tensor_type { elem_type: " + std::to_string(elem) + " shape {";
  for (int64_t d : dims) s += " dim { dim_value: " + std::to_string(d) + " }";
  return s + " } } } }";
}
std::string output(const std::string& name, const std::vector<int64_t>& dims, int elem = onnx::TensorProto::FLOAT) {
  std::string s = "output { name: \"" + name + "\" type { tensor_type { elem_type: " + std::to_string(elem) + " shape {";
  for (int64_t d : dims) s += " dim { dim_value: " + std::to_string(d) + " }";
  return s + " } } } }";
}

// The model's single output for the given inputs, as doubles.
std::vector<double> run_one(const std::string& path, const std::vector<Tensor>& inputs) {
  auto model = onnx_io::load(path);
  std::vector<Tensor> inits;
  for (const auto& i : onnx_io::signature(*model).initializers) inits.push_back(i.value);
  const auto outs = onnx_io::run(*model, inits, inputs);
  REQUIRE(outs.size() == 1);
  const Tensor y = backend::astype(outs[0], DType::f64);
  return std::vector<double>(y.data<double>(), y.data<double>() + y.numel());
}

std::string load_error(const std::string& path) {
  try {
    onnx_io::load(path);
  } catch (const backend::Error& e) {
    return e.what();
  }
  return "";
}

void check_values(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

// Resize of x f32[1, 1, 1, 5] along its last axis with `scales`.
std::string resize_graph(const std::string& mode, const std::string& coord, const std::string& scales,
                         const std::string& roi = "") {
  return "node { op_type: \"Resize\" input: \"x\" input: \"" + std::string(roi.empty() ? "" : "roi") +
         "\" input: \"sc\" output: \"y\" name: \"rz\" attribute { name: \"mode\" type: STRING s: \"" + mode +
         "\" } attribute { name: \"coordinate_transformation_mode\" type: STRING s: \"" + coord +
         "\" } } initializer { name: \"sc\" data_type: 1 dims: 4 " + scales + " } " +
         (roi.empty() ? "" : "initializer { name: \"roi\" data_type: 1 dims: 8 " + roi + " } ") +
         input("x", 1, {1, 1, 1, 5}) + output("y", {1, 1, 1, 7});
}

const char* kScale15 = "float_data: 1 float_data: 1 float_data: 1 float_data: 1.5";

Tensor ramp5() { return backend::from_doubles({0, 10, 20, 30, 40}, backend::Shape{1, 1, 1, 5}, DType::f32); }

}  // namespace

TEST_CASE("onnx import: Resize align_corners takes the output's length, not scale * in") {
  // 5 -> floor(7.5) = 7: x_original = x * (5 - 1) / (7 - 1).
  const auto y = run_one(model_file("rz_ac", resize_graph("linear", "align_corners", kScale15)), {ramp5()});
  check_values(y, {0, 40.0 / 6, 80.0 / 6, 20, 160.0 / 6, 200.0 / 6, 40});
}

TEST_CASE("onnx import: Resize tf_crop_and_resize with scales takes the output's length") {
  // roi [0.2, 0.9] of the last axis: x_original = 0.2 * 4 + x * 0.7 * 4 / 6.
  const std::string roi =
      "float_data: 0 float_data: 0 float_data: 0 float_data: 0.2 float_data: 1 float_data: 1 float_data: 1 "
      "float_data: 0.9";
  const auto y = run_one(model_file("rz_tfc", resize_graph("linear", "tf_crop_and_resize", kScale15, roi)), {ramp5()});
  std::vector<double> want;
  for (int x = 0; x < 7; ++x) want.push_back(10 * (0.2f * 4 + x * (0.9f - 0.2f) * 4 / 6));
  check_values(y, want);
}

TEST_CASE("onnx import: Resize half_pixel and asymmetric divide by the given scale, not out / in") {
  // x_original = (x + 0.5) / 1.5 - 0.5, clamped to the axis; and x / 1.5.
  check_values(run_one(model_file("rz_hp", resize_graph("linear", "half_pixel", kScale15)), {ramp5()}),
               {0, 5, 35.0 / 3, 55.0 / 3, 25, 95.0 / 3, 115.0 / 3});
  check_values(run_one(model_file("rz_asym", resize_graph("linear", "asymmetric", kScale15)), {ramp5()}),
               {0, 20.0 / 3, 40.0 / 3, 20, 80.0 / 3, 100.0 / 3, 40});
}

TEST_CASE("onnx import: Resize pytorch_half_pixel to one row reads row 0") {
  // 4 rows, scale 0.3 -> floor(1.2) = 1 row at x_original 0 (cubic is exact
  // there); (0 + 0.5) / 0.3 - 0.5 = 1.17 would interpolate toward row 1.
  const std::string g =
      "node { op_type: \"Resize\" input: \"x\" input: \"\" input: \"sc\" output: \"y\" name: \"rz\" attribute { name: "
      "\"mode\" type: STRING s: \"cubic\" } attribute { name: \"coordinate_transformation_mode\" type: STRING s: "
      "\"pytorch_half_pixel\" } } initializer { name: \"sc\" data_type: 1 dims: 4 float_data: 1 float_data: 1 "
      "float_data: 0.3 float_data: 1 } " +
      input("x", 1, {1, 1, 4, 2}) + output("y", {1, 1, 1, 2});
  const Tensor x = backend::from_doubles({0, 1, 10, 11, 20, 21, 30, 31}, backend::Shape{1, 1, 4, 2}, DType::f32);
  check_values(run_one(model_file("rz_pyhp", g), {x}), {0, 1});
}

// ---- unsigned integers

// `op`(a, b) on two inputs of ONNX type `elem` (nn feeds them widened).
std::string unsigned_binary(const std::string& op, int elem, int64_t n) {
  return "node { op_type: \"" + op + "\" input: \"a\" input: \"b\" output: \"y\" name: \"node_" + op + "\" } " +
         input("a", elem, {n}) + input("b", elem, {n}) + output("y", {n}, elem);
}

TEST_CASE("onnx import: unsigned Add, Sub and Mul wrap as ONNX's do") {
  using P = onnx::TensorProto;
  auto i32 = [](std::vector<double> v) { return backend::from_doubles(v, backend::Shape{int64_t(v.size())}, DType::i32); };
  auto i64 = [](std::vector<double> v) { return backend::from_doubles(v, backend::Shape{int64_t(v.size())}, DType::i64); };
  // u8: 1 - 5 = 252, 200 - 5 = 195 (mod 256); 200 + 100 = 44; 16 * 17 = 16.
  check_values(run_one(model_file("u8_sub", unsigned_binary("Sub", P::UINT8, 3)), {i32({1, 200, 255}), i32({5, 5, 5})}),
               {252, 195, 250});
  check_values(run_one(model_file("u8_add", unsigned_binary("Add", P::UINT8, 2)), {i32({200, 1}), i32({100, 2})}), {44, 3});
  check_values(run_one(model_file("u8_mul", unsigned_binary("Mul", P::UINT8, 2)), {i32({16, 3}), i32({17, 5})}), {16, 15});
  // u16: 300^2 = 90000 = 65536 + 24464; 65535^2 = (-1)^2 = 1 (mod 2^16).
  check_values(run_one(model_file("u16_mul", unsigned_binary("Mul", P::UINT16, 2)), {i32({300, 65535}), i32({300, 65535})}),
               {24464, 1});
  // u32: (2^32 - 1)^2 = 1 and 10^10 - 2 * 2^32 = 1410065408 (mod 2^32); 0 - 1 = 2^32 - 1.
  check_values(run_one(model_file("u32_mul", unsigned_binary("Mul", P::UINT32, 2)),
                       {i64({4294967295.0, 100000}), i64({4294967295.0, 100000})}),
               {1, 1410065408});
  check_values(run_one(model_file("u32_sub", unsigned_binary("Sub", P::UINT32, 1)), {i64({0}), i64({1})}), {4294967295.0});
  // Div on unsigned values is exact in nn's signed dtype: 200 / 7 = 28, 255 / 5 = 51.
  check_values(run_one(model_file("u8_div", unsigned_binary("Div", P::UINT8, 2)), {i32({200, 255}), i32({7, 5})}), {28, 51});
}

TEST_CASE("onnx import: INT8 and INT16 Add, Sub and Mul wrap as ONNX's do; their sums are refused") {
  using P = onnx::TensorProto;
  auto i32 = [](std::vector<double> v) { return backend::from_doubles(v, backend::Shape{int64_t(v.size())}, DType::i32); };
  // i8: 100 * 3 = 300 - 256 = 44, -3 * 100 = -300 + 256 = -44, 127 * 2 = 254 - 256 = -2 (onnxruntime's too).
  check_values(run_one(model_file("i8_mul", unsigned_binary("Mul", P::INT8, 3)), {i32({100, -3, 127}), i32({3, 100, 2})}),
               {44, -44, -2});
  // 127 + 1 = -128, -128 - 1 = 127.
  check_values(run_one(model_file("i8_add", unsigned_binary("Add", P::INT8, 1)), {i32({127}), i32({1})}), {-128});
  check_values(run_one(model_file("i8_sub", unsigned_binary("Sub", P::INT8, 1)), {i32({-128}), i32({1})}), {127});
  // i16: 300 * 300 = 90000 - 65536 = 24464.
  check_values(run_one(model_file("i16_mul", unsigned_binary("Mul", P::INT16, 1)), {i32({300}), i32({300})}), {24464});
  // -128 / -1 = 128 and Abs(-128) = Neg(-128) = 128 wrap to -128 (onnxruntime's too); -32768 / -1 to -32768.
  check_values(run_one(model_file("i8_div", unsigned_binary("Div", P::INT8, 3)), {i32({-128, -128, 7}), i32({-1, 1, -2})}),
               {-128, -128, -3});
  check_values(run_one(model_file("i16_div", unsigned_binary("Div", P::INT16, 1)), {i32({-32768}), i32({-1})}), {-32768});
  for (const char* op : {"Abs", "Neg"}) {
    const std::string g = std::string("node { op_type: \"") + op + "\" input: \"a\" output: \"y\" name: \"u\" } " +
                          input("a", P::INT8, {3}) + output("y", {3}, P::INT8);
    check_values(run_one(model_file(std::string("i8_") + op, g), {i32({-128, -5, 127})}),
                 std::string(op) == "Abs" ? std::vector<double>{-128, 5, 127} : std::vector<double>{-128, 5, -127});
  }
  const std::string e = load_error(model_file("i8_reduce", "node { op_type: \"ReduceSum\" input: \"a\" output: \"y\" name: "
                                                           "\"total\" } " + input("a", P::INT8, {3}) + output("y", {1}, P::INT8)));
  CHECK(e.find("INT8") != std::string::npos);
  CHECK(e.find("wraps around modulo 2^8") != std::string::npos);
}

TEST_CASE("onnx import: a value's unsigned type follows it through nodes that keep it") {
  // Gather's result is u8 as its data is, undeclared: its Sub wraps.
  const std::string g =
      "node { op_type: \"Gather\" input: \"a\" input: \"ids\" output: \"g\" name: \"gather\" } "
      "node { op_type: \"Sub\" input: \"g\" input: \"five\" output: \"y\" name: \"sub\" } "
      "initializer { name: \"ids\" data_type: 7 dims: 2 int64_data: 1 int64_data: 0 } "
      "initializer { name: \"five\" data_type: 2 dims: 1 int32_data: 5 } " +
      input("a", onnx::TensorProto::UINT8, {2}) + output("y", {2}, onnx::TensorProto::UINT8);
  check_values(run_one(model_file("u8_follow", g), {backend::from_doubles({1, 200}, backend::Shape{2}, DType::i32)}),
               {195, 252});
}

TEST_CASE("onnx import: unsigned arithmetic nn cannot wrap is refused, naming the node and why") {
  using P = onnx::TensorProto;
  const std::string e = load_error(model_file("u8_reduce", "node { op_type: \"ReduceSum\" input: \"a\" output: \"y\" name: "
                                                           "\"total\" } " + input("a", P::UINT8, {3}) + output("y", {1}, P::UINT8)));
  CHECK(e.find("node `total` (ReduceSum)") != std::string::npos);
  CHECK(e.find("UINT8") != std::string::npos);
  CHECK(e.find("wraps around modulo 2^8") != std::string::npos);
  const std::string p = load_error(model_file("u64_add", unsigned_binary("Add", P::UINT64, 2)));
  CHECK(p.find("node `node_Add` (Add)") != std::string::npos);
  CHECK(p.find("2^64") != std::string::npos);
  CHECK(load_error(model_file("u8_pow", unsigned_binary("Pow", P::UINT8, 2))).find("(Pow)") != std::string::npos);
  const std::string c = load_error(model_file(
      "cast_u64", "node { op_type: \"Cast\" input: \"a\" output: \"y\" name: \"to_u64\" attribute { name: \"to\" type: "
                  "INT i: 13 } } " + input("a", P::INT64, {2}) + output("y", {2}, P::UINT64)));
  CHECK(c.find("node `to_u64` (Cast)") != std::string::npos);
}

TEST_CASE("onnx import: a UINT64 value past i64's range is an error naming the tensor") {
  // 2^64 - 1 would read as -1, 2^63 as -2^63.
  const std::string g =
      "node { op_type: \"Cast\" input: \"big\" output: \"y\" name: \"c\" attribute { name: \"to\" type: INT i: 1 } } "
      "initializer { name: \"big\" data_type: 13 dims: 3 uint64_data: 1 uint64_data: 18446744073709551615 "
      "uint64_data: 9223372036854775808 } " + output("y", {3});
  const std::string e = load_error(model_file("u64_big", g));
  CHECK(e.find("initializer `big`") != std::string::npos);
  CHECK(e.find("18446744073709551615") != std::string::npos);
  // The largest that fits reads as itself.
  const std::string ok =
      "node { op_type: \"Identity\" input: \"big\" output: \"y\" name: \"c\" } "
      "initializer { name: \"big\" data_type: 13 dims: 1 uint64_data: 9223372036854775807 } " + output("y", {1}, onnx::TensorProto::UINT64);
  auto model = onnx_io::load(model_file("u64_max", ok));
  CHECK(onnx_io::signature(*model).initializers[0].value.item_int() == INT64_MAX);
}

// ---- opsets

TEST_CASE("onnx import: a model of an opset past nn's is refused by load and --info alike") {
  const std::string reduce =
      "node { op_type: \"ReduceMean\" input: \"x\" input: \"axes\" output: \"y\" name: \"rm\" } "
      "initializer { name: \"axes\" data_type: 7 dims: 1 int64_data: 0 } " + input("x", 1, {3}) + output("y", {1});
  for (int opset : {18, 30}) {
    const std::string path = model_file("opset" + std::to_string(opset), reduce, opset);
    const std::string e = load_error(path);
    CHECK(e.find("opset " + std::to_string(opset) + "; nn reads opsets up to 17") != std::string::npos);
    CHECK(e.find("checker") == std::string::npos);
    std::string info;
    try {
      onnx_io::describe(path);
    } catch (const backend::Error& d) {
      info = d.what();
    }
    CHECK(info == e);
  }
  // Mish is an opset-18 op: nn does not claim it.
  const auto ops = onnx_io::importable_ops();
  CHECK(std::find(ops.begin(), ops.end(), "Mish") == ops.end());
}

// ---- what node errors name

TEST_CASE("onnx import: Gather's index out of range is reported as written") {
  const std::string g =
      "node { op_type: \"Gather\" input: \"x\" input: \"ids\" output: \"y\" name: \"pick\" } "
      "initializer { name: \"ids\" data_type: 7 dims: 1 int64_data: -3 } " + input("x", 1, {2}) + output("y", {1});
  const std::string path = model_file("gather_oob", g);
  auto model = onnx_io::load(path);
  std::string e;
  try {
    onnx_io::run(*model, std::vector<Tensor>{onnx_io::signature(*model).initializers[0].value},
                 std::vector<Tensor>{backend::from_doubles({1, 2}, backend::Shape{2}, DType::f32)});
  } catch (const backend::Error& err) {
    e = err.what();
  }
  CHECK(e.find("node `pick` (Gather)") != std::string::npos);
  CHECK(e.find("id -3 is out of range") != std::string::npos);
}

TEST_CASE("onnx import: running out of memory in a node names the model and the node") {
  const std::string g =
      "node { op_type: \"ConstantOfShape\" input: \"shape\" output: \"y\" name: \"huge\" } "
      "initializer { name: \"shape\" data_type: 7 dims: 3 int64_data: 100000 int64_data: 100000 int64_data: 100000 } " +
      output("y", {100000, 100000, 100000});
  const std::string path = model_file("oom", g);
  auto model = onnx_io::load(path);
  bool out_of_memory = false;
  std::string e;
  try {
    onnx_io::run(*model, std::vector<Tensor>{onnx_io::signature(*model).initializers[0].value}, {});
  } catch (const backend::OutOfMemory& err) {
    out_of_memory = true;
    e = err.what();
  }
  CHECK(out_of_memory);
  CHECK(e.find(path) != std::string::npos);
  CHECK(e.find("node `huge` (ConstantOfShape)") != std::string::npos);
}

// ---- index ops inside a graph

namespace {
// The model's single output computed by a graph traced from it.
std::vector<double> run_traced(const std::string& path, const std::vector<Tensor>& inputs) {
  auto model = onnx_io::load(path);
  std::vector<Tensor> inits;
  for (const auto& i : onnx_io::signature(*model).initializers) inits.push_back(i.value);
  ir::Tracer tr("t");
  tr.start();
  std::vector<Tensor> traced_in;
  const char* names[] = {"x0", "x1", "x2", "x3"};
  REQUIRE(inputs.size() <= std::size(names));
  for (size_t i = 0; i < inputs.size(); ++i) traced_in.push_back(tr.add_input(inputs[i].type(), names[i]));
  std::vector<Tensor> traced;
  REQUIRE_NOTHROW(traced = onnx_io::run(*model, inits, traced_in));
  REQUIRE(traced.size() == 1);
  CHECK(traced[0].is_traced());
  ir::Graph g = tr.finish(traced);
  tr.stop();
  const ir::CompiledGraph c = ir::compile(std::move(g));
  const auto out = ir::run(c.graph, c.plan, inputs);
  REQUIRE(out.size() == 1);
  const Tensor y = backend::astype(backend::to_device(out[0], backend::cpu_device()), DType::f64);
  return std::vector<double>(y.data<double>(), y.data<double>() + y.numel());
}
}  // namespace

TEST_CASE("onnx import: ScatterElements and GatherND with constant indices run inside a graph") {
  // [1, 2, 3] with 10 written at 2 and 20 at -3 (= 0): [20, 2, 10].
  const std::string scatter =
      "node { op_type: \"ScatterElements\" input: \"x\" input: \"ids\" input: \"upd\" output: \"y\" name: \"sc\" } "
      "initializer { name: \"ids\" data_type: 7 dims: 2 int64_data: 2 int64_data: -3 } "
      "initializer { name: \"upd\" data_type: 1 dims: 2 float_data: 10 float_data: 20 } " +
      input("x", 1, {3}) + output("y", {3});
  const Tensor x = backend::from_doubles({1, 2, 3}, backend::Shape{3}, DType::f32);
  check_values(run_traced(model_file("scatter_graph", scatter), {x}), {20, 2, 10});
  // [[1, 2], [3, 4]] at [1, 0] and [0, -1]: 3 and 2.
  const std::string gather =
      "node { op_type: \"GatherND\" input: \"x\" input: \"ids\" output: \"y\" name: \"gnd\" } "
      "initializer { name: \"ids\" data_type: 7 dims: 2 dims: 2 int64_data: 1 int64_data: 0 int64_data: 0 "
      "int64_data: -1 } " + input("x", 1, {2, 2}) + output("y", {2});
  const Tensor x2 = backend::from_doubles({1, 2, 3, 4}, backend::Shape{2, 2}, DType::f32);
  check_values(run_traced(model_file("gathernd_graph", gather), {x2}), {3, 2});
}
