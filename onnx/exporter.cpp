// save (onnx_io.h): the traced forward graph as an ONNX model. The walk
// names every value, writes the graph's params, constants and state as
// initializers, computes on the spot the nodes that read no graph input
// (a causal mask made with full and triu), hands every other node to its
// entry of the export table (export_ops.h), follows the batch axis through
// the nodes for a dynamic batch, declares the inputs and outputs, then
// checks the model with ONNX's checker and strict shape inference and
// writes it atomically.
#include <fcntl.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <regex>
#include <unordered_set>

#include "backend/autograd.h"
#include "backend/device.h"
#include "backend/dispatch.h"
#include "backend/error.h"
#include "backend/ops.h"
#include "backend/untraced.h"
#include "onnx/export_ops.h"
#include "onnx/onnx_io.h"
#include "onnx/tensor_proto.h"

namespace nn::onnx_io {

using backend::DType;
using backend::Error;
using backend::Tensor;
using backend::TensorType;

namespace {

// "t12": a prefix and a number (one append: GCC 12 warns wrongly about `"t" + to_string(n)`).
// Whether a name is one of the forms the exporter writes itself: values
// (v12), intermediates (t3), constants (c4), captured tensors without a
// script name (param0, state1, const2), inputs and outputs (input0, output1).
bool is_written_form(const std::string& name) {
  static const std::regex written("(v|t|c|param|state|const|input|output)[0-9]*");
  return std::regex_match(name, written);
}

std::string numbered(const char* prefix, uint64_t n) {
  std::string s(prefix);
  s += std::to_string(n);
  return s;
}
constexpr int kIrVersion = 8;

struct Slot {
  std::string name;                 // the ONNX name, once written
  int64_t batch = 0;                // its axis 0 is batch * N (0: static)
  Tensor known;                     // a value known now: a host number, a computed constant
  std::map<DType, std::string> as;  // the value converted to other dtypes
  // Rows alike along axis 0, that axis of the traced batch size (a state of
  // zeros([x.shape[0], d]) and what row-wise ops make of it), written as its
  // first row [1, ...]: ONNX broadcasting then makes it follow the batch
  // where it meets the batch (Writer::row_inputs). row_form: the value's
  // ONNX tensor is that first row; row: a known value's first row, once
  // found alike (alike: -1 not yet asked, 0 no, 1 yes), row_name its constant.
  bool row_form = false;
  int8_t alike = -1;
  Tensor row;
  std::string row_name;
};

class Writer final : public ExportContext {
 public:
  Writer(const ir::Graph& g, const ExportOptions& o) : g_(g), opt_(o), slots_(g.values.size()) {
    model_.set_ir_version(kIrVersion);
    model_.set_producer_name("nn");
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(kExportOpset);
    graph_ = model_.mutable_graph();
    graph_->set_name(o.graph_name.empty() ? "nn" : o.graph_name);
    // Nodes whose results nothing reads (a layer's second result the
    // function drops) are left out; readers_ counts the others' reads.
    // Effects stay, to be refused: a print, a draw, a write in place.
    readers_.assign(g.values.size(), 0);
    live_.assign(g.nodes.size(), false);
    for (ir::ValueId v : g.outputs) readers_[v]++;
    for (size_t k = g.nodes.size(); k-- > 0;) {
      const ir::Node& n = g.nodes[k];
      live_[k] = n.ordered_effect() || n.op->effect == backend::Effect::stateful;
      for (ir::ValueId v : n.outputs) live_[k] = live_[k] || readers_[v] > 0;
      if (live_[k])
        for (ir::ValueId v : n.inputs) readers_[v]++;
    }
  }

  onnx::ModelProto build() {
    declare_inputs();
    for (size_t k = 0; k < g_.nodes.size(); ++k)
      if (live_[k]) write_node(g_.nodes[k]);
    node_ = nullptr;
    declare_outputs();
    constants_first();
    // Which initializers were params: load_onnx makes these, and only
    // these, params again (a running statistic is written as a plain one).
    auto* meta = model_.add_metadata_props();
    meta->set_key("nn.params");
    meta->set_value(trainable_);
    return std::move(model_);
  }

  // ---- ExportContext ----
  const ir::Node& node() const override { return *node_; }
  const TensorType& in_type(size_t i) const override { return g_.values[node_->inputs[i]].type; }
  const TensorType& out_type(size_t o) const override { return g_.values[node_->outputs[o]].type; }
  std::string in(size_t i) override {
    return reads_row(i) ? row_of(node_->inputs[i], in_type(i).dtype) : name_of(node_->inputs[i]);
  }
  std::string in_as(size_t i, DType t) override {
    return reads_row(i) ? row_of(node_->inputs[i], t) : value_as(node_->inputs[i], t);
  }
  std::string out(size_t o) override { return slot(node_->outputs[o]).name = numbered("v", node_->outputs[o]); }
  bool used(size_t o) const override { return readers_[node_->outputs[o]] > 0; }
  int64_t batch(size_t i) const override { return slots_[node_->inputs[i]].batch; }
  void set_batch(size_t o, int64_t f) override { slots_[node_->outputs[o]].batch = f; }
  int64_t batch_size() const override { return batch_size_; }
  const ir::Node* producer(size_t i) const override {
    const ir::Value& v = g_.values[node_->inputs[i]];
    return v.producer == ir::kNone ? nullptr : &g_.nodes[v.producer];
  }
  const Tensor& known(size_t i) const override { return slots_[node_->inputs[i]].known; }
  const TensorType& value_type(ir::ValueId v) const override { return g_.values[v].type; }
  int64_t value_batch(ir::ValueId v) const override { return slots_[v].batch; }
  std::string value(ir::ValueId v) override { return name_of(v); }
  onnx::NodeProto& add(const std::string& op_type, std::initializer_list<std::string> inputs,
                       std::initializer_list<std::string> outputs) override {
    onnx::NodeProto* n = graph_->add_node();
    n->set_op_type(op_type);
    n->set_name(op_type + "_" + std::to_string(graph_->node_size()));
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  std::string fresh() override { return numbered("t", counter_++); }
  std::string ints(const std::vector<int64_t>& v) override {
    return constant(backend::from_ints(v, backend::Shape{int64_t(v.size())}, DType::i64));
  }
  std::string number(double v, DType t) override {
    return constant(backend::is_floating(t) ? backend::scalar(v, t) : backend::scalar_int(int64_t(v), t));
  }
  std::string tensor(const Tensor& t) override { return constant(t); }
  [[noreturn]] void fail(const std::string& reason) const override { fail_at(*node_, reason); }

 private:
  Slot& slot(ir::ValueId v) { return slots_[v]; }

  [[noreturn]] void fail_at(const ir::Node& n, const std::string& reason) const {
    const std::string where = g_.where(n.loc);
    throw Error("save_onnx: `" + n.name() + "`" + (where.empty() ? "" : " at " + where) +
                " cannot be written to ONNX: " + reason);
  }

  // ONNX wants every node after the ones it reads. An export entry that
  // makes its node and then names its inputs (Concat, of any count) writes
  // a known input's Constant after it: Constants, which read nothing, all
  // go first, in their order.
  void constants_first() {
    auto* nodes = graph_->mutable_node();
    std::stable_partition(nodes->pointer_begin(), nodes->pointer_end(),
                          [](const onnx::NodeProto* n) { return n->op_type() == "Constant"; });
  }

  // A Constant node holding t; returns its output's name.
  std::string constant(const Tensor& t) {
    const std::string name = numbered("c", counter_++);
    onnx::NodeProto& n = add("Constant", {}, {name});
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = to_proto(t, "");
    return name;
  }

  // A captured tensor's name in the script ("model.layers[0].w") when it
  // has one that no other value of the model takes; else kind + number.
  // Names of the written forms ("v12", "param3") and the inputs' are taken.
  std::string script_name(const Tensor& t, const char* kind, int n) {
    std::string name = opt_.name_of ? opt_.name_of(t) : "";
    bool taken = name.empty() || is_written_form(name) || !used_names_.insert(name).second;
    for (const auto& i : opt_.inputs) taken = taken || i == name;
    for (const auto& o : opt_.outputs) taken = taken || o == name;
    return taken ? numbered(kind, uint64_t(n)) : name;
  }

  std::string initializer(const Tensor& t, const std::string& name) {
    *graph_->add_initializer() = to_proto(t, name);
    return name;
  }

  // The value's ONNX name, writing a captured or computed value the first
  // time it is read.
  std::string name_of(ir::ValueId v) {
    Slot& s = slot(v);
    if (!s.name.empty()) return s.name;
    const ir::Value& val = g_.values[v];
    if (s.known.defined()) return s.name = constant(s.known);
    switch (val.role) {
      case ir::Role::param:
        s.name = initializer(val.captured, script_name(val.captured, "param", params_++));
        trainable_ += (trainable_.empty() ? "" : "\n") + s.name;
        return s.name;
      case ir::Role::state: return s.name = initializer(val.captured, script_name(val.captured, "state", states_++));
      case ir::Role::constant: return s.name = initializer(val.captured, script_name(val.captured, "const", consts_++));
      default: break;
    }
    throw Error("save_onnx: internal: value %" + std::to_string(v) + " is read before it is made");
  }

  // The value in dtype t: a constant written in t, or a Cast node (once).
  std::string value_as(ir::ValueId v, DType t) {
    const ir::Value& val = g_.values[v];
    if (val.type.dtype == t) return name_of(v);
    Slot& s = slot(v);
    auto it = s.as.find(t);
    if (it != s.as.end()) return it->second;
    std::string name;
    if (s.known.defined()) {
      backend::Untraced eager;
      name = constant(backend::astype(s.known, t));
    } else {
      name = fresh();
      set_attr(add("Cast", {name_of(v)}, {name}), "to", int64_t(onnx_type_of(t)));
    }
    return s.as[t] = name;
  }

  // Axis 0 of a value that follows the batch (factor f) is "N" (f = 1) or
  // left unnamed (a multiple of N).
  static void set_type(onnx::ValueInfoProto& vi, const TensorType& t, int64_t factor) {
    auto* tt = vi.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx_type_of(t.dtype));
    auto* shape = tt->mutable_shape();
    for (int d = 0; d < t.shape.ndim(); ++d) {
      auto* dim = shape->add_dim();
      if (d > 0 || factor == 0) dim->set_dim_value(t.shape[d]);
      else if (factor == 1) dim->set_dim_param("N");
    }
  }

  void declare_inputs() {
    for (size_t k = 0; k < g_.inputs.size(); ++k) {
      const ir::ValueId v = g_.inputs[k];
      const ir::Value& val = g_.values[v];
      Slot& s = slot(v);
      s.name = k < opt_.inputs.size() ? opt_.inputs[k] : g_.name_of(v).empty() ? numbered("input", k) : g_.name_of(v);
      // An argument named as the written forms are (`v1`, `t0`, `c0`,
      // `output`) would be named twice in the model, which the checker
      // refuses: it takes a trailing "_".
      if (is_written_form(s.name) && !(k >= opt_.inputs.size() && g_.name_of(v).empty())) s.name += "_";
      const bool batched = opt_.dynamic_batch && val.type.shape.ndim() >= 1;
      if (batched) {
        const int64_t n = val.type.shape[0];
        if (batch_size_ == 0) batch_size_ = n;
        else if (n != batch_size_)
          throw Error("save_onnx: with dynamic_batch=true axis 0 of every input is the batch, but input `" + s.name +
                      "` has " + std::to_string(n) + " there and an input before it " + std::to_string(batch_size_) +
                      " (pass dynamic_batch=false for fixed sizes)");
        s.batch = 1;
      }
      auto* vi = graph_->add_input();
      vi->set_name(s.name);
      set_type(*vi, val.type, batched ? 1 : 0);
    }
  }

  void declare_outputs() {
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      const ir::ValueId v = g_.outputs[k];
      if (slot(v).row_form) materialize(v);
      const std::string name = k < opt_.outputs.size() ? opt_.outputs[k] : numbered("output", k);
      add("Identity", {name_of(v)}, {name});
      auto* vi = graph_->add_output();
      vi->set_name(name);
      set_type(*vi, g_.values[v].type, slot(v).batch);
    }
  }

  void write_node(const ir::Node& n) {
    node_ = &n;
    if (!n.op)
      fail_at(n, "a host call (" + (n.host() ? n.host()->name : std::string("?")) + ") runs on the host, not in a model");
    if (n.phase != ir::Phase::forward)
      fail_at(n, "it is part of a backward or optimizer step; save_onnx writes a forward pass");
    const ExportEntry* e = find_export(n.op->id);
    if (!e) {
      const std::string why = why_not_exported(n.op->id);
      fail_at(n, why.empty() ? "nn has no ONNX form for it" : why);
    }
    bool known = n.op->effect == backend::Effect::pure;
    for (ir::ValueId v : n.inputs) known = known && slot(v).known.defined();
    if (known) return compute(n);
    if (!e->fn) fail_at(n, "it is written as a constant, and here it reads a value computed from the graph's inputs");
    rows_ = row_inputs(n);
    bool reads_rows = false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      reads_rows = reads_rows || rows_[i];
      if (!rows_[i] && slot(n.inputs[i]).row_form) materialize(n.inputs[i]);
    }
    // Default batch factors: an input of the output's rank carries its batch axis over.
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      int64_t f = 0;
      const int r = g_.values[n.outputs[o]].type.shape.ndim();
      for (ir::ValueId v : n.inputs)
        if (g_.values[v].type.shape.ndim() == r) f = std::max(f, slot(v).batch);
      slot(n.outputs[o]).batch = r >= 1 ? f : 0;
    }
    if (n.op->elementwise) check_fixed_batch(n);
    e->fn(*this);
    if (reads_rows)  // results that met no batch are first rows too
      for (ir::ValueId o : n.outputs) slot(o).row_form = slot(o).batch == 0;
    rows_.clear();
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      const Slot& s = slot(n.outputs[o]);
      const TensorType& t = g_.values[n.outputs[o]].type;
      if (s.batch > 0 && (t.shape.ndim() == 0 || t.shape[0] != s.batch * batch_size_))
        fail_at(n, "with dynamic_batch=true nn follows the batch axis as axis 0, and this op's result " + t.str() +
                       " does not keep it there (pass dynamic_batch=false to save_onnx for fixed sizes)");
      if (s.name.empty() && readers_[n.outputs[o]] > 0)
        fail_at(n, "its output " + std::to_string(o) + " has no ONNX form, and a later node reads it");
    }
  }

  // An elementwise op that meets the batch with a tensor as long as the
  // batch but of fixed size, whose rows are not all alike (those are read as
  // their first row), cannot follow another batch size.
  void check_fixed_batch(const ir::Node& n) {
    const TensorType& out = g_.values[n.outputs[0]].type;
    if (out.shape.ndim() == 0 || slot(n.outputs[0]).batch == 0 || out.shape[0] <= 1) return;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const TensorType& t = g_.values[n.inputs[i]].type;
      if (!rows_[i] && slot(n.inputs[i]).batch == 0 && t.shape.ndim() == out.shape.ndim() && t.shape[0] == out.shape[0])
        fail_at(n, "with dynamic_batch=true nn follows the batch axis, and here an operand " + t.str() +
                       " has the traced batch size on axis 0 without following the batch (a tensor made with the "
                       "batch size as a number whose rows are not all alike, such as "
                       "reshape(arange(x.shape[0] * d), [x.shape[0], d])); pass dynamic_batch=false to save_onnx "
                       "for fixed sizes");
    }
  }

  // ---- values read as their first row (Slot::row_form) ----
  // Whether v, of rank r, has rows alike along an axis 0 of the traced batch size.
  bool rows_alike(ir::ValueId v, int r) {
    Slot& s = slot(v);
    const backend::Shape& shape = g_.values[v].type.shape;
    if (shape.ndim() != r || r == 0 || batch_size_ <= 1 || shape[0] != batch_size_) return false;
    if (s.row_form) return true;
    if (!s.known.defined()) return false;
    if (s.alike < 0) {
      backend::Untraced eager;
      const Tensor host = backend::to_device(s.known, backend::cpu_device());
      const size_t row_bytes = host.nbytes() / size_t(shape[0]);
      const char* p = static_cast<const char*>(host.raw_data());
      s.alike = 1;
      for (int64_t k = 1; k < shape[0] && s.alike; ++k)
        s.alike = std::memcmp(p, p + size_t(k) * row_bytes, row_bytes) == 0;
      if (s.alike) s.row = backend::take(host, backend::from_ints({0}, backend::Shape{1}, DType::i64));
    }
    return s.alike == 1;
  }

  // Which inputs of n it reads as their first row: where its result is then
  // the first row of its own, or follows the batch by broadcasting. An
  // elementwise op whose other operands follow the batch or broadcast along
  // axis 0; the left operand of a 2-d matmul by a fixed matrix; a slice
  // keeping axis 0 whole.
  std::vector<bool> row_inputs(const ir::Node& n) {
    std::vector<bool> rows(n.inputs.size(), false);
    if (n.inputs.empty() || n.outputs.empty()) return rows;
    const int r = g_.values[n.outputs[0]].type.shape.ndim();
    auto type = [&](size_t i) -> const TensorType& { return g_.values[n.inputs[i]].type; };
    if (n.op->elementwise) {
      bool whole = true;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const TensorType& t = type(i);
        rows[i] = rows_alike(n.inputs[i], r);
        if (!rows[i]) whole = whole && (slot(n.inputs[i]).batch > 0 ? t.shape.ndim() == r
                                                                   : t.shape.ndim() < r || t.shape[0] == 1);
      }
      if (!whole) rows.assign(rows.size(), false);
    } else if (n.op->id == backend::OpId::matmul && n.inputs.size() == 2) {
      const ir::ValueId w = n.inputs[1];
      rows[0] = type(1).shape.ndim() == 2 && slot(w).batch == 0 && !slot(w).row_form && rows_alike(n.inputs[0], 2);
    } else if (n.op->id == backend::OpId::slice) {
      const auto& drop = n.attrs.get<std::vector<int64_t>>("drop");
      rows[0] = slice_keeps_batch(n.attrs, type(0).shape) && std::find(drop.begin(), drop.end(), 0) == drop.end() &&
                rows_alike(n.inputs[0], type(0).shape.ndim());
    }
    return rows;
  }

  bool reads_row(size_t i) const { return i < rows_.size() && rows_[i]; }

  // The first row of v in dtype t.
  std::string row_of(ir::ValueId v, DType t) {
    Slot& s = slot(v);
    if (s.row_form) return value_as(v, t);
    if (t != s.row.dtype()) {
      backend::Untraced eager;
      return constant(backend::astype(s.row, t));
    }
    if (s.row_name.empty()) s.row_name = constant(s.row);
    return s.row_name;
  }

  // A value held as its first row, expanded to its traced size for a reader
  // that needs all of it.
  void materialize(ir::ValueId v) {
    Slot& s = slot(v);
    const backend::Shape& shape = g_.values[v].type.shape;
    std::vector<int64_t> dims;
    for (int d = 0; d < shape.ndim(); ++d) dims.push_back(shape[d]);
    const std::string row = s.name;
    s.name = fresh();
    add("Expand", {row, ints(dims)}, {s.name});
    s.row_form = false;
    s.as.clear();
  }

  // A node on known values: computed now, its results written as constants where read.
  void compute(const ir::Node& n) {
    std::vector<Tensor> in;
    for (ir::ValueId v : n.inputs) in.push_back(slot(v).known);
    std::vector<Tensor> out;
    try {
      backend::Untraced eager;
      backend::NoGradGuard no_grad;
      out = backend::dispatch(*n.op, in, n.attrs);
    } catch (const backend::OutOfMemory&) {
      throw;
    } catch (const Error& e) {
      fail_at(n, std::string("computing it as a constant failed: ") + e.what());
    }
    for (size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) slot(n.outputs[o]).known = out[o];
  }

  const ir::Graph& g_;
  const ExportOptions& opt_;
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = nullptr;
  std::vector<Slot> slots_;
  std::vector<int> readers_;  // per value: the live nodes and graph outputs that read it
  std::vector<bool> live_;    // per node
  const ir::Node* node_ = nullptr;
  int64_t batch_size_ = 0;
  std::vector<bool> rows_;  // the node being written: its inputs read as their first row
  int counter_ = 0, params_ = 0, states_ = 0, consts_ = 0;
  std::unordered_set<std::string> used_names_;
  std::string trainable_;  // the params' initializer names, one a line

 public:
  // Host numbers (weak 0-d constants) are known values from the start.
  void know_host_numbers() {
    for (size_t v = 0; v < g_.values.size(); ++v) {
      const ir::Value& val = g_.values[v];
      if (val.role == ir::Role::constant && val.type.weak && val.captured.defined()) slots_[v].known = val.captured;
    }
  }
};

void check(onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
    onnx::ModelProto inferred = model;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1));
  } catch (const std::exception& e) {
    throw Error(std::string("save_onnx: internal: the exported model fails ONNX's checks (a bug of nn's exporter): ") +
                e.what());
  }
}

// Writes to a temporary file beside `path`, then renames it over `path`.
void write_atomically(const std::string& bytes, const std::string& path) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw Error("save_onnx: cannot write `" + path + "`: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error("save_onnx: cannot write `" + path + "`: " + std::strerror(err));
    }
    done += size_t(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error("save_onnx: cannot write `" + path + "`: " + std::strerror(err));
  }
}

}  // namespace

void save(const ir::Graph& g, const ExportOptions& options, const std::string& path) {
  backend::Untraced eager;  // constants made here are tensors, even when save_onnx runs inside a trace
  Writer w(g, options);
  w.know_host_numbers();
  onnx::ModelProto model = w.build();
  check(model);
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw Error("save_onnx: the model does not serialize (over 2 GB?)");
  write_atomically(bytes, path);
}

}  // namespace nn::onnx_io
