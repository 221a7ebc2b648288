// load, run and describe (onnx_io.h): an ONNX file is parsed, checked by
// ONNX's checker, and each node matched to its import entry (import_table.h)
// before anything runs (nn's own type rules infer the shapes as it runs); running walks the nodes in the
// file's (topological) order calling the entries. Inside a traced graph, a
// node whose inputs are all known values (initializers that are not params,
// Constant and Shape results) runs at once instead of being traced: the
// shape arithmetic of exported models (Shape -> Gather -> Concat ->
// Reshape) then gives Reshape its sizes while the graph is traced.
#include <onnx/checker.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "backend/autograd.h"
#include "backend/error.h"
#include "backend/regular_file.h"
#include "backend/ops.h"
#include "backend/untraced.h"
#include "onnx/element_types.h"
#include "onnx/import_table.h"
#include "onnx/onnx_io.h"
#include "onnx/tensor_proto.h"

namespace nn::onnx_io {

using backend::Error;
using backend::Tensor;

class ImportedModel {
 public:
  std::string path;
  onnx::ModelProto proto;
  int opset = 0;
  ModelSignature sig;
  std::vector<const ImportEntry*> entries;  // one per node
  std::vector<std::vector<int>> input_types;  // per node, each input's ONNX element type (0: unknown)
};

namespace {

// The file's bytes parsed; Error on a file that is not there or not a model.
// protobuf parses at most 2 GB; a model past that keeps its weights as
// external data, which nn does not read.
constexpr uint64_t kMaxModelBytes = uint64_t(2) << 30;

onnx::ModelProto read_model(const std::string& path) {
  // A regular file only: a FIFO blocked the open, /dev/zero was read until
  // memory ran out.
  const backend::RegularFile file = backend::open_regular_file(path);
  if (file.fd < 0) throw Error("`" + path + "`: " + file.why);
  if (file.size > kMaxModelBytes) {
    ::close(file.fd);
    throw Error("`" + path + "` is " + std::to_string(file.size) + " bytes, past protobuf's 2 GB");
  }
  std::string bytes(file.size, '\0');
  uint64_t done = 0;
  while (done < file.size) {
    const ssize_t n = ::read(file.fd, bytes.data() + done, file.size - done);
    if (n <= 0) break;
    done += uint64_t(n);
  }
  ::close(file.fd);
  bytes.resize(done);
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes))
    throw Error("`" + path + "` is not an ONNX model (it does not parse as one: truncated or another format)");
  if (!m.has_graph()) throw Error("`" + path + "` has no graph");
  return m;
}

int64_t default_opset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0;
}

// The newest opset of the default domain nn reads: its entries follow the
// ops as opset 17 defines them, and ONNX 1.12's checker knows no later one
// (it checked an opset-18 node against opset 17's schema, or no schema).
constexpr int64_t kMaxOpset = 17;

// The model's default-domain opset; an Error when nn cannot read it.
int checked_opset(const onnx::ModelProto& m, const std::string& path) {
  const int64_t opset = default_opset(m);
  if (opset <= 0) throw Error("`" + path + "` imports no opset of the default ONNX domain");
  if (opset > kMaxOpset)
    throw Error("`" + path + "` is a model of opset " + std::to_string(opset) + "; nn reads opsets up to " +
                std::to_string(kMaxOpset) + " (export it again at opset " + std::to_string(kMaxOpset) + " or lower)");
  return int(opset);
}

// "FLOAT[N, 3]" of a graph input or output.
backend::TensorType declared_type(const onnx::ValueInfoProto& v) {
  backend::TensorType t;
  if (!v.type().has_tensor_type()) return t;
  const auto& tt = v.type().tensor_type();
  if (auto d = dtype_of(tt.elem_type())) t.dtype = *d;
  std::vector<int64_t> dims;
  for (const auto& d : tt.shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  t.shape = backend::Shape::of(dims);
  return t;
}

// A node as diagnostics name it: its name, else its first output, else its
// op (a node of another domain may have no output at all).
std::string node_label(const onnx::NodeProto& node) {
  if (!node.name().empty()) return node.name();
  return node.output_size() > 0 ? node.output(0) : node.op_type();
}

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Each node's entry; an op nn cannot import is an Error naming it, its node
// and the opset, and listing what nn imports.
std::vector<const ImportEntry*> match_nodes(const onnx::GraphProto& g, const std::string& path, int opset) {
  std::vector<const ImportEntry*> entries;
  for (const auto& node : g.node()) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    const ImportEntry* e = default_domain ? find_import(node.op_type()) : nullptr;
    if (!e) {
      const std::string what = "`" + path + "`: node `" + node_label(node) + "` is ";
      if (!default_domain)  // the model's opset is the default domain's, not this one's
        throw Error(what + node.domain() + "." + node.op_type() + ", of the domain `" + node.domain() +
                    "`, which nn does not import; nn imports ONNX's own ops: " + list(importable_ops()));
      throw Error(what + node.op_type() + " (opset " + std::to_string(opset) +
                  "), which nn does not import; nn imports " + list(importable_ops()));
    }
    entries.push_back(e);
  }
  return entries;
}

}  // namespace

std::shared_ptr<const ImportedModel> load(const std::string& path) {
  auto m = std::make_shared<ImportedModel>();
  m->path = path;
  m->proto = read_model(path);
  m->opset = checked_opset(m->proto, path);  // before the checker, which knows only the opsets it has
  try {
    onnx::checker::check_model(m->proto);
  } catch (const std::exception& e) {
    throw Error("`" + path + "` fails ONNX's checker: " + e.what());
  }
  const onnx::GraphProto& g = m->proto.graph();
  m->entries = match_nodes(g, path, m->opset);
  // Element types as declared, for the entries that need ONNX's
  // narrow integer types (NodeContext::input_type).
  std::unordered_map<std::string, int> elem;
  for (const auto* values : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& v : *values)
      if (v.type().has_tensor_type()) elem[v.name()] = v.type().tensor_type().elem_type();
  for (const auto& init : g.initializer()) elem[init.name()] = init.data_type();
  for (const auto& node : g.node()) {
    std::vector<int>& types = m->input_types.emplace_back();
    for (const auto& in : node.input()) {
      auto it = in.empty() ? elem.end() : elem.find(in);
      types.push_back(it == elem.end() ? 0 : it->second);
    }
    const std::string refusal = unsigned_refusal(node, types);
    if (!refusal.empty())
      throw Error("`" + path + "`: node `" + node_label(node) + "` (" + node.op_type() + "): " + refusal);
    // ONNX's shape inference is not run (it crashes on some bad attribute
    // values): the types undeclared results have are followed here. A
    // Cast's is its `to`, whatever is declared.
    for (int o = 0; o < node.output_size(); ++o) {
      if (node.output(o).empty() || (elem.count(node.output(o)) && node.op_type() != "Cast")) continue;
      if (const int t = output_element_type(node, o, types)) elem[node.output(o)] = t;
    }
  }

  // Batch norm's running statistics are state, not params.
  std::unordered_set<std::string> statistics;
  for (const auto& node : g.node())
    if (node.op_type() == "BatchNormalization")
      for (int i = 3; i < std::min(node.input_size(), 5); ++i) statistics.insert(node.input(i));
  // A model nn wrote lists its params.
  bool listed = false;
  std::unordered_set<std::string> params;
  for (const auto& meta : m->proto.metadata_props()) {
    if (meta.key() != "nn.params") continue;
    listed = true;
    std::stringstream names(meta.value());
    for (std::string name; std::getline(names, name);) params.insert(name);
  }
  std::unordered_set<std::string> initialized;
  for (const auto& init : g.initializer()) {
    Initializer i;
    i.name = init.name();
    try {
      i.value = to_tensor(init, "initializer `" + init.name() + "`");
    } catch (const Error& e) {
      throw Error("`" + path + "`: " + e.what());
    }
    i.trainable = backend::is_floating(i.value.dtype()) &&
                  (listed ? params.count(i.name) > 0 : !statistics.count(i.name));
    initialized.insert(i.name);
    m->sig.initializers.push_back(std::move(i));
  }
  for (const auto& in : g.input()) {
    if (initialized.count(in.name())) continue;
    m->sig.inputs.push_back(in.name());
    m->sig.input_types.push_back(declared_type(in));
  }
  for (const auto& out : g.output()) m->sig.outputs.push_back(out.name());
  return m;
}

const ModelSignature& signature(const ImportedModel& m) { return m.sig; }

namespace {

// Whether a node may run at once inside a trace: every input a known value
// that no gradient flows to.
bool foldable(std::span<const Tensor> in) {
  for (const Tensor& t : in)
    if (t.defined() && (t.is_traced() || backend::requires_grad(t))) return false;
  return true;
}

void check_input(const ImportedModel& m, size_t i, const Tensor& t) {
  const backend::TensorType& want = m.sig.input_types[i];
  auto wrong = [&] {
    std::string dims;
    for (int64_t d : want.shape.dims()) dims += (dims.empty() ? "" : ", ") + (d < 0 ? "?" : std::to_string(d));
    throw Error("`" + m.path + "`: input `" + m.sig.inputs[i] + "` is " + std::string(backend::dtype_name(want.dtype)) + "[" +
                dims + "], not " + t.type().str());
  };
  if (t.dtype() != want.dtype || t.ndim() != want.shape.ndim()) wrong();
  for (int k = 0; k < t.ndim(); ++k)
    if (want.shape[k] >= 0 && want.shape[k] != t.shape()[k]) wrong();
}

}  // namespace

std::vector<Tensor> run(const ImportedModel& m, std::span<const Tensor> initializers, std::span<const Tensor> inputs) {
  if (inputs.size() != m.sig.inputs.size())
    throw Error("`" + m.path + "` takes " + std::to_string(m.sig.inputs.size()) + " input" +
                (m.sig.inputs.size() == 1 ? "" : "s") + " (" + list(m.sig.inputs) + "), not " +
                std::to_string(inputs.size()));
  std::unordered_map<std::string, Tensor> env;
  for (size_t i = 0; i < initializers.size() && i < m.sig.initializers.size(); ++i)
    env[m.sig.initializers[i].name] = initializers[i];
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_input(m, i, inputs[i]);
    env[m.sig.inputs[i]] = inputs[i];
  }
  const onnx::GraphProto& g = m.proto.graph();
  backend::Device* device = inputs.empty() ? backend::cpu_device() : inputs[0].device();
  std::vector<Tensor> in;
  for (int k = 0; k < g.node_size(); ++k) {
    const onnx::NodeProto& node = g.node(k);
    in.assign(node.input_size(), Tensor());
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty()) continue;
      auto it = env.find(node.input(i));
      if (it == env.end()) throw Error("`" + m.path + "`: node input `" + node.input(i) + "` is never made");
      in[i] = it->second;
    }
    NodeContext ctx(node, m.opset, in, m.input_types[size_t(k)]);
    std::vector<Tensor> out;
    try {
      std::optional<backend::Untraced> fold;  // a known node runs now, inside a trace too
      if (foldable(in)) fold.emplace();
      out = m.entries[k]->fn(ctx);
    } catch (const Error& e) {
      const std::string what = e.what();
      const std::string message =
          "`" + m.path + "`: " +
          (what.rfind("node `", 0) == 0 ? what : "node `" + node_label(node) + "` (" + node.op_type() + "): " + what);
      // Still an OutOfMemory, which callers tell apart, but naming the node as other errors do.
      if (const auto* oom = dynamic_cast<const backend::OutOfMemory*>(&e)) throw backend::OutOfMemory(message, oom->asked());
      throw Error(message);
    }
    for (int o = 0; o < node.output_size(); ++o) {
      if (node.output(o).empty()) continue;
      if (size_t(o) >= out.size() || !out[o].defined())
        throw Error("`" + m.path + "`: node `" + node.name() + "` (" + node.op_type() + "): nn does not compute its output " +
                    std::to_string(o));
      // Constants are made on the CPU; a model fed GPU tensors computes there.
      if (device != backend::cpu_device() && out[o].device() == backend::cpu_device() && out[o].ndim() > 0)
        out[o] = backend::to_device(out[o], device);
      env[node.output(o)] = out[o];
    }
  }
  std::vector<Tensor> result;
  for (const auto& name : m.sig.outputs) {
    auto it = env.find(name);
    if (it == env.end()) throw Error("`" + m.path + "`: output `" + name + "` is never made");
    result.push_back(it->second);
  }
  return result;
}

std::string describe(const std::string& path) {
  onnx::ModelProto proto = read_model(path);
  const int opset = checked_opset(proto, path);  // refused as load() refuses it
  std::ostringstream s;
  const onnx::GraphProto& g = proto.graph();
  s << path << ": ONNX IR version " << proto.ir_version() << ", opset " << opset;
  if (!proto.producer_name().empty()) s << ", made by " << proto.producer_name();
  if (!proto.producer_version().empty()) s << " " << proto.producer_version();
  s << "\n";
  std::unordered_set<std::string> initialized;
  int64_t numbers = 0;
  for (const auto& init : g.initializer()) {
    initialized.insert(init.name());
    int64_t n = 1;
    for (int64_t d : init.dims()) n *= d;
    numbers += n;
  }
  auto type_of = [](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type()) return std::string("(not a tensor)");
    const auto& tt = v.type().tensor_type();
    std::string dims;
    for (const auto& d : tt.shape().dim())
      dims += (dims.empty() ? "" : ", ") + (d.has_dim_value() ? std::to_string(d.dim_value())
                                                              : d.dim_param().empty() ? "?" : d.dim_param());
    return onnx_type_name(tt.elem_type()) + "[" + dims + "]";
  };
  s << "inputs:\n";
  for (const auto& in : g.input())
    if (!initialized.count(in.name())) s << "  " << in.name() << ": " << type_of(in) << "\n";
  s << "outputs:\n";
  for (const auto& out : g.output()) s << "  " << out.name() << ": " << type_of(out) << "\n";
  s << "params: " << g.initializer_size() << " initializers, " << numbers << " numbers\n";
  std::map<std::string, int> ops;
  for (const auto& node : g.node())
    ops[node.domain().empty() || node.domain() == "ai.onnx" ? node.op_type() : node.domain() + "." + node.op_type()]++;
  s << "ops:\n";
  std::vector<std::string> missing;
  for (const auto& [op, count] : ops) {
    s << "  " << op << " x" << count << "\n";
    if (!find_import(op)) missing.push_back(op);
  }
  if (!missing.empty()) {
    s << "nn cannot import: " + list(missing) + "\n";
    return s.str();
  }
  try {  // load() refuses what the checker refuses
    onnx::checker::check_model(proto);
  } catch (const std::exception& e) {
    s << "nn imports every op of this model, but it fails ONNX's checker: " << e.what() << "\n";
    return s.str();
  }
  s << "nn imports every op of this model\n";
  return s.str();
}

}  // namespace nn::onnx_io
