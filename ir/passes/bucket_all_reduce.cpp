// Pass `bucket-all-reduce`: the gradient all-reduces of data_parallel (SPEC
// §14; one `all_reduce` node a gradient, with attribute bucket_bytes) become
// buckets, as PyTorch's DDP makes them (backend/comm/buckets.h): in the
// order the graph's backward makes the gradients, each bucket one
// all_reduce_start (copy the gradients into one flat tensor, start reducing
// it) and one all_reduce_wait (wait, give the pieces back). The schedule
// runs each start as soon as its last gradient exists and each wait as late
// as its readers allow (ir/schedule.cpp), so a bucket travels while the
// backward of earlier layers goes on.
#include <algorithm>
#include <map>

#include "backend/comm/buckets.h"
#include "ir/pass.h"

namespace nn::ir {
namespace {

// One optimizer step's gradients (the all-reduces of one data_parallel
// call, attribute `step`): their buckets' nodes, to go where the last of
// them was (every gradient exists there), the starts in bucket order, which
// is the order the ranks talk in, then the waits.
std::vector<Node> bucket_nodes(Graph& g, std::vector<NodeId> grads) {
  // In the order backward makes them: by their producers' places.
  auto made_at = [&](NodeId i) {
    const NodeId p = g.values[g.nodes[i].inputs[0]].producer;
    return p == kNone ? int64_t(-1) : int64_t(p);
  };
  std::stable_sort(grads.begin(), grads.end(), [&](NodeId a, NodeId b) { return made_at(a) < made_at(b); });
  std::vector<backend::TensorType> types;
  for (NodeId i : grads) types.push_back(g.values[g.nodes[i].inputs[0]].type);
  const size_t cap = size_t(g.nodes[grads[0]].attrs.get<int64_t>("bucket_bytes"));
  std::vector<Node> starts, waits;
  for (const std::vector<size_t>& bucket : backend::comm::plan_buckets(types, cap)) {
    ValueList in, out;
    std::vector<backend::Shape> pieces;
    int64_t n = 0;
    for (size_t k : bucket) {
      const Node& ar = g.nodes[grads[k]];
      in.push_back(ar.inputs[0]);
      out.push_back(ar.outputs[0]);
      pieces.push_back(types[k].shape);
      n += types[k].shape.numel();
    }
    const Node& first = g.nodes[grads[bucket[0]]];
    backend::TensorType flat = types[bucket[0]];
    flat.shape = backend::Shape{n};
    flat.weak = false;
    Node start, wait;
    for (Node* s : {&start, &wait}) {
      s->loc = first.loc;
      s->scope = first.scope;
      s->phase = first.phase;
    }
    start.op = &backend::op(OpId::all_reduce_start);
    start.attrs = backend::Attrs{{"op", first.attrs.get<std::string>("op")}};
    start.inputs = std::move(in);
    start.outputs = {g.add_value(flat, Role::intermediate)};
    wait.op = &backend::op(OpId::all_reduce_wait);
    wait.attrs = backend::comm::wait_attrs(pieces);
    wait.inputs = start.outputs;
    wait.outputs = std::move(out);
    starts.push_back(std::move(start));
    waits.push_back(std::move(wait));
  }
  for (Node& w : waits) starts.push_back(std::move(w));
  return starts;
}

class BucketAllReduce : public Pass {
 public:
  const char* name() const override { return "bucket-all-reduce"; }
  size_t run(Graph& g) override {
    std::map<int64_t, std::vector<NodeId>> steps;  // the gradient all-reduces of each step
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.op && n.op->id == OpId::all_reduce && n.attrs.has("bucket_bytes"))
        steps[n.attrs.get_or<int64_t>("step", 0)].push_back(i);
    }
    if (steps.empty()) return 0;
    std::vector<std::vector<Node>> placed(g.nodes.size());  // after node i
    std::vector<bool> gone(g.nodes.size(), false);
    size_t buckets = 0;
    for (auto& [step, grads] : steps) {
      for (NodeId i : grads) gone[i] = true;
      const NodeId last = *std::max_element(grads.begin(), grads.end());
      placed[last] = bucket_nodes(g, grads);
      buckets += placed[last].size() / 2;
    }
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size());
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      if (!gone[i]) nodes.push_back(std::move(g.nodes[i]));
      for (Node& n : placed[i]) nodes.push_back(std::move(n));
    }
    g.nodes = std::move(nodes);
    g.link_producers();
    return buckets;
  }
};

}  // namespace

std::unique_ptr<Pass> make_bucket_all_reduce() { return std::make_unique<BucketAllReduce>(); }

}  // namespace nn::ir
