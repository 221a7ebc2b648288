// Eager autodiff (backend/autograd.h): params and grad mode, the recording of
// op calls on a tape of GradNodes hung on their outputs, the backward walk of
// grad(), and sum_to for the backward rules.
//
// The tape is not a list: each output of a recorded op points to its node,
// each node holds its inputs (and so their nodes). Dropping the loss drops
// the tape. Every walk over it is iterative, and so is its teardown, because
// a training loop's tape can be a chain of 100k nodes and C++ recursion of
// that depth overflows the stack.
#include "backend/autograd.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

#include "backend/autocast.h"
#include "backend/ops.h"

namespace nn::backend {
namespace {

thread_local bool t_grad_enabled = true;

// A loss that depends on what grad() gave: rules run without recording
// (no gradients of gradients), so that part would count for nothing.
constexpr const char* kSecondDerivatives =
    "grad: the loss depends on a gradient that grad gave (a gradient penalty, a Hessian-vector product), and "
    "nn does not differentiate gradients: that part of the loss would count for nothing. detach() the "
    "gradient where it is meant as a constant";

// A new handle on t's memory with no history; `weak` is kept (a host number
// stays one).
Tensor fresh_view(const Tensor& t) {
  Tensor v = t.view(t.shape());
  v.set_weak(t.weak());
  return v;
}

Tensor zeros_of(const Tensor& t) { return to_device(zeros(t.shape(), t.dtype()), t.device()); }

void accumulate(Tensor& slot, const Tensor& g) { slot = slot.defined() ? add(slot, g) : g; }

// One node of the walk: its accumulated output gradients, whether any
// wanted tensor lies behind it, and which wrt entries are its outputs.
struct WalkNode {
  GradNode* node = nullptr;
  bool needed = false;
  size_t first_input = 0;  // its inputs' makers: BackwardWalk::makers_[first_input ..]
  std::vector<Tensor> grads;                       // one per output, filled by its consumers
  std::vector<std::pair<uint32_t, size_t>> wanted;  // (output index, wrt index)
};

// The walk's index of the nodes it has met: open addressing over a flat
// array, so that a walk over tens of thousands of nodes allocates no map
// node for each.
class NodeIndex {
 public:
  static constexpr size_t kAbsent = SIZE_MAX;
  size_t find(const GradNode* n) const {
    if (slots_.empty()) return kAbsent;
    for (size_t at = hash(n);; at = (at + 1) & mask()) {
      if (slots_[at].first == n) return slots_[at].second;
      if (!slots_[at].first) return kAbsent;
    }
  }
  void insert(const GradNode* n, size_t k) {  // n is not in the index yet
    if (2 * (used_ + 1) > slots_.size()) grow();
    size_t at = hash(n);
    while (slots_[at].first) at = (at + 1) & mask();
    slots_[at] = {n, k};
    ++used_;
  }

 private:
  size_t mask() const { return slots_.size() - 1; }
  size_t hash(const GradNode* n) const { return size_t((uintptr_t(n) >> 4) * 0x9e3779b97f4a7c15ull >> 17) & mask(); }
  void grow() {
    std::vector<std::pair<const GradNode*, size_t>> old(std::max<size_t>(64, 2 * slots_.size()));
    old.swap(slots_);
    used_ = 0;
    for (const auto& [n, k] : old)
      if (n) insert(n, k);
  }
  std::vector<std::pair<const GradNode*, size_t>> slots_;  // (node, index into the walk's nodes); null: free
  size_t used_ = 0;
};

// One grad() call: the steps of the backward walk over the tape behind y.
class BackwardWalk {
 public:
  BackwardWalk(const Tensor& y, const std::vector<Tensor>& wrt) : y_(y), wrt_(wrt), result_(wrt.size()) {}

  std::vector<Tensor> run() {
    collect_nodes();
    find_wanted();
    mark_needed();
    seed();
    // Consumers before producers: reverse post-order.
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) run_rule(nodes_[*it]);
    check_reached();
    check_graph_results();
    return results();
  }

 private:
  // Every node the loss depends on, inputs before their consumers
  // (post-order of an iterative depth-first walk), and the maker of each of
  // their inputs.
  void collect_nodes() {
    GradNode* root = y_.impl()->grad_fn.get();
    if (!root) return;
    std::vector<std::pair<size_t, size_t>> stack;  // (index into nodes_, next input to look at)
    auto visit = [&](GradNode* n) {
      const size_t k = nodes_.size();
      index_.insert(n, k);
      nodes_.push_back({n, false, makers_.size(), {}, {}});
      makers_.resize(makers_.size() + n->inputs.size(), kLeaf);
      stack.emplace_back(k, 0);
      return k;
    };
    visit(root);
    while (!stack.empty()) {
      const auto [k, at] = stack.back();
      const WalkNode& w = nodes_[k];
      if (at < w.node->inputs.size()) {
        ++stack.back().second;
        if (GradNode* c = w.node->recorded[at].maker) {
          const size_t slot = w.first_input + at;
          const size_t known = index_.find(c);
          makers_[slot] = known != NodeIndex::kAbsent ? known : visit(c);  // visit may move nodes_ and the stack
        }
      } else {
        order_.push_back(k);
        stack.pop_back();
      }
    }
  }

  // What is wanted: outputs of nodes (intermediate tensors) by (node, output
  // index); anything else (params, and the loss itself when it has no
  // history) by TensorImpl identity.
  void find_wanted() {
    for (size_t j = 0; j < wrt_.size(); ++j) {
      const TensorImpl* impl = wrt_[j].impl();
      if (const GradNode* fn = impl->grad_fn.get()) {
        if (size_t k = index_.find(fn); k != NodeIndex::kAbsent) nodes_[k].wanted.emplace_back(impl->output_index, j);
        // else: y does not depend on it; it gets zeros in results().
      } else {
        wanted_leaves_[impl].push_back(j);
      }
    }
  }

  // Whether a wanted tensor lies behind input i of w (the input included).
  bool leads_to_wanted(const WalkNode& w, size_t i) const {
    if (const size_t m = makers_[w.first_input + i]; m != kLeaf) return nodes_[m].needed;
    const TensorImpl* impl = w.node->inputs[i].impl();
    return impl->requires_grad && wanted_leaves_.contains(impl);
  }

  // A node is worth running when a wanted tensor lies behind it: inputs come
  // first in `order_`, so one pass settles it.
  void mark_needed() {
    for (size_t k : order_) {
      WalkNode& w = nodes_[k];
      bool needed = !w.wanted.empty();
      for (size_t i = 0; i < w.node->inputs.size() && !needed; ++i) needed = leads_to_wanted(w, i);
      w.needed = needed;
    }
  }

  // d y / d y = 1.
  void seed() {
    Tensor one = to_device(ones(y_.shape(), y_.dtype()), y_.device());
    if (GradNode* root = y_.impl()->grad_fn.get()) {
      WalkNode& r = nodes_[index_.find(root)];  // the walk starts at the root
      r.grads.resize(root->outputs.size());
      r.grads[y_.impl()->output_index] = one;
    } else if (wanted_leaves_.contains(y_.impl())) {
      leaf_grads_[y_.impl()] = one;
    }
  }

  // Tells the dispatch hook whose backward the next ops are, for its life.
  class BackwardGroup {
   public:
    explicit BackwardGroup(uint32_t group) : hook_(group ? dispatch_hook() : nullptr) {
      if (hook_) saved_ = hook_->backward_of(group);
    }
    ~BackwardGroup() {
      if (hook_) hook_->backward_of(saved_);
    }
    BackwardGroup(const BackwardGroup&) = delete;
    BackwardGroup& operator=(const BackwardGroup&) = delete;

   private:
    DispatchHook* hook_;
    uint32_t saved_ = 0;
  };

  // Runs one node's backward rule on its output gradients and passes the
  // input gradients on to the nodes (or wanted leaves) that made the inputs.
  void run_rule(WalkNode& w) {
    if (!w.needed) return;
    GradNode& n = *w.node;
    w.grads.resize(n.outputs.size());
    bool any = false;
    for (const Tensor& g : w.grads) any = any || g.defined();
    for (auto [out, j] : w.wanted) result_[j] = w.grads[out];
    if (!any) {  // no gradient reached this node (its consumers gave none)
      w.grads = {};
      return;
    }
    for (const Tensor& in : n.inputs) met_graph_result_ = met_graph_result_ || (in.defined() && in.impl()->graph_result);
    for (size_t k = 0; k < w.grads.size(); ++k)
      if (!w.grads[k].defined()) w.grads[k] = zeros_of(n.outputs[k]);
    BackwardArgs args{n.inputs, n.outputs, n.attrs, w.grads};
    args.needs = 0;
    for (size_t i = 0; i < n.inputs.size() && i < 64; ++i)
      if (leads_to_wanted(w, i)) args.needs |= uint64_t(1) << i;
    // A gradient grad gave meets what is differentiated here: its own
    // dependence on those tensors would count for nothing. (A node whose
    // inputs lead to nothing wanted, as `w = w - lr * g` before a grad by
    // the new w, passes no gradient through it.)
    for (const Tensor& in : n.inputs)
      if (args.needs && in.defined() && in.impl()->grad_result && !in.impl()->requires_grad && is_floating(in.dtype()))
        throw Error(kSecondDerivatives);
    check_unchanged(n);
    BackwardGroup group(n.group);
    std::vector<Tensor> gin = n.op->backward(args);
    w.grads = {};  // this node is done: free its output gradients now
    check_rule(n, gin);
    for (size_t i = 0; i < gin.size(); ++i)
      if (gin[i].defined()) pass_on(w, i, gin[i]);
  }

  // The rule reads the node's inputs and outputs as they are now: one
  // written in place since the op ran (an output through detach() or under
  // no_grad) would give a wrong gradient without a word.
  static void check_unchanged(const GradNode& n) {
    if (n.writes == writes_so_far()) return;  // nothing anywhere was written in place since
    auto refuse = [&](const Tensor& t, const std::string& which, bool output) {
      throw ChangedInPlace("grad: " + t.type().str() + ", " + which + " of " + n.op->name +
                               ", was changed in place after " + n.op->name + (output ? " made" : " used") +
                               " it, so its gradient would be wrong; compute the loss again after the change, "
                               "or change a copy",
                           t, n.op->name, n.loc, t.block()->written_at(), output);
    };
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Tensor& t = n.inputs[i];
      if (t.defined() && t.block()->version() != n.recorded[i].version) refuse(t, "input " + std::to_string(i), false);
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const Tensor& t = n.outputs[k];
      if (t.defined() && t.block()->version() != n.recorded[n.inputs.size() + k].version)
        refuse(t, "output " + std::to_string(k), true);
    }
  }

  // A rule's mistake would otherwise surface far away, as a shape error in
  // an unrelated add or in the optimizer.
  static void check_rule(const GradNode& n, const std::vector<Tensor>& gin) {
    if (gin.size() != n.inputs.size())
      throw Error("internal: the backward rule of " + n.op->name + " gave " + std::to_string(gin.size()) +
                  " gradients for " + std::to_string(n.inputs.size()) + " inputs");
    for (size_t i = 0; i < gin.size(); ++i) {
      const Tensor& in = n.inputs[i];
      if (gin[i].defined() && (gin[i].shape() != in.shape() || gin[i].dtype() != in.dtype()))
        throw Error("internal: the backward rule of " + n.op->name + " gave a " + gin[i].type().str() +
                    " gradient for its input " + std::to_string(i) + " of type " + in.type().str());
    }
  }

  // Adds g to the gradient of input i of w, when a wanted tensor lies behind it.
  void pass_on(const WalkNode& w, size_t i, const Tensor& g) {
    const TensorImpl* impl = w.node->inputs[i].impl();
    if (const size_t m = makers_[w.first_input + i]; m != kLeaf) {
      WalkNode& c = nodes_[m];
      if (!c.needed) return;
      c.grads.resize(c.node->outputs.size());
      BackwardGroup group(c.node->group);  // a sum of gradients belongs to the backward of their tensor's op
      accumulate(c.grads[impl->output_index], g);
    } else if (impl->requires_grad && wanted_leaves_.contains(impl)) {
      accumulate(leaf_grads_[impl], g);
    }
  }

  // A loss that depends on none of wrt would give zeros and an optimizer
  // step that does nothing, step after step: refuse (SPEC §17). One unused
  // entry among used ones still gets zeros.
  void check_reached() const {
    if (wrt_.empty()) return;
    for (const Tensor& r : result_)
      if (r.defined()) return;
    for (const auto& [impl, js] : wanted_leaves_)
      if (leaf_grads_.contains(impl)) return;
    if (y_.impl()->graph_result && !y_.impl()->grad_fn)
      throw Error("grad: the loss was computed by a graph, and a graph's results carry no autodiff history; "
                  "call grad (or minimize) inside the graph");
    if (y_.impl()->grad_result && !y_.impl()->grad_fn) throw Error(kSecondDerivatives);
    throw Error(std::string("grad: the loss does not depend on ") +
                (wrt_.size() == 1 ? "the tensor" : "any of the " + std::to_string(wrt_.size()) + " tensors") +
                " it is differentiated with respect to; was it computed without them, under no_grad, or "
                "from detach()ed values?");
  }

  // A loss that depends on a compiled graph's result (which has no history)
  // and gives some wrt entry no gradient: if the graph read that tensor, its
  // gradient through the graph is missing, and zeros would be silently wrong.
  void check_graph_results() const {
    if (!met_graph_result_) return;
    for (size_t j = 0; j < wrt_.size(); ++j) {
      if (result_[j].defined() || leaf_grads_.contains(wrt_[j].impl())) continue;
      throw Error("grad: the loss depends on a compiled graph's result, which carries no autodiff history, and "
                  "the tensor " + wrt_[j].type().str() +
                  (wrt_.size() == 1 ? std::string() : " (item " + std::to_string(j) + " of the list)") +
                  " gets no gradient: what the graph computed from it would count for "
                  "nothing. Call grad (or minimize) inside the graph, or detach() the graph's result where no "
                  "gradient should flow through it");
    }
  }

  // One gradient per wrt entry: the leaves' sums, zeros where the loss does
  // not depend on it, and distinct memory for distinct tensors: a rule may
  // pass one gradient on to several inputs (add), and an in-place update of
  // one result (`g1 *= 0.5`) must not change another.
  std::vector<Tensor> results() {
    for (auto& [impl, js] : wanted_leaves_) {
      auto it = leaf_grads_.find(impl);
      if (it == leaf_grads_.end()) continue;
      for (size_t j : js) result_[j] = it->second;
    }
    std::unordered_map<const Block*, const TensorImpl*> owner;
    for (size_t j = 0; j < wrt_.size(); ++j) {
      if (!result_[j].defined()) {
        result_[j] = zeros_of(wrt_[j]);
        continue;
      }
      auto [it, fresh] = owner.emplace(result_[j].block().get(), wrt_[j].impl());
      if (!fresh && it->second != wrt_[j].impl())
        result_[j] = mul(result_[j], scalar(1.0, DType::f64, /*weak=*/true));  // a copy
    }
    return std::move(result_);
  }

  const Tensor& y_;
  const std::vector<Tensor>& wrt_;
  std::vector<WalkNode> nodes_;
  NodeIndex index_;  // into nodes_
  static constexpr size_t kLeaf = SIZE_MAX;
  std::vector<size_t> makers_;  // per node input: the index of the node that made it, or kLeaf
  std::vector<size_t> order_;                          // indices into nodes_, post-order
  std::unordered_map<const TensorImpl*, std::vector<size_t>> wanted_leaves_;  // wrt indices of each leaf
  std::unordered_map<const TensorImpl*, Tensor> leaf_grads_;                 // wanted leaves only
  std::vector<Tensor> result_;
  bool met_graph_result_ = false;  // a node that got a gradient read a graph's result
};

}  // namespace

// ---- params and grad mode -------------------------------------------------------

Tensor param(const Tensor& t) {
  if (!t.defined()) throw Error("param: the tensor is undefined");
  if (!is_floating(t.dtype()))
    throw Error("param needs a float tensor, not " + t.type().str() + "; convert it first, e.g. astype(x, f32)");
  Tensor p = t;
  // A host number becomes a tensor of its category's default dtype (f32).
  if (t.weak()) p = astype(t, default_dtype(category(t.dtype())));
  Tensor leaf = p.view(p.shape());
  leaf.impl()->requires_grad = true;
  return leaf;
}

bool requires_grad(const Tensor& t) { return t.defined() && t.impl()->requires_grad; }

Tensor detach(const Tensor& t) { return t.defined() ? fresh_view(t) : t; }

bool grad_enabled() { return t_grad_enabled; }

NoGradGuard::NoGradGuard() : saved_(t_grad_enabled) { t_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { t_grad_enabled = saved_; }

// ---- recording ---------------------------------------------------------------------

// Frees a tape without recursion. Releasing a node's inputs may release
// their nodes, and so on down the tape: inputs released while another node
// is being freed on this thread are queued instead, and the outermost call
// drops the queue one tensor at a time. The queue is a plain pointer, made
// on demand and freed once drained, so that it is valid for nodes freed
// while thread-local destructors run.
GradNode::~GradNode() {
  thread_local std::vector<Tensor>* pending = nullptr;
  thread_local bool active = false;
  if (active) {
    if (inputs.empty()) return;
    if (!pending) pending = new std::vector<Tensor>();
    for (Tensor& t : inputs) pending->push_back(std::move(t));
    return;
  }
  active = true;
  inputs.clear();  // the nodes this frees queue their own inputs
  while (pending && !pending->empty()) {
    Tensor t = std::move(pending->back());
    pending->pop_back();
  }
  delete pending;
  pending = nullptr;
  active = false;
}

void record_op(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs, std::span<Tensor> out) {
  // A stateful op (assign_slice) returns its first input itself, written in
  // place: recording it would hang a node on a tensor that is its own input.
  if (!t_grad_enabled || !op.backward || op.effect == Effect::stateful) return;
  bool any = false, from_graph = false, from_grad = false;
  for (const Tensor& t : in)
    if (t.defined()) {
      any = any || t.impl()->requires_grad;
      from_graph = from_graph || t.impl()->graph_result;
      from_grad = from_grad || t.impl()->grad_result;
    }
  if (!any) {
    // What is computed from a graph's result, or from a gradient, has no
    // history either, and says so: grad() then tells a loss that mixes it
    // with params.
    for (Tensor& t : out)
      if (t.defined()) {
        t.impl()->graph_result = t.impl()->graph_result || from_graph;
        t.impl()->grad_result = t.impl()->grad_result || from_grad;
      }
    return;
  }
  // Only float outputs carry gradients: an op whose outputs are all integer
  // or bool (a cast to i64) ends the path here.
  bool float_out = false;
  for (const Tensor& t : out) float_out = float_out || is_floating(t.dtype());
  if (!float_out) return;

  auto node = std::make_shared<GradNode>();
  node->op = &op;
  node->inputs.assign(in.begin(), in.end());
  node->recorded.reserve(in.size() + out.size());
  for (const Tensor& t : in)
    node->recorded.push_back(t.defined() ? GradNode::Recorded{t.impl()->grad_fn.get(), t.block()->version()}
                                         : GradNode::Recorded{nullptr, 0});
  node->writes = writes_so_far();
  node->loc = script_loc();
  if (const DispatchHook* hook = dispatch_hook()) node->group = hook->group();
  node->attrs = attrs;
  node->outputs.reserve(out.size());
  // The node keeps views of its outputs without history: holding the
  // outputs themselves would be a cycle (output -> node -> output).
  for (const Tensor& t : out) {
    node->outputs.push_back(fresh_view(t));
    node->recorded.push_back({nullptr, t.defined() ? t.block()->version() : 0});
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!is_floating(out[i].dtype())) continue;
    TensorImpl* impl = out[i].impl();
    impl->grad_fn = node;
    impl->output_index = uint32_t(i);
    impl->requires_grad = true;
  }
}

// ---- the backward walk ----------------------------------------------------------------

std::vector<Tensor> grad(const Tensor& y, const std::vector<Tensor>& wrt) {
  if (!y.defined()) throw Error("grad: the loss is undefined");
  if (y.numel() != 1)
    throw Error("grad needs a scalar loss, not " + y.type().str() + "; reduce it first, e.g. with sum() or mean()");
  for (const Tensor& t : wrt)
    if (!t.defined()) throw Error("grad: a tensor to differentiate with respect to is undefined");
  // Rules compute with grad mode off: no graph of the backward pass itself.
  NoGradGuard no_grad;
  // and without autocast: each gradient keeps its forward value's dtype
  // (the casts autocast placed are on the tape and cast gradients back).
  AutocastScope plain(DType::f32);
  std::vector<Tensor> grads = BackwardWalk(y, wrt).run();
  for (Tensor& g : grads) g.impl()->grad_result = true;
  return grads;
}

// ---- sum_to -----------------------------------------------------------------------------

Tensor sum_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const int lead = g.ndim() - shape.ndim();
  if (lead < 0)
    throw Error("internal: sum_to cannot sum " + g.type().str() + " to the larger shape " + shape.str());
  std::vector<int64_t> axes;
  for (int d = 0; d < g.ndim(); ++d) {
    if (d < lead) axes.push_back(d);
    else if (shape[d - lead] == 1 && g.shape()[d] != 1) axes.push_back(d);
    else if (shape[d - lead] != g.shape()[d])
      throw Error("internal: sum_to cannot sum " + g.type().str() + " to the shape " + shape.str());
  }
  if (axes.empty()) return reshape(g, shape.vec());
  // Summing the leading dims away leaves the shape: one op, not two.
  if (axes.back() < lead) return sum(g, axes, /*keepdims=*/false);
  return reshape(sum(g, axes, /*keepdims=*/true), shape.vec());
}

}  // namespace nn::backend
