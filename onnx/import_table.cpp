// What an import entry sees of its node (import_table.h), and the lookup
// over the families' entries.
#include "onnx/import_table.h"

#include <algorithm>
#include <unordered_map>

#include "backend/error.h"
#include "backend/ops.h"
#include "backend/untraced.h"
#include "onnx/onnx_io.h"
#include "onnx/tensor_proto.h"

namespace nn::onnx_io {

using backend::Tensor;

void NodeContext::fail(const std::string& reason) const {
  const std::string name = node_.name().empty() ? node_.output_size() ? node_.output(0) : "" : node_.name();
  throw backend::Error("node `" + name + "` (" + node_.op_type() + "): " + reason);
}

const Tensor& NodeContext::input(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is missing");
  return in_[i];
}

namespace {
// A known input read now, as a host tensor of dtype `as`, inside a trace too:
// its conversions run eagerly (traced, they would give values the trace
// does not know yet).
Tensor known_on_host(const NodeContext& n, size_t i, backend::DType as) {
  const Tensor& t = n.input(i);
  if (t.is_traced())
    n.fail("input " + std::to_string(i) + " (`" + n.node().input(int(i)) +
           "`) says how the node works, so nn reads it while the graph is traced; here it is computed from "
           "the graph's inputs");
  if (as == backend::DType::i64 && backend::is_floating(t.dtype()))
    n.fail("input " + std::to_string(i) + " must hold integers");
  backend::Untraced eager;
  return backend::astype(backend::to_device(t, backend::cpu_device()), as);
}
}  // namespace

std::vector<int64_t> NodeContext::ints(size_t i) const {
  const Tensor v = known_on_host(*this, i, backend::DType::i64);
  return std::vector<int64_t>(v.data<int64_t>(), v.data<int64_t>() + v.numel());
}

std::vector<double> NodeContext::numbers(size_t i) const {
  const Tensor v = known_on_host(*this, i, backend::DType::f64);
  return std::vector<double>(v.data<double>(), v.data<double>() + v.numel());
}

const onnx::AttributeProto* NodeContext::attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t NodeContext::attr_int(const std::string& name, int64_t fallback) const {
  const auto* a = attr(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INT) fail("attribute " + name + " must be an int");
  return a->i();
}

double NodeContext::attr_float(const std::string& name, double fallback) const {
  const auto* a = attr(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT) fail("attribute " + name + " must be a float");
  return a->f();
}

std::string NodeContext::attr_str(const std::string& name, const std::string& fallback) const {
  const auto* a = attr(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::STRING) fail("attribute " + name + " must be a string");
  return a->s();
}

std::vector<int64_t> NodeContext::attr_ints(const std::string& name, std::vector<int64_t> fallback) const {
  const auto* a = attr(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INTS) fail("attribute " + name + " must be a list of ints");
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<double> NodeContext::attr_floats(const std::string& name, std::vector<double> fallback) const {
  const auto* a = attr(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOATS) fail("attribute " + name + " must be a list of floats");
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

Tensor NodeContext::attr_tensor(const std::string& name) const {
  const auto* a = attr(name);
  if (!a || a->type() != onnx::AttributeProto::TENSOR) fail("attribute " + name + " must be a tensor");
  try {
    return to_tensor(a->t(), "attribute " + name);
  } catch (const backend::Error& e) {
    fail(e.what());
  }
}

namespace {
const std::unordered_map<std::string, const ImportEntry*>& table() {
  static const auto map = [] {
    std::unordered_map<std::string, const ImportEntry*> m;
    for (auto family : {elementwise_imports(), logic_imports(), shape_imports(), index_imports(), neural_imports(),
                        conv_imports(), norm_imports(), reduction_imports(), loss_imports(),
                        resize_imports(), scatter_imports(), signal_imports(), rnn_imports(),
                        grid_sample_imports()})
      for (const ImportEntry& e : family) m.emplace(e.op_type, &e);
    return m;
  }();
  return map;
}
}  // namespace

const ImportEntry* find_import(const std::string& op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> importable_ops() {
  std::vector<std::string> names;
  for (const auto& [name, e] : table()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace nn::onnx_io
