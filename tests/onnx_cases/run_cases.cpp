// Runs ONNX's own backend test cases (libonnx-testdata: a folder per case
// with model.onnx and test_data_set_*/{input,output}_*.pb) through nn's
// importer. A case is claimed when nn imports every op of its graph (the
// import table) and its inputs and outputs are tensors of dtypes nn has;
// every claimed case must pass. A case whose input data contradicts its own
// model's declared shapes is skipped, with a line saying so. Usage:
//   onnx_cases DIR [SUBSTRING]   (SUBSTRING: run only the cases whose name holds it)
//   onnx_cases --missing DIR     (also list the unclaimed cases and the ops they lack)
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "backend/ops.h"
#include "onnx/onnx_io.h"
#include "onnx/tensor_proto.h"

namespace fs = std::filesystem;
using nn::backend::DType;
using nn::backend::Tensor;

namespace {

template <class M>
bool parse(const fs::path& file, M& msg) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::stringstream bytes;
  bytes << in.rdbuf();
  return msg.ParseFromString(bytes.str());
}

// Why a case is not claimed ("" when it is): an op outside the table or the
// default domain, or a graph input or output nn cannot hold (a sequence,
// map or optional, or an element type nn has no dtype for, e.g. string).
std::string unclaimed_reason(const onnx::ModelProto& m, const std::set<std::string>& ops) {
  std::set<std::string> missing;
  for (const auto& node : m.graph().node()) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!default_domain) missing.insert(node.domain() + "." + node.op_type());
    else if (!ops.count(node.op_type())) missing.insert(node.op_type());
  }
  std::string why;
  for (const auto& op : missing) why += (why.empty() ? "" : " ") + op;
  if (!why.empty()) return "ops: " + why;
  auto holdable = [](const onnx::ValueInfoProto& v) {
    return v.type().has_tensor_type() && nn::onnx_io::dtype_of(v.type().tensor_type().elem_type()).has_value();
  };
  for (const auto& v : m.graph().input())
    if (!holdable(v)) return "input `" + v.name() + "` is not a tensor of an nn dtype";
  for (const auto& v : m.graph().output())
    if (!holdable(v)) return "output `" + v.name() + "` is not a tensor of an nn dtype";
  return "";
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path f = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(f)) break;
    files.push_back(f);
  }
  return files;
}

// "" when `got` matches `want`; else why not.
std::string compare(const Tensor& got_any, const Tensor& want) {
  const Tensor got = nn::backend::to_device(got_any, nn::backend::cpu_device());
  if (got.shape() != want.shape()) return "shape " + got.shape().str() + ", expected " + want.shape().str();
  if (got.dtype() != want.dtype())
    return "dtype " + std::string(nn::backend::dtype_name(got.dtype())) + ", expected " +
           std::string(nn::backend::dtype_name(want.dtype()));
  const int64_t n = want.numel();
  // bf16 holds 8 significant bits: one unit in its last place (a rounding
  // of the data's generator that differs from nn's) is up to 2^-7 of a value.
  const double rtol = want.dtype() == DType::bf16 ? 1.0 / 128 : 1e-3;
  if (nn::backend::is_floating(want.dtype())) {
    const Tensor g = nn::backend::astype(got, DType::f64), w = nn::backend::astype(want, DType::f64);
    const double *a = g.data<double>(), *b = w.data<double>();
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(a[i]) && std::isnan(b[i])) continue;
      if (a[i] == b[i]) continue;  // equal infinities
      if (!(std::abs(a[i] - b[i]) <= 1e-5 + rtol * std::abs(b[i])))
        return "value " + std::to_string(i) + " is " + std::to_string(a[i]) + ", expected " + std::to_string(b[i]);
    }
    return "";
  }
  const Tensor g = nn::backend::astype(got, DType::i64), w = nn::backend::astype(want, DType::i64);
  for (int64_t i = 0; i < n; ++i)
    if (g.data<int64_t>()[i] != w.data<int64_t>()[i])
      return "value " + std::to_string(i) + " is " + std::to_string(g.data<int64_t>()[i]) + ", expected " +
             std::to_string(w.data<int64_t>()[i]);
  return "";
}

// A .pb file's tensor; `declared` is the graph's element type for it. The
// data of ONNX 1.12 stores bfloat16 values as their bits in UINT16 tensors.
Tensor read_tensor(const fs::path& f, int declared) {
  onnx::TensorProto p;
  if (!parse(f, p)) throw nn::backend::Error(f.filename().string() + " does not parse as a TensorProto");
  if (declared == onnx::TensorProto::BFLOAT16 && p.data_type() == onnx::TensorProto::UINT16)
    p.set_data_type(onnx::TensorProto::BFLOAT16);
  return nn::onnx_io::to_tensor(p, f.filename().string());
}

// The element type the graph declares for its input or output `name`.
int declared_type(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values, const std::string& name) {
  for (const auto& v : values)
    if (v.name() == name) return v.type().tensor_type().elem_type();
  return 0;
}

// Whether a data set's input files contradict the static shapes the model
// declares for its inputs (a fault of the case: ONNX 1.12's castlike
// bfloat16 cases declare `like` as [1] and give [3, 4]).
bool data_contradicts_model(const fs::path& dir, const onnx::ModelProto& m) {
  std::set<std::string> initialized;
  for (const auto& init : m.graph().initializer()) initialized.insert(init.name());
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& v : m.graph().input())
    if (!initialized.count(v.name())) inputs.push_back(&v);
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_directory() || e.path().filename().string().rfind("test_data_set_", 0) != 0) continue;
    const auto files = numbered(e.path(), "input_");
    for (size_t k = 0; k < files.size() && k < inputs.size(); ++k) {
      onnx::TensorProto p;
      if (!parse(files[k], p)) continue;
      const auto& shape = inputs[k]->type().tensor_type().shape();
      if (!inputs[k]->type().tensor_type().has_shape()) continue;
      if (shape.dim_size() != p.dims_size()) return true;
      for (int d = 0; d < shape.dim_size(); ++d)
        if (shape.dim(d).has_dim_value() && shape.dim(d).dim_value() != p.dims(d)) return true;
    }
  }
  return false;
}

// Cases whose data nn does not follow: ONNX 1.12's reference resized with an
// unrounded output length (scale * in) in align_corners, where the spec and
// onnxruntime take the output's length. Their expected output 0 instead, as
// onnxruntime 1.30 (node) gives it for the case's inputs and scales; by hand,
// x * (in - 1) / (out - 1) picks columns 0 and 3 of [1 2 3 4] (4 -> 2), and
// rows and columns 0, 1.5 and 3 of 1..16 (4 -> 3), cubic being exact on a ramp.
const std::map<std::string, std::vector<double>> kFollowsRuntime = {
    {"test_resize_downsample_scales_linear_align_corners", {1, 4}},
    {"test_resize_downsample_scales_cubic_align_corners", {1, 2.5, 4, 7, 8.5, 10, 13, 14.5, 16}},
};

// "" when every data set of a claimed case passes; else the first failure.
std::string run_case(const fs::path& dir, const onnx::ModelProto& proto) {
  auto model = nn::onnx_io::load((dir / "model.onnx").string());
  const auto& sig = nn::onnx_io::signature(*model);
  std::vector<Tensor> inits;
  for (const auto& i : sig.initializers) inits.push_back(i.value);
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set_*";
  for (const auto& set : sets) {
    const auto in_files = numbered(set, "input_"), out_files = numbered(set, "output_");
    if (in_files.size() != sig.inputs.size())
      return set.filename().string() + ": " + std::to_string(in_files.size()) + " input files for " +
             std::to_string(sig.inputs.size()) + " graph inputs";
    std::vector<Tensor> inputs;
    for (size_t k = 0; k < in_files.size(); ++k)
      inputs.push_back(read_tensor(in_files[k], declared_type(proto.graph().input(), sig.inputs[k])));
    const auto outs = nn::onnx_io::run(*model, inits, inputs);
    if (outs.size() != out_files.size())
      return set.filename().string() + ": " + std::to_string(outs.size()) + " outputs, expected " +
             std::to_string(out_files.size());
    const auto follows = kFollowsRuntime.find(dir.filename().string());
    for (size_t k = 0; k < outs.size(); ++k) {
      Tensor want = read_tensor(out_files[k], declared_type(proto.graph().output(), sig.outputs[k]));
      if (follows != kFollowsRuntime.end() && k == 0)
        want = nn::backend::from_doubles(follows->second, want.shape(), want.dtype());
      const std::string why = compare(outs[k], want);
      if (!why.empty()) return set.filename().string() + ": output " + std::to_string(k) + ": " + why;
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  bool list_missing = false;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--missing") list_missing = true;
    else args.push_back(argv[i]);
  }
  if (args.empty() || args.size() > 2) {
    std::fprintf(stderr, "usage: onnx_cases [--missing] DIR [SUBSTRING]\n");
    return 2;
  }
  fs::path root = args[0];
  if (root.filename().empty()) root = root.parent_path();  // "DIR/"
  const std::string filter = args.size() > 1 ? args[1] : "";
  if (!fs::is_directory(root)) {
    std::fprintf(stderr, "onnx_cases: %s is not a directory\n", root.c_str());
    return 2;
  }
  std::set<std::string> ops;
  for (const auto& op : nn::onnx_io::importable_ops()) ops.insert(op);
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());

  int total = 0, claimed = 0, passed = 0;
  for (const auto& dir : cases) {
    const std::string name = dir.filename().string();
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    ++total;
    onnx::ModelProto m;
    if (!parse(dir / "model.onnx", m)) {
      if (list_missing) std::printf("unclaimed %s: model.onnx does not parse\n", name.c_str());
      continue;
    }
    const std::string why_not = unclaimed_reason(m, ops);
    if (!why_not.empty()) {
      if (list_missing) std::printf("unclaimed %s: %s\n", name.c_str(), why_not.c_str());
      continue;
    }
    if (data_contradicts_model(dir, m)) {
      std::printf("skip %s: its input data contradicts the shapes its model declares\n", name.c_str());
      continue;
    }
    ++claimed;
    std::string failure;
    try {
      failure = run_case(dir, m);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (failure.empty()) ++passed;
    else std::printf("FAIL %s: %s\n", name.c_str(), failure.c_str());
  }
  std::printf("%s: %d passed / %d claimed / %d total\n", root.filename().c_str(), passed, claimed, total);
  return passed == claimed ? 0 : 1;
}
