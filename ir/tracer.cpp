// The tracer (ir/tracer.h): op calls become nodes, tensors become values.
#include "ir/tracer.h"

#include <typeinfo>

#include "backend/error.h"

namespace nn::ir {

// The mark of one trace's blocks, shared by all of them: which graph,
// whether the trace has ended (a traced tensor read afterwards escaped the
// graph), and where the op that made each value was called.
struct GraphMark : backend::TraceMark {
  std::string graph;
  std::function<std::string(const Loc&)> locate;
  bool done = false;
  std::vector<Loc> made_at;  // by value
  std::string where(ValueId v) const {
    return locate && v < made_at.size() && made_at[v].valid() ? locate(made_at[v]) : std::string();
  }
  std::string misuse(uint32_t value) const override {
    if (done) {
      std::string at = where(value);
      return "a tensor made inside graph `" + graph + "`" + (at.empty() ? "" : " at " + at) +
             " escaped the graph without being one of its outputs; return it from the graph";
    }
    return "cannot read the value of a tensor inside graph `" + graph +
           "`: it is not known while the graph is traced; keep it a tensor, or return it from the graph and read "
           "it outside";
  }
};

namespace {
thread_local Tracer* t_active = nullptr;
}  // namespace

Tracer::Tracer(std::string graph_name) : mark_(new GraphMark()) {
  graph_.name = std::move(graph_name);
  mark_->graph = graph_.name;
}

Tracer::~Tracer() {
  stop();
  mark_->done = true;
}

Tracer* Tracer::active() { return t_active; }

void Tracer::start() {
  if (started_) return;
  saved_hook_ = backend::dispatch_hook();
  backend::set_dispatch_hook(this);
  started_ = true;
  saved_active_ = t_active;
  t_active = this;
}

void Tracer::stop() {
  if (!started_) return;
  backend::set_dispatch_hook(saved_hook_);
  t_active = saved_active_;
  started_ = false;
}

backend::Tensor Tracer::make_traced(ValueId v) {
  const Value& val = graph_.values[v];
  if (!mark_->locate) mark_->locate = graph_.locate;
  if (mark_->made_at.size() <= v) mark_->made_at.resize(graph_.values.size());
  mark_->made_at[v] = backend::op_loc();
  return backend::Tensor::traced(val.type, backend::Ref<backend::TraceMark>(mark_.get()), v);
}

// A tensor this trace made knows its value through its block; the type
// check keeps a view of it that skipped dispatch (a new shape on the same
// block) from passing for it.
bool Tracer::made_here(const backend::Tensor& t) const {
  const backend::Block& b = *t.block();
  if (b.trace_mark() != mark_.get()) return false;
  const backend::TensorType& vt = graph_.values[b.trace_value()].type;
  return vt.dtype == t.dtype() && vt.shape == t.shape() && t.offset() == 0;
}

void Tracer::set_value(const backend::Tensor& t, ValueId v) {
  if (!made_here(t)) {
    values_[key(t)] = v;
    return;
  }
  // The tensor was made where its first value was.
  backend::Block& b = *t.block();
  if (mark_->made_at.size() <= v) mark_->made_at.resize(graph_.values.size());
  mark_->made_at[v] = mark_->made_at[b.trace_value()];
  b.set_trace_value(v);
}

ValueId Tracer::current(const backend::Tensor& t) const {
  if (made_here(t)) return t.block()->trace_value();
  auto it = values_.find(key(t));
  return it == values_.end() ? kNone : it->second;
}

backend::Tensor Tracer::add_input(const backend::TensorType& type, std::string name) {
  backend::TensorType t = type;
  t.weak = false;
  ValueId v = graph_.add_value(t, Role::input, std::move(name));
  graph_.inputs.push_back(v);
  backend::Tensor traced = make_traced(v);
  entries_.push_back({traced, v});
  return traced;
}

backend::Tensor Tracer::bind_input(const backend::Tensor& host, std::string name) {
  backend::TensorType t = host.type();
  ValueId v = graph_.add_value(t, Role::input, std::move(name));
  graph_.inputs.push_back(v);
  set_value(host, v);
  entries_.push_back({host, v});
  return host;
}

bool Tracer::is_traced(const backend::Tensor& t) const { return t.defined() && t.is_traced(); }

void Tracer::rebind(const backend::Tensor& host, const backend::Tensor& now) {
  ValueId v = value_of(now);
  value_of(host);  // captured first, so that finish() sees the update
  set_value(host, v);
  share_write(host);
  written_blocks_.insert(host.block().get());
  // From here on the tensor stands for the new value: a backward traced
  // later must not read it where an op saved the old one (SPEC §17).
  host.block()->note_write();
}

ValueId Tracer::capture(const backend::Tensor& t) {
  if (input_name) {
    std::string name = input_name(t);
    if (!name.empty()) {
      bind_input(t, std::move(name));
      return current(t);
    }
  }
  // A param stays a param; anything else is a constant until the trace
  // writes into it (finish() makes it a state then), but for a fed host
  // number, which changes between runs: a state, so that no pass folds it.
  Role role = t.impl()->requires_grad ? Role::param : t.impl()->fed ? Role::state : Role::constant;
  ValueId v = graph_.add_value(t.type(), role);
  graph_.values[v].captured = t;
  graph_.values[v].immutable = role == Role::constant && t.type().weak;  // a host number, made for this trace
  set_value(t, v);
  // A reshape of a tensor captured before (made outside the graph) is its alias.
  auto [same, fresh] = captured_at_.try_emplace({t.block().get(), t.offset(), t.nbytes(), t.dtype()}, entries_.size());
  entries_.push_back({t, v});
  if (!fresh) {
    const Captured first = entries_[same->second];
    note_view(first.tensor, t);
    if (current(first.tensor) != first.first) reshape_into(t, first.tensor);  // written already
  }
  return current(t);
}

ValueId Tracer::value_of(const backend::Tensor& t) {
  if (ValueId v = current(t); v != kNone) return v;
  if (t.is_traced())  // made by another trace, one that has ended
    throw backend::Error(t.block()->trace_mark()->misuse(t.block()->trace_value()));
  return capture(t);
}

void Tracer::push_scope(std::string name, const Loc& call) {
  graph_.scopes.push_back({std::move(name), scope_, call});
  scope_ = uint32_t(graph_.scopes.size() - 1);
}

void Tracer::pop_scope() { scope_ = graph_.scopes[scope_].parent; }

uint32_t Tracer::mirror(uint32_t s) {
  if (s == 0 || s >= graph_.scopes.size()) return scope_;
  const uint64_t key = (uint64_t(scope_) << 32) | s;
  if (key == last_mirror_.first) return last_mirror_.second;  // a rule's ops come in a row
  if (auto it = mirrors_.find(key); it != mirrors_.end()) {
    last_mirror_ = *it;
    return it->second;
  }
  const uint32_t parent = mirror(graph_.scopes[s].parent);
  graph_.scopes.push_back({"\u2207" + graph_.scopes[s].name, parent, graph_.scopes[s].call});
  const uint32_t m = uint32_t(graph_.scopes.size() - 1);
  mirrors_.emplace(key, m);
  return m;
}

NodeId Tracer::append(const backend::OpDef* op, std::span<const backend::Tensor> in, const backend::Attrs& attrs,
                      const backend::OutTypes& types) {
  ValueList ids;
  ids.reserve(in.size());
  for (const backend::Tensor& t : in) ids.push_back(value_of(t));
  NodeId n = graph_.add_node(op, std::move(ids), attrs, types);
  Node& node = graph_.nodes[n];
  node.loc = backend::op_loc();
  node.scope = backward_of_ ? mirror(backward_of_) : scope_;
  node.phase = phase_;
  return n;
}

bool Tracer::on_dispatch(const backend::OpDef& op, std::span<const backend::Tensor> in, const backend::Attrs& attrs,
                         const backend::OutTypes& types, backend::Tensors& out) {
  NodeId n = append(&op, in, attrs, types);
  out.clear();
  if (op.effect == backend::Effect::stateful) {
    // The op writes into its first input: from here on, the tensor the host
    // holds stands for the new value.
    set_value(in[0], graph_.nodes[n].outputs[0]);
    share_write(in[0]);
    out.push_back(in[0]);
    return true;
  }
  for (ValueId v : graph_.nodes[n].outputs) out.push_back(make_traced(v));
  if (op.view && !op.waits && out.size() == 1) note_view(in[0], out[0]);
  return true;
}

void Tracer::note_view(const backend::Tensor& base, const backend::Tensor& view) {
  auto [it, fresh] = alias_group_.try_emplace(key(base), uint32_t(alias_groups_.size()));
  if (fresh) alias_groups_.push_back({base});
  alias_group_.emplace(key(view), it->second);
  alias_groups_[it->second].push_back(view);
}

void Tracer::share_write(const backend::Tensor& written) {
  auto it = alias_group_.find(key(written));
  if (it == alias_group_.end()) return;
  for (const backend::Tensor& other : alias_groups_[it->second])
    if (!(key(other) == key(written))) reshape_into(other, written);
}

void Tracer::reshape_into(const backend::Tensor& alias, const backend::Tensor& from) {
  static const backend::OpDef& reshape = backend::op(backend::OpId::reshape);
  const backend::Attrs attrs{{"shape", alias.shape()}};
  const backend::TensorType t = graph_.values[current(from)].type;
  const NodeId n = append(&reshape, std::span(&from, 1), attrs, reshape.type_rule(std::span(&t, 1), attrs));
  set_value(alias, graph_.nodes[n].outputs[0]);
}

void Tracer::add_host_call(std::string name, std::span<const backend::Tensor> in, HostFn fn) {
  NodeId n = append(nullptr, in, {}, {});
  graph_.nodes[n].set_host(host_call(std::move(name), std::move(fn)));
}

std::string Tracer::origin(const backend::Tensor& t) const {
  const backend::TraceMark* m = t.block()->trace_mark();
  return m && typeid(*m) == typeid(GraphMark) ? static_cast<const GraphMark*>(m)->where(t.block()->trace_value())
                                              : std::string();
}

std::string Tracer::argument_name(const backend::Tensor& t) const {
  const ValueId v = holder_of(t);
  return v != kNone && graph_.values[v].role == Role::input ? graph_.name_of(v) : std::string();
}

ValueId Tracer::holder_of(const backend::Tensor& t) const {
  auto entry = [&](const backend::Tensor& u) {
    for (const Captured& c : entries_)
      if (key(c.tensor) == key(u)) return c.first;
    return kNone;
  };
  if (const ValueId v = entry(t); v != kNone) return v;  // an argument or a captured tensor
  auto it = alias_group_.find(key(t));
  if (it == alias_group_.end()) return kNone;
  for (const backend::Tensor& u : alias_groups_[it->second])
    if (const ValueId v = entry(u); v != kNone) return v;  // t is a reshape of its memory
  return kNone;
}

Graph Tracer::finish(std::span<const backend::Tensor> outputs) {
  for (const backend::Tensor& t : outputs) {
    ValueId v = value_of(t);
    graph_.values[v].output = true;
    graph_.outputs.push_back(v);
    graph_.output_holders.push_back(holder_of(t));
  }
  for (const Captured& c : entries_) {
    ValueId now = current(c.tensor);
    if (now == c.first) continue;
    if (graph_.values[c.first].role == Role::constant) graph_.values[c.first].role = Role::state;
    graph_.updates.push_back({c.first, now});
  }
  stop();
  mark_->done = true;
  entries_.clear();
  values_.clear();
  alias_group_.clear();
  alias_groups_.clear();
  captured_at_.clear();
  return std::move(graph_);
}

}  // namespace nn::ir
