// The IR verifier: the structural checks (ids, order, writers, roles), the
// type check of each op node against its type rule, and the checks of graph
// inputs, state updates and outputs.
#include "ir/verifier.h"

#include <span>

#include "backend/error.h"

namespace nn::ir {
namespace {

std::string id(ValueId v) { return (std::string("%") += std::to_string(v)); }

// "node 3 (matmul)": the index says where in the graph, the name what it is.
std::string label(const Graph& g, NodeId n) { return (std::string("node ") += std::to_string(n)) + " (" + g.nodes[n].name() + ")"; }

// "an input", "a param": roles as they read in a sentence.
std::string a_role(Role r) {
  std::string n = role_name(r);
  return (n == "input" ? "an " : "a ") + n;
}

bool same_type(const backend::TensorType& a, const backend::TensorType& b) {
  // Device and the weak flag are placement and promotion details the type
  // rules need not agree on; dtype and shape are what kernels rely on.
  return a.dtype == b.dtype && a.shape == b.shape;
}

class Verifier {
 public:
  explicit Verifier(const Graph& g) : g_(g), maker_(g.values.size(), kNone) {}

  std::vector<std::string> run() {
    find_makers();
    for (NodeId n = 0; n < g_.nodes.size(); ++n) check_node(n);
    check_values();
    check_interface();
    return std::move(problems_);
  }

 private:
  void problem(std::string s) { problems_.push_back(std::move(s)); }
  bool exists(ValueId v) const { return v < g_.values.size(); }

  // Which node writes each value; found first so that a read before the
  // write can name the later writer.
  void find_makers() {
    for (NodeId n = 0; n < g_.nodes.size(); ++n) {
      const Node& node = g_.nodes[n];
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        ValueId v = node.outputs[i];
        std::string slot = label(g_, n) + (std::string(": output ") += std::to_string(i)) + " ";
        if (!exists(v)) {
          problem(slot + id(v) + " does not exist");
        } else if (maker_[v] != kNone) {
          problem(id(v) + (std::string(" is produced twice, by node ") += std::to_string(maker_[v])) + " and node " +
                  std::to_string(n));
        } else if (g_.values[v].role != Role::intermediate) {
          // A node never writes a captured tensor or an input: those change
          // only through state updates after the run.
          problem(slot + "is " + id(v) + ", " + a_role(g_.values[v].role) + ", not an intermediate");
        } else {
          maker_[v] = n;
        }
      }
    }
  }

  void check_node(NodeId n) {
    const Node& node = g_.nodes[n];
    if (node.scope >= g_.scopes.size())
      problem(label(g_, n) + (std::string(": scope ") += std::to_string(node.scope)) + " does not exist");
    bool inputs_ok = true;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ValueId v = node.inputs[i];
      std::string slot = label(g_, n) + (std::string(": input ") += std::to_string(i)) + " reads " + id(v);
      if (!exists(v)) {
        problem(slot + ", which does not exist");
        inputs_ok = false;
      } else if (g_.values[v].role == Role::intermediate) {
        // Valid order: an intermediate is read only after its writer ran.
        if (maker_[v] == kNone) problem(slot + ", which no node makes");
        else if (maker_[v] >= n) problem(slot + (std::string(" before node ") += std::to_string(maker_[v])) + " makes it");
      }
    }
    if (!node.op) {
      if (!node.outputs.empty())
        problem(label(g_, n) + ": a host call makes no values, but this one has " +
                std::to_string(node.outputs.size()) + " outputs");
      return;
    }
    if (node.op->num_inputs >= 0 && size_t(node.op->num_inputs) != node.inputs.size()) {
      problem(label(g_, n) + (std::string(": takes ") += std::to_string(node.op->num_inputs)) + " inputs, has " +
              std::to_string(node.inputs.size()));
      return;  // the type rule may index inputs it expects
    }
    if (inputs_ok && node.op->type_rule) check_types(n);
    if (inputs_ok) check_overwrites(n);
  }

  // An output written over an input (the inplace pass) takes its memory:
  // the bytes must be the same.
  void check_overwrites(NodeId n) {
    const Node& node = g_.nodes[n];
    if (node.overwrites().empty()) return;
    if (node.overwrites().size() != node.outputs.size()) {
      problem(label(g_, n) + (std::string(": says what ") += std::to_string(node.overwrites().size())) +
              " outputs overwrite, but has " + std::to_string(node.outputs.size()));
      return;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const int k = node.overwrites()[i];
      if (k < 0) continue;
      std::string slot = label(g_, n) + (std::string(": output ") += std::to_string(i));
      if (size_t(k) >= node.inputs.size()) {
        problem(slot + (std::string(" overwrites input ") += std::to_string(k)) + ", which does not exist");
        continue;
      }
      if (!exists(node.outputs[i])) continue;
      const backend::TensorType &in = g_.values[node.inputs[size_t(k)]].type, &out = g_.values[node.outputs[i]].type;
      if (in.dtype != out.dtype || in.shape.numel() != out.shape.numel())
        problem(slot + " " + out.str() + (std::string(" overwrites input ") += std::to_string(k)) + " " + in.str() +
                ", of other bytes");
    }
  }

  // The node's output types must be what the op's type rule gives now: a
  // pass that rewires inputs or attributes must keep the types true.
  void check_types(NodeId n) {
    const Node& node = g_.nodes[n];
    std::vector<backend::TensorType> in;
    in.reserve(node.inputs.size());
    for (ValueId v : node.inputs) in.push_back(g_.values[v].type);
    backend::OutTypes want;
    try {
      want = node.op->type_rule(std::span<const backend::TensorType>(in), node.attrs);
    } catch (const std::exception& e) {
      problem(label(g_, n) + ": the type rule fails: " + e.what());
      return;
    }
    if (want.size() != node.outputs.size()) {
      problem(label(g_, n) + (std::string(": has ") += std::to_string(node.outputs.size())) + " outputs, the type rule gives " +
              std::to_string(want.size()));
      return;
    }
    for (size_t i = 0; i < want.size(); ++i) {
      ValueId v = node.outputs[i];
      if (exists(v) && !same_type(g_.values[v].type, want[i]))
        problem(label(g_, n) + (std::string(": output ") += std::to_string(i)) + " " + id(v) + " is " + g_.values[v].type.str() +
                ", the type rule gives " + want[i].str());
    }
  }

  // Every read has a writer: an intermediate's producer link points at the
  // node slot that writes it; nothing else has a producer.
  void check_values() {
    for (ValueId v = 0; v < g_.values.size(); ++v) {
      const Value& val = g_.values[v];
      if (val.role != Role::intermediate) {
        if (val.producer != kNone)
          problem(id(v) + " is " + a_role(val.role) + (std::string(" but has producer node ") += std::to_string(val.producer)));
        continue;
      }
      if (val.producer == kNone) {
        problem(id(v) + " is an intermediate with no producer");
        continue;
      }
      const bool linked = val.producer < g_.nodes.size() && val.index < g_.nodes[val.producer].outputs.size() &&
                          g_.nodes[val.producer].outputs[val.index] == v;
      if (!linked)
        problem(id(v) + (std::string(" names node ") += std::to_string(val.producer)) + (std::string(" output ") += std::to_string(val.index)) +
                " as its producer, which is not " + id(v));
    }
  }

  void check_interface() {
    for (ValueId v : g_.inputs) {
      if (!exists(v)) problem("graph input " + id(v) + " does not exist");
      else if (g_.values[v].role != Role::input)
        problem("graph input " + id(v) + " is " + a_role(g_.values[v].role) + ", not an input");
    }
    for (const StateUpdate& u : g_.updates) {
      std::string what = "state update " + id(u.state) + " <- " + id(u.value) + ": ";
      if (!exists(u.state) || !exists(u.value)) {
        problem(what + (exists(u.state) ? id(u.value) : id(u.state)) + " does not exist");
        continue;
      }
      const Value& s = g_.values[u.state];
      const Value& x = g_.values[u.value];
      // A param an optimizer updates stays a param; an updated input is the
      // caller's tensor written in place, as in eager mode.
      if (s.role != Role::state && s.role != Role::param && s.role != Role::input)
        problem(what + id(u.state) + " is " + a_role(s.role) + ", not a state, param or input");
      // The write-back copies bytes into the captured tensor: no conversion.
      if (!same_type(s.type, x.type))
        problem(what + "the value is " + x.type.str() + ", the state is " + s.type.str());
    }
    for (ValueId v : g_.outputs)
      if (!exists(v)) problem("graph output " + id(v) + " does not exist");
    // A run hands back a holder's tensor itself, viewed as its output.
    if (!g_.output_holders.empty() && g_.output_holders.size() != g_.outputs.size())
      problem(std::to_string(g_.output_holders.size()) + " output holders for " + std::to_string(g_.outputs.size()) +
              " outputs");
    for (size_t i = 0; i < g_.output_holders.size() && i < g_.outputs.size(); ++i) {
      const ValueId h = g_.output_holders[i], v = g_.outputs[i];
      if (h == kNone || !exists(v)) continue;
      if (!exists(h)) problem("the holder " + id(h) + " of output " + std::to_string(i) + " does not exist");
      else if (g_.values[h].role == Role::intermediate)
        problem("the holder " + id(h) + " of output " + std::to_string(i) + " is made by a node, not given or captured");
      else if (g_.values[h].type.shape.numel() != g_.values[v].type.shape.numel() ||
               g_.values[h].type.dtype != g_.values[v].type.dtype)
        problem("the holder " + id(h) + " of output " + std::to_string(i) + " is " + g_.values[h].type.str() +
                ", the output " + g_.values[v].type.str());
    }
  }

  const Graph& g_;
  std::vector<NodeId> maker_;  // per value: the first node that writes it
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> verify(const Graph& g) { return Verifier(g).run(); }

void check(const Graph& g) {
  std::vector<std::string> problems = verify(g);
  if (problems.empty()) return;
  std::string msg = "internal: IR of graph " + g.name + " is invalid: " + problems.front();
  if (problems.size() > 1) msg += (std::string(" (and ") += std::to_string(problems.size() - 1)) + " more)";
  throw backend::Error(msg);
}

}  // namespace nn::ir
