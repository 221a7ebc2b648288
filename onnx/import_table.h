// The import table: one entry per ONNX op type nn reads, mapping a node to
// nn op calls (backend/ops.h, nn_ops.h). The calls go through dispatch, so an
// imported model runs eagerly, records autodiff, or is traced into a graph
// like any nn code. Entries live by family in import_*.cpp; this header is
// what an entry sees of its node.
#pragma once
#include <onnx/onnx_pb.h>

#include <span>
#include <string>
#include <vector>

#include "backend/tensor.h"

namespace nn::onnx_io {

class NodeContext {
 public:
  NodeContext(const onnx::NodeProto& node, int opset, std::span<const backend::Tensor> inputs,
              std::span<const int> input_types = {})
      : node_(node), opset_(opset), in_(inputs), types_(input_types) {}
  const onnx::NodeProto& node() const { return node_; }
  int opset() const { return opset_; }  // of the default domain

  // Inputs by position; an omitted optional input ("" or past the end) is absent.
  size_t num_inputs() const { return in_.size(); }
  bool has_input(size_t i) const { return i < in_.size() && in_[i].defined(); }
  const backend::Tensor& input(size_t i) const;  // fails when absent
  // The ONNX element type (TensorProto::DataType) the model gives input i,
  // or 0 when unknown: nn's dtypes widen u8/i8/u16/i16 to i32, so an op whose
  // result depends on the narrow type (QuantizeLinear's saturation) asks.
  int input_type(size_t i) const { return i < types_.size() ? types_[i] : 0; }
  // The values of an input that says how (Reshape's shape, Slice's starts):
  // read on the host, so it must not be computed from the graph's inputs
  // while a graph is traced (the import folds constants so it seldom is).
  std::vector<int64_t> ints(size_t i) const;
  std::vector<double> numbers(size_t i) const;

  bool has_attr(const std::string& name) const { return attr(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  double attr_float(const std::string& name, double fallback) const;
  std::string attr_str(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> attr_floats(const std::string& name, std::vector<double> fallback = {}) const;
  backend::Tensor attr_tensor(const std::string& name) const;  // fails when absent
  const onnx::AttributeProto* attr(const std::string& name) const;

  // Throws Error: "node `name` (Op): reason" (the runner adds the file).
  [[noreturn]] void fail(const std::string& reason) const;

 private:
  const onnx::NodeProto& node_;
  int opset_;
  std::span<const backend::Tensor> in_;
  std::span<const int> types_;
};

// Returns the node's outputs in order (fewer when trailing optional outputs
// are not computed: the runner fails if the model reads one of them).
using ImportFn = std::vector<backend::Tensor> (*)(const NodeContext& n);
struct ImportEntry {
  const char* op_type;
  ImportFn fn;
};

// The families' entries (import_*.cpp).
std::span<const ImportEntry> elementwise_imports();
std::span<const ImportEntry> shape_imports();
std::span<const ImportEntry> neural_imports();
std::span<const ImportEntry> reduction_imports();
std::span<const ImportEntry> logic_imports();
std::span<const ImportEntry> index_imports();
std::span<const ImportEntry> conv_imports();
std::span<const ImportEntry> norm_imports();
std::span<const ImportEntry> loss_imports();
std::span<const ImportEntry> resize_imports();
std::span<const ImportEntry> scatter_imports();
std::span<const ImportEntry> signal_imports();
std::span<const ImportEntry> rnn_imports();
std::span<const ImportEntry> grid_sample_imports();

// The entry for an op type of the default domain, or null.
const ImportEntry* find_import(const std::string& op_type);

}  // namespace nn::onnx_io
