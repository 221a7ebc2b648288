// The pass pipeline and the Rewriter every pass edits the graph through.
#include "ir/pass.h"

#include <algorithm>
#include <chrono>

namespace nn::ir {

std::unique_ptr<Pass> make_constant_fold();
std::unique_ptr<Pass> make_algebraic();
std::unique_ptr<Pass> make_transpose_transpose();
std::unique_ptr<Pass> make_reshape_reshape();
std::unique_ptr<Pass> make_cast_round_trip();
std::unique_ptr<Pass> make_broadcast_into_consumer();
std::unique_ptr<Pass> make_transpose_into_matmul();
std::unique_ptr<Pass> make_common_subexpr();
std::unique_ptr<Pass> make_slice_grads_into_concat();
std::unique_ptr<Pass> make_relu_grad_through_max_pool();
std::unique_ptr<Pass> make_recompute();
std::unique_ptr<Pass> make_bucket_all_reduce();
std::unique_ptr<Pass> make_batch_norm_apply_into_elementwise();
std::unique_ptr<Pass> make_blocked_layout();
std::unique_ptr<Pass> make_fuse_elementwise();
std::unique_ptr<Pass> make_fuse_matmul_epilogue();
std::unique_ptr<Pass> make_fuse_conv_relu();
std::unique_ptr<Pass> make_fuse_conv_relu_pool();
std::unique_ptr<Pass> make_dead_code();
std::unique_ptr<Pass> make_inplace();

std::vector<std::unique_ptr<Pass>> default_passes() {
  std::vector<std::unique_ptr<Pass>> p;
  p.push_back(make_constant_fold());
  p.push_back(make_algebraic());
  p.push_back(make_transpose_transpose());
  p.push_back(make_reshape_reshape());
  p.push_back(make_cast_round_trip());
  p.push_back(make_broadcast_into_consumer());
  p.push_back(make_transpose_into_matmul());
  p.push_back(make_common_subexpr());
  p.push_back(make_slice_grads_into_concat());
  p.push_back(make_relu_grad_through_max_pool());
  p.push_back(make_bucket_all_reduce());
  // Before fusion, which then merges the recomputed ops with the backward's.
  p.push_back(make_recompute());
  p.push_back(make_dead_code());
  p.push_back(make_batch_norm_apply_into_elementwise());
  // After autodiff and recompute, which see plain NCHW ops only; before
  // fusion, which then merges the blocked elementwise ops.
  p.push_back(make_blocked_layout());
  p.push_back(make_fuse_elementwise());
  p.push_back(make_fuse_matmul_epilogue());
  p.push_back(make_fuse_conv_relu());
  p.push_back(make_fuse_conv_relu_pool());
  // Last: its annotations name input positions, which a later rewrite of
  // the nodes would invalidate.
  p.push_back(make_inplace());
  return p;
}

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (auto& p : default_passes()) names.push_back(p->name());
  return names;
}

std::vector<PassResult> optimize(Graph& g, const std::set<std::string>& disabled,
                                 const std::function<void(const std::string&, const Graph&)>& after) {
  std::vector<PassResult> results;
  for (auto& pass : default_passes()) {
    if (disabled.contains(pass->name()) || (pass->serves() && disabled.contains(pass->serves()))) continue;
    auto t0 = std::chrono::steady_clock::now();
    PassResult r;
    r.pass = pass->name();
    r.changed = pass->run(g);
    r.nodes_after = g.nodes.size();
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    results.push_back(r);
    if (after) after(r.pass, g);
  }
  return results;
}

Uses count_uses(const Graph& g) {
  Uses u;
  u.readers.assign(g.values.size(), 0);
  u.kept.assign(g.values.size(), false);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs) ++u.readers[v];
  for (ValueId v : g.outputs) u.kept[v] = true;
  for (const StateUpdate& s : g.updates) u.kept[s.value] = true;
  return u;
}

ValueId append_like(Graph& g, std::vector<Node>& nodes, const Node& near, backend::OpId op, std::vector<ValueId> in,
                    backend::Attrs attrs, ValueId out) {
  const backend::OpDef& d = backend::op(op);
  if (out == kNone) out = g.add_value(d.type_rule(g.types_of(in), attrs)[0], Role::intermediate);
  Node m;
  m.op = &d;
  m.attrs = std::move(attrs);
  m.inputs = std::move(in);
  m.outputs = {out};
  m.loc = near.loc;
  m.scope = near.scope;
  m.phase = near.phase;
  m.recomputed = near.recomputed;
  nodes.push_back(std::move(m));
  return out;
}

Rewriter::Rewriter(Graph& g) : g_(g), to_(g.values.size()), dropped_(g.nodes.size(), false) {
  for (ValueId v = 0; v < to_.size(); ++v) to_[v] = v;
}

void Rewriter::replace(ValueId from, ValueId to) { to_[from] = to; }

ValueId Rewriter::resolve_chain(ValueId v) {
  ValueId r = v;
  while (to_[r] != r) r = to_[r];
  while (to_[v] != r) v = std::exchange(to_[v], r);  // shorten the chain
  return r;
}

ValueId Rewriter::add_constant(const backend::Tensor& t) {
  ValueId v = g_.add_value(t.type(), Role::constant);
  g_.values[v].captured = t;
  g_.values[v].immutable = true;
  to_.push_back(v);
  return v;
}

void Rewriter::apply() {
  // Only the outputs carry the output mark (the tracer sets it on them and
  // nothing else does): moving it touches them, not every value.
  const std::vector<ValueId> old_outputs = g_.outputs;
  for (ValueId& v : g_.outputs) v = resolve(v);
  for (StateUpdate& s : g_.updates) s.value = resolve(s.value);
  // An update to the value the state already holds does nothing.
  std::erase_if(g_.updates, [](const StateUpdate& s) { return s.state == s.value; });

  // What survives: live nodes (their reads resolved on the way), their
  // values, the inputs, and the captured values something still reads.
  const size_t nv = g_.values.size();
  std::vector<bool> used(nv, false);
  bool any_dropped = false;
  for (NodeId i = 0; i < g_.nodes.size(); ++i) {
    if (dropped_[i]) {
      any_dropped = true;
      continue;
    }
    Node& n = g_.nodes[i];
    for (ValueId& v : n.inputs) used[v = resolve(v)] = true;
    for (ValueId v : n.outputs) used[v] = true;
  }
  for (ValueId v : g_.inputs) used[v] = true;
  for (ValueId v : g_.outputs) used[v] = true;
  for (ValueId v : g_.output_holders)
    if (v != kNone) used[v] = true;  // a run returns it, read or not
  for (const StateUpdate& s : g_.updates) used[s.state] = used[s.value] = true;
  if (!any_dropped && std::find(used.begin(), used.end(), false) == used.end()) {
    // Nothing to remove: ids stay, only the output marks may have moved.
    for (ValueId v : old_outputs) g_.values[v].output = false;
    for (ValueId v : g_.outputs) g_.values[v].output = true;
    for (ValueId v = 0; v < to_.size(); ++v) to_[v] = v;
    return;
  }

  // Compacted in place: the survivors move down over the dropped, in order.
  std::vector<ValueId> new_id(nv, kNone);
  size_t kept = 0;
  for (ValueId v = 0; v < nv; ++v) {
    if (!used[v]) continue;
    new_id[v] = ValueId(kept);
    if (kept != v) g_.values[kept] = std::move(g_.values[v]);
    ++kept;
  }
  g_.values.resize(kept);
  std::vector<Value>& values = g_.values;
  size_t live = 0;
  for (NodeId i = 0; i < g_.nodes.size(); ++i) {
    if (dropped_[i]) continue;
    if (live != i) g_.nodes[live] = std::move(g_.nodes[i]);
    Node& n = g_.nodes[live];
    for (ValueId& v : n.inputs) v = new_id[v];
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      n.outputs[k] = new_id[n.outputs[k]];
      values[n.outputs[k]].producer = NodeId(live);
    }
    ++live;
  }
  g_.nodes.resize(live);
  for (ValueId v : old_outputs)
    if (new_id[v] != kNone) values[new_id[v]].output = false;
  for (ValueId& v : g_.inputs) v = new_id[v];
  for (ValueId& v : g_.outputs) {
    v = new_id[v];
    values[v].output = true;
  }
  for (ValueId& v : g_.output_holders)
    if (v != kNone) v = new_id[v];
  for (StateUpdate& s : g_.updates) {
    s.state = new_id[s.state];
    s.value = new_id[s.value];
  }
  to_.assign(g_.values.size(), 0);
  for (ValueId v = 0; v < to_.size(); ++v) to_[v] = v;
  dropped_.assign(g_.nodes.size(), false);
}

}  // namespace nn::ir
