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

#include "backend/comm/buckets.h"
#include "ir/pass.h"

namespace nn::ir {
namespace {

class BucketAllReduce : public Pass {
 public:
  const char* name() const override { return "bucket-all-reduce"; }
  size_t run(Graph& g) override {
    std::vector<NodeId> grads;
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.op && n.op->id == OpId::all_reduce && n.attrs.has("bucket_bytes")) grads.push_back(i);
    }
    if (grads.empty()) return 0;
    // In the order backward makes them: by their producers' places.
    auto made_at = [&](NodeId i) {
      const NodeId p = g.values[g.nodes[i].inputs[0]].producer;
      return p == kNone ? int64_t(-1) : int64_t(p);
    };
    std::stable_sort(grads.begin(), grads.end(), [&](NodeId a, NodeId b) { return made_at(a) < made_at(b); });
    std::vector<backend::TensorType> types;
    for (NodeId i : grads) types.push_back(g.values[g.nodes[i].inputs[0]].type);
    const size_t cap = size_t(g.nodes[grads[0]].attrs.get<int64_t>("bucket_bytes"));
    const std::vector<std::vector<size_t>> buckets = backend::comm::plan_buckets(types, cap);

    // The new nodes go where the last all-reduce was (every gradient exists
    // there): the starts in bucket order, which is the order the ranks talk
    // in, then the waits.
    std::vector<Node> starts, waits;
    std::vector<bool> gone(g.nodes.size(), false);
    const NodeId last = *std::max_element(grads.begin(), grads.end());
    for (const std::vector<size_t>& bucket : buckets) {
      ValueList in, out;
      std::vector<int64_t> shapes;
      int64_t n = 0;
      for (size_t k : bucket) {
        const Node& ar = g.nodes[grads[k]];
        gone[grads[k]] = true;
        in.push_back(ar.inputs[0]);
        out.push_back(ar.outputs[0]);
        shapes.push_back(types[k].shape.ndim());
        for (int64_t d : types[k].shape.dims()) shapes.push_back(d);
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
      wait.attrs = backend::Attrs{{"shapes", shapes}};
      wait.inputs = start.outputs;
      wait.outputs = std::move(out);
      starts.push_back(std::move(start));
      waits.push_back(std::move(wait));
    }
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size());
    for (NodeId i = 0; i < g.nodes.size(); ++i) {
      if (!gone[i]) nodes.push_back(std::move(g.nodes[i]));
      if (i != last) continue;
      for (Node& n : starts) nodes.push_back(std::move(n));
      for (Node& n : waits) nodes.push_back(std::move(n));
    }
    g.nodes = std::move(nodes);
    g.link_producers();
    return buckets.size();
  }
};

}  // namespace

std::unique_ptr<Pass> make_bucket_all_reduce() { return std::make_unique<BucketAllReduce>(); }

}  // namespace nn::ir
