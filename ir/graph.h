// The graph IR: values and nodes in a valid order. A value is an input, a
// param, a state, a constant or the result of one node; a node is an op call
// of the registry (or a host call such as print) with its attributes, output
// types, the source location that made it, the nn function call it belongs
// to, and the part of the program it is in (forward, backward, optimizer).
// Values are single-assignment: an in-place update in the script becomes a
// new value, and a state's last value is written back after each run.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/op_registry.h"
#include "backend/source_loc.h"
#include "ir/value_list.h"

namespace nn::ir {

using backend::OpId;

using NodeId = uint32_t;
inline constexpr uint32_t kNone = UINT32_MAX;

enum class Role : uint8_t {
  intermediate,  // made by a node
  input,         // an argument of the graph, bound on each run
  param,         // a captured tensor that requires grad (by reference)
  state,         // a captured tensor the graph updates (by reference)
  constant,      // a captured tensor the graph only reads (by reference)
};
const char* role_name(Role r);

enum class Phase : uint8_t { forward, backward, optimizer };
const char* phase_name(Phase p);

// A source location; ir/ does not read it, the frontend renders it.
using Loc = backend::SourceLoc;

// Passes read values by the tens of thousands: the record stays small (its
// name, which only inputs have, is kept in the graph).
struct Value {
  backend::TensorType type;
  backend::Tensor captured; // param, state, constant: the tensor itself
  NodeId producer = kNone;  // kNone for everything but intermediates
  uint32_t index = 0;       // which output of its producer
  uint32_t name = 0;        // inputs: the argument or variable name, as an index into Graph::names
  Role role = Role::intermediate;
  bool output = false;      // handed to the host after each run
  // A constant nothing can write between runs: a host number's tensor, or
  // one a pass computed. Passes fold only these: any other captured tensor
  // the graph only reads is still read by reference on every run, as the
  // host may write it in place (x[i] = v, load_state, from_blob memory).
  bool immutable = false;
};

// Where one step of a fused node's program came from: the source line, the
// nn function call and the part of the program of the node it replaced.
struct Part {
  Loc loc;
  uint32_t scope = 0;
  Phase phase = Phase::forward;
};

// A host call inside a graph (print): runs on every replay with the values
// of its inputs.
using HostFn = std::function<void(std::span<const backend::Tensor>)>;
struct HostCall {
  std::string name;  // "print"
  HostFn fn;
};
inline std::shared_ptr<const HostCall> host_call(std::string name, HostFn fn = {}) {
  return std::make_shared<const HostCall>(HostCall{std::move(name), std::move(fn)});
}

// Passes move and read nodes by the tens of thousands: what only a few
// nodes have (a host call, a fused node's parts, in-place outputs) is kept
// out of line, so that the common record stays small.
struct Node {
  const backend::OpDef* op = nullptr;  // null: a host call
  backend::Attrs attrs;
  ValueList inputs;
  ValueList outputs;
  Loc loc;
  uint32_t scope = 0;  // index in Graph::scopes
  Phase phase = Phase::forward;
  // Made again from forward values where the backward needs them (the
  // `recompute` pass): every order runs it right after the node before it,
  // never ahead in the forward, where it would undo the saving.
  bool recomputed = false;

  Node() = default;
  Node(const Node& o);
  Node(Node&&) noexcept = default;
  Node& operator=(const Node& o) { return *this = Node(o); }
  Node& operator=(Node&&) noexcept = default;

  // A host call's name and function; shared and never changed.
  const std::shared_ptr<const HostCall>& host() const { return rare_ ? rare_->host : kNoHost; }
  void set_host(std::shared_ptr<const HostCall> h) { rare().host = std::move(h); }
  // A fused node (attribute `program`): one part per step of its program.
  std::span<const Part> parts() const { return rare_ ? std::span<const Part>(rare_->parts) : std::span<const Part>(); }
  void set_parts(std::vector<Part> p) { rare().parts = std::move(p); }
  // Per output: the input whose memory it overwrites (that input dies here),
  // or -1. Set by the `inplace` pass (ir/passes/inplace.cpp); empty: none.
  std::span<const int32_t> overwrites() const {
    return rare_ ? std::span<const int32_t>(rare_->overwrites) : std::span<const int32_t>();
  }
  void set_overwrites(std::vector<int32_t> o) { rare().overwrites = std::move(o); }
  // The input output i overwrites, or -1.
  int overwritten_input(size_t i) const { return i < overwrites().size() ? overwrites()[i] : -1; }

  const std::string& name() const;
  bool is(backend::OpId id) const { return op && op->id == id; }
  // Random ops, collectives and host calls keep their trace order in every
  // schedule: the draws and the printed lines come out as in eager mode, and
  // every rank talks to the others in the same order.
  bool ordered_effect() const {
    return !op || op->effect == backend::Effect::random || op->effect == backend::Effect::collective;
  }

 private:
  struct Rare {
    std::shared_ptr<const HostCall> host;
    std::vector<Part> parts;
    std::vector<int32_t> overwrites;
  };
  static inline const std::shared_ptr<const HostCall> kNoHost;
  std::unique_ptr<Rare> rare_;
  Rare& rare() {
    if (!rare_) rare_ = std::make_unique<Rare>();
    return *rare_;
  }
};

// An nn function call during the trace; scope 0 is the graph itself.
struct Scope {
  std::string name;
  uint32_t parent = 0;
  Loc call;
};

// After each run, the captured tensor of `state` takes the contents of `value`.
struct StateUpdate {
  ValueId state;
  ValueId value;
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<std::string> names{std::string()};  // Value::name indexes it; 0 is no name
  std::vector<Node> nodes;
  std::vector<Scope> scopes{Scope{}};
  std::vector<ValueId> inputs;   // arguments, in the order a run binds them
  std::vector<ValueId> outputs;  // in the order a run returns them
  // Per output: kNone, or the argument or captured tensor (its first value)
  // the trace returned, or a reshape of, which a run then returns itself
  // after its updates, as eager code returns the tensor it was given.
  std::vector<ValueId> output_holders;
  std::vector<StateUpdate> updates;
  // "file.nn:12:5" for a location; set by whoever traced the graph.
  std::function<std::string(const Loc&)> locate;

  ValueId add_value(const backend::TensorType& type, Role role, std::string name = {});
  const std::string& name_of(ValueId v) const { return names[values[v].name]; }
  // The types of `ids`, in order: what an op's type rule takes.
  std::vector<backend::TensorType> types_of(const ValueList& ids) const {
    std::vector<backend::TensorType> t;
    t.reserve(ids.size());
    for (ValueId v : ids) t.push_back(values[v].type);
    return t;
  }
  // The node that makes v when its op is `id`, else kNone.
  NodeId producer_if(ValueId v, backend::OpId id) const {
    const NodeId p = values[v].producer;
    return p != kNone && nodes[p].is(id) ? p : kNone;
  }
  // Appends a node and one intermediate value per output type.
  NodeId add_node(const backend::OpDef* op, ValueList inputs, const backend::Attrs& attrs,
                  const backend::OutTypes& types);
  // Sets each intermediate's producer and index from the nodes, after a
  // pass put them in a new order.
  void link_producers();
  size_t edge_count() const;
  std::string where(const Loc& l) const { return locate && l.valid() ? locate(l) : std::string(); }
};

}  // namespace nn::ir
