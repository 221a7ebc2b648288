// The export table: one entry per nn op that save() writes, a function that
// appends the ONNX node(s) computing the op's outputs from its inputs. This
// header is what an entry sees of its node (ExportContext, implemented by
// the graph walk in exporter.cpp); the entries are in export_ops.cpp.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "backend/tensor.h"
#include "ir/graph.h"

namespace nn::onnx_io {

// One node of the graph being written. Names are ONNX value names.
//
// Dynamic batch: every value carries a batch factor f, its axis 0 being f
// times the graph's batch ("N"), or 0 when its shape does not follow the
// batch. Before an entry runs, each output's factor is the factor of an
// input of the same rank (the batch stays axis 0); an entry whose op moves
// or drops axis 0 sets its outputs' factors itself, or fails.
// The opset nn's exported models declare (the highest libonnx 1.12 knows).
inline constexpr int kExportOpset = 17;

class ExportContext {
 public:
  virtual ~ExportContext() = default;
  virtual const ir::Node& node() const = 0;
  const backend::Attrs& attrs() const { return node().attrs; }
  size_t num_inputs() const { return node().inputs.size(); }
  virtual const backend::TensorType& in_type(size_t i) const = 0;
  virtual const backend::TensorType& out_type(size_t o) const = 0;
  // Input i's name as it is, or converted to `dtype` (a Cast node, or a
  // constant written in that dtype).
  virtual std::string in(size_t i) = 0;
  virtual std::string in_as(size_t i, backend::DType dtype) = 0;
  // The name output o must be given. An output no later node or graph
  // output reads needs no node; `used(o)` says whether one does.
  virtual std::string out(size_t o) = 0;
  virtual bool used(size_t o) const = 0;
  // Batch factors (see above); batch_size() is the traced batch (0: static).
  virtual int64_t batch(size_t i) const = 0;
  virtual void set_batch(size_t o, int64_t factor) = 0;
  virtual int64_t batch_size() const = 0;
  // Where input i comes from: the node that made it (null for a graph input
  // or a captured tensor), and its value when the walk knows it (a host
  // number, a computed constant; else undefined). Any value of the graph
  // by id: its type, batch factor and (written on first use) ONNX name.
  virtual const ir::Node* producer(size_t i) const = 0;
  virtual const backend::Tensor& known(size_t i) const = 0;
  virtual const backend::TensorType& value_type(ir::ValueId v) const = 0;
  virtual int64_t value_batch(ir::ValueId v) const = 0;
  virtual std::string value(ir::ValueId v) = 0;
  // Appends a node; returns it so that the entry can add attributes.
  virtual onnx::NodeProto& add(const std::string& op_type, std::initializer_list<std::string> inputs,
                               std::initializer_list<std::string> outputs) = 0;
  virtual std::string fresh() = 0;  // a new intermediate name
  // Constants: a 1-d i64 tensor, a 0-d number of `dtype`, any tensor.
  virtual std::string ints(const std::vector<int64_t>& v) = 0;
  virtual std::string number(double v, backend::DType dtype) = 0;
  virtual std::string tensor(const backend::Tensor& t) = 0;
  // An Error naming the op, the node's source location and `reason`.
  [[noreturn]] virtual void fail(const std::string& reason) const = 0;

  // Shorthands: one node with one output; returns its (fresh) name.
  std::string op1(const std::string& op_type, std::initializer_list<std::string> inputs) {
    std::string o = fresh();
    add(op_type, inputs, {o});
    return o;
  }
};

// Attribute helpers for the node add() returned.
void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v);
void set_attr(onnx::NodeProto& n, const std::string& name, float v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v);

// Whether a slice node of x keeps its axis 0 whole at any batch size: all of
// it, and bounded by no number (`pinned`: x[0:2] of a traced batch of 2).
bool slice_keeps_batch(const backend::Attrs& attrs, const backend::Shape& x);

// null fn: an op with no tensor inputs (full, arange): the walk computes it
// and writes its value as a constant.
using ExportFn = void (*)(ExportContext& c);
struct ExportEntry {
  backend::OpId id;
  ExportFn fn;
};

// The entry for an op, or null when nn cannot write it.
const ExportEntry* find_export(backend::OpId id);
// Why an op is never written, for the error ("call eval(model) before
// save_onnx"); empty when there is no more to say than that it is not.
std::string why_not_exported(backend::OpId id);

}  // namespace nn::onnx_io
