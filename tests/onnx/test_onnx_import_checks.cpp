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
