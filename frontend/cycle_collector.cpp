// The cycle collector: reference counting frees every value but those in
// cycles (a closure stored in the scope it captures and handed back, an
// optimizer record whose `step` closes over the scope holding the record,
// a record holding itself). This finds the cycles no one outside holds,
// by trial deletion as CPython's collector:
//
// 1. From the tracked objects (the scopes closures captured, the lists and
//    records that were given a container: interpreter.h), walk everything
//    they reach by counted references (scopes' values and parent, closures'
//    scopes, bound functions' self and target, the values a built-in
//    holds, items and fields, what an iterator holds), never into the
//    roots (the prelude, the main module's and the imported modules'
//    globals, always alive: what they reach has a reference from outside).
// 2. For each object found, count the references it has from the others
//    found. One whose use_count is higher is held from outside (a C++
//    frame, a root, the host, a graph cache, a built-in's captures): it,
//    and everything it reaches, is alive.
// 3. The rest is garbage: its scopes, lists and records are emptied (every
//    cycle passes through one of them: closures, tuples, bound functions
//    and iterators are made whole and never changed), their values
//    destroyed while the containers are still held, then the containers.
//
// The walk uses raw pointers and reads use_count through the references it
// follows, so it copies no shared_ptr but the tracked objects it locks,
// once each, which it takes off their count. Something it cannot see into
// (a built-in's captures) only keeps what it holds alive: a miss leaks,
// it never frees a live value.
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "frontend/interpreter.h"

namespace nn::frontend {

namespace {

enum class NodeKind : uint8_t { Env, Function, Builtin, List, Tuple, Record, Iterator };

struct Node {
  const void* p;
  NodeKind kind;
  long refs;          // counted references, our own locks taken off
  long internal = 0;  // of them, from other objects found
  uint32_t edges_begin = 0, edges_end = 0;
  bool alive = false;
};

class Graph {
 public:
  explicit Graph(const std::unordered_set<const Env*>& roots) : roots_(roots) {}

  bool known(const void* p) const { return index_.count(p) != 0; }
  // A tracked object, of whose `use_count` references one is our lock.
  void start(const void* p, NodeKind k, long use_count) { add(p, k, use_count - 1); }

  // Finds everything the started objects reach and the references among
  // them; false where the counts do not add up (a bug: collect nothing).
  bool build() {
    for (size_t i = 0; i < nodes_.size(); ++i) {  // nodes_ grows as it runs
      nodes_[i].edges_begin = uint32_t(edges_.size());
      children(nodes_[i].p, nodes_[i].kind);
      nodes_[i].edges_end = uint32_t(edges_.size());
    }
    for (const Node& n : nodes_)
      if (n.internal > n.refs) return false;
    return true;
  }

  // Marks what is held from outside, and what that reaches.
  void mark() {
    std::vector<uint32_t> work;
    for (uint32_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].refs > nodes_[i].internal) {
        nodes_[i].alive = true;
        work.push_back(i);
      }
    while (!work.empty()) {
      const Node& n = nodes_[work.back()];
      work.pop_back();
      for (uint32_t e = n.edges_begin; e < n.edges_end; ++e) {
        Node& m = nodes_[edges_[e]];
        if (!m.alive) {
          m.alive = true;
          work.push_back(edges_[e]);
        }
      }
    }
  }

  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  uint32_t add(const void* p, NodeKind k, long refs) {
    auto [it, fresh] = index_.emplace(p, uint32_t(nodes_.size()));
    if (fresh) nodes_.push_back(Node{p, k, refs});
    return it->second;
  }
  // One counted reference, `use_count` being its object's.
  void edge(const void* p, NodeKind k, long use_count) {
    const uint32_t j = add(p, k, use_count);
    ++nodes_[j].internal;
    edges_.push_back(j);
  }
  void env(const EnvPtr& e) {
    if (e && !roots_.count(e.get())) edge(e.get(), NodeKind::Env, e.use_count());
  }
  void function(const FunctionPtr& f) {
    if (f) edge(f.get(), NodeKind::Function, f.use_count());
  }
  void value(const Value& v) {
    switch (v.kind()) {
      case Value::Kind::List: edge(v.as_list().get(), NodeKind::List, v.as_list().use_count()); break;
      case Value::Kind::Tuple: edge(v.as_tuple().get(), NodeKind::Tuple, v.as_tuple().use_count()); break;
      case Value::Kind::Record: edge(v.as_record().get(), NodeKind::Record, v.as_record().use_count()); break;
      case Value::Kind::Function: function(v.as_function()); break;
      case Value::Kind::Iterator:
        edge(v.as_iterator().get(), NodeKind::Iterator, v.as_iterator().use_count());
        break;
      default: break;  // tensors and strings hold no values
    }
  }
  void children(const void* p, NodeKind k) {
    switch (k) {
      case NodeKind::Env: {
        auto* e = static_cast<const Env*>(p);
        env(e->parent);
        for (const Value& v : e->values) value(v);
        break;
      }
      case NodeKind::Function: {
        auto* f = static_cast<const Function*>(p);
        switch (f->kind) {
          case Function::Kind::Closure: env(f->env); break;
          case Function::Kind::Builtin:
            // Only a built-in that holds values can be in a cycle.
            if (f->builtin && !f->builtin->held.empty())
              edge(f->builtin.get(), NodeKind::Builtin, f->builtin.use_count());
            break;
          case Function::Kind::Bound:
            value(f->self);
            function(f->target);
            break;
        }
        break;
      }
      case NodeKind::Builtin:
        for (const Value& v : static_cast<const Builtin*>(p)->held) value(v);
        break;
      case NodeKind::List:
        for (const Value& v : static_cast<const List*>(p)->items) value(v);
        break;
      case NodeKind::Tuple:
        for (const Value& v : static_cast<const Tuple*>(p)->items) value(v);
        break;
      case NodeKind::Record:
        for (const auto& field : static_cast<const Record*>(p)->fields) value(field.second);
        break;
      case NodeKind::Iterator:
        static_cast<const Iterator*>(p)->for_each_value([this](const Value& v) { value(v); });
        break;
    }
  }

  const std::unordered_set<const Env*>& roots_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> edges_;
  std::unordered_map<const void*, uint32_t> index_;
};

// Whether p is the last one tracked (no atomic operation, unlike lock()).
template <class T>
bool same(const std::vector<std::weak_ptr<T>>& tracked, const std::shared_ptr<T>& p) {
  return !tracked.empty() && !tracked.back().owner_before(p) && !p.owner_before(tracked.back());
}
}  // namespace

void Interpreter::track_container(const Value& holder) {
  // A list appended to in a loop is tracked once.
  if (holder.is_list()) {
    if (same(tracked_lists_, holder.as_list())) return;
    tracked_lists_.push_back(holder.as_list());
  } else if (holder.is_record()) {
    if (same(tracked_records_, holder.as_record())) return;
    tracked_records_.push_back(holder.as_record());
  } else {
    return;
  }
  ++tracked_since_collect_;
  // Prune as closure_scopes_ does, should collections be long in coming.
  if (tracked_lists_.size() + tracked_records_.size() >= 2 * collect_after_ + 64) {
    std::erase_if(tracked_lists_, [](const auto& w) { return w.expired(); });
    std::erase_if(tracked_records_, [](const auto& w) { return w.expired(); });
  }
}

// The safe points (maybe_collect's callers) rule out the evaluator's own
// frames; a trace or a graph run as plain code keeps raw pointers to
// scopes and records (host reads, traced stores), so they wait too.
void Interpreter::collect_if_safe() {
  if (ir::Tracer::active() || in_eager_graph_ || host_reads_ || exporting_ > 0) return;
  collect_cycles();
}

size_t Interpreter::collect_cycles() {
  tracked_since_collect_ = 0;
  std::unordered_set<const Env*> roots;
  std::vector<EnvPtr> root_locks;  // module scopes, held while they are compared
  if (globals_) roots.insert(globals_.get());
  if (prelude_) roots.insert(prelude_.get());
  std::erase_if(module_scopes_, [&](const std::weak_ptr<Env>& w) {
    EnvPtr e = w.lock();
    if (!e) return true;
    roots.insert(e.get());
    root_locks.push_back(std::move(e));
    return false;
  });

  Graph graph(roots);
  // Our locks on the tracked objects, one each; released last.
  std::vector<EnvPtr> env_locks;
  std::vector<ListPtr> list_locks;
  std::vector<RecordPtr> record_locks;
  // Each live tracked object started once, under our lock (a root scope
  // never); the expired ones are dropped from their list.
  auto start_tracked = [&]<class T>(std::vector<std::weak_ptr<T>>& tracked, NodeKind kind,
                                    std::vector<std::shared_ptr<T>>& locks) {
    std::erase_if(tracked, [&](const std::weak_ptr<T>& w) {
      std::shared_ptr<T> p = w.lock();
      if (!p) return true;
      bool root = false;
      if constexpr (std::is_same_v<T, Env>) root = roots.count(p.get()) != 0;
      if (!root && !graph.known(p.get())) {
        graph.start(p.get(), kind, p.use_count());
        locks.push_back(std::move(p));
      }
      return false;
    });
  };
  start_tracked(closure_scopes_, NodeKind::Env, env_locks);
  start_tracked(tracked_lists_, NodeKind::List, list_locks);
  start_tracked(tracked_records_, NodeKind::Record, record_locks);
  const bool counted = graph.build();
  if (counted) graph.mark();
  // The next collection waits for as many new tracked objects as are live
  // now (as closure_scopes_ doubling), and for a quarter of the objects
  // alive that this walk visited, which the next walks visit again: their
  // cost is spread over what was tracked in between.
  const size_t starts = env_locks.size() + list_locks.size() + record_locks.size();  // nodes' first ones
  size_t alive = 0, live = 0;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    alive += graph.nodes()[i].alive;
    if (i < starts) live += graph.nodes()[i].alive;
  }
  collect_after_ = std::max(live, alive / 4);
  if (!counted) return 0;

  // Empty the garbage's containers first, keeping their values here, so
  // that nothing is destroyed while the walk's pointers are in use.
  std::vector<Value> dead;
  size_t garbage = 0;
  for (const Node& n : graph.nodes()) {
    if (n.alive) continue;
    ++garbage;
    switch (n.kind) {
      case NodeKind::Env: {
        std::vector<Value> values = const_cast<Env*>(static_cast<const Env*>(n.p))->take_values();
        for (Value& v : values) dead.push_back(std::move(v));
        break;
      }
      case NodeKind::List: {
        auto& items = const_cast<List*>(static_cast<const List*>(n.p))->items;
        for (Value& v : items) dead.push_back(std::move(v));
        items.clear();
        break;
      }
      case NodeKind::Record: {
        auto& fields = const_cast<Record*>(static_cast<const Record*>(n.p))->fields;
        for (auto& field : fields) dead.push_back(std::move(field.second));
        fields.clear();
        break;
      }
      default: break;  // freed with the containers that hold them
    }
  }
  // The values, one after another (release_nested), while our locks still
  // hold the tracked containers; then the containers.
  release_nested(dead);
  dead.clear();
  return garbage;
}

}  // namespace nn::frontend
