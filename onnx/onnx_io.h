// ONNX models in and out (SPEC §16), with no protobuf type in sight: the
// frontend's save_onnx, load_onnx and `nn onnx` call these. Every failure is
// a backend::Error whose message names the file, the node and the reason;
// the caller adds the script's source location.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/tensor.h"
#include "ir/graph.h"

namespace nn::onnx_io {

// False in a build without libonnx-dev: then every call below throws Error.
bool built();

// ---- import ----
// A model's initializers as CPU tensors, in the file's order (the caller
// moves them and makes the trainable ones params). Trainable: one
// of those the model lists as params (metadata `nn.params`, written by
// save), or in a model without that list a float tensor that is not a batch
// norm's running statistic (those are state).
struct Initializer {
  std::string name;
  backend::Tensor value;
  bool trainable = false;
};
struct ModelSignature {
  std::vector<std::string> inputs;  // graph inputs that are not initializers, in order
  std::vector<backend::TensorType> input_types;  // their declared types; a symbolic dim is -1
  std::vector<std::string> outputs;
  std::vector<Initializer> initializers;
};

// A model read, checked and shape-inferred: its nodes mapped to nn ops.
class ImportedModel;
std::shared_ptr<const ImportedModel> load(const std::string& path);
const ModelSignature& signature(const ImportedModel& m);
// Runs the model's nodes as nn ops (eager, or traced into the active graph):
// `initializers` in signature order (a layer's current params), `inputs` in
// signature order. Returns the outputs in order.
std::vector<backend::Tensor> run(const ImportedModel& m, std::span<const backend::Tensor> initializers,
                                 std::span<const backend::Tensor> inputs);
// `nn onnx --info`: inputs, outputs, ops with counts, params, and what nn
// cannot import.
std::string describe(const std::string& path);
// The ONNX op types load() maps, sorted.
std::vector<std::string> importable_ops();

// ---- export ----
struct ExportOptions {
  bool dynamic_batch = true;          // axis 0 of every input and output is symbolic ("N")
  std::vector<std::string> inputs;    // a name per graph input (the function's parameters)
  std::vector<std::string> outputs;   // a name per graph output
  std::string graph_name = "nn";
  // A captured tensor's name in the script ("model.layers[0].w"), or "":
  // initializers are named after it where it is unique.
  std::function<std::string(const backend::Tensor&)> name_of;
};
// Writes the forward graph `g` (traced, before fusion) as an opset-17 model,
// checked by ONNX's checker first and written atomically. An op nn cannot
// express is an Error naming the op and g.where() of its node.
void save(const ir::Graph& g, const ExportOptions& options, const std::string& path);
// The nn ops save() maps, sorted.
std::vector<std::string> exportable_ops();

}  // namespace nn::onnx_io
