// The tracer: while a graph is traced it is the backend's dispatch hook, so
// every op call appends a node to the IR and returns traced tensors (a type
// and a mark, no memory). Tensors it has not made are captured: arguments by
// position, everything else by reference (params, state, constants). An
// in-place op on a tensor (`p -= lr * g`, a running-statistics update) makes
// a new value; a captured tensor's last value becomes a state update.
//
// grad() inside the trace walks the eager tape, which dispatch keeps for
// traced calls too: the backward rules then trace the backward part with the
// same rules as eager mode.
#pragma once
#include <map>
#include <memory>
#include <tuple>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backend/dispatch.h"
#include "ir/graph.h"

namespace nn::ir {

// The mark of one trace's tensors (ir/tracer.cpp).
struct GraphMark;

class Tracer : public backend::DispatchHook {
 public:
  explicit Tracer(std::string graph_name);
  ~Tracer() override;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // The tracer active on this thread, or null.
  static Tracer* active();
  // Installs this tracer as the dispatch hook until stop() or destruction.
  void start();
  void stop();

  Graph& graph() { return graph_; }
  const std::string& name() const { return graph_.name; }

  // A new graph input (an argument); returns the traced tensor standing for it.
  backend::Tensor add_input(const backend::TensorType& type, std::string name);
  // Marks a tensor the host holds (a graph block reading a variable) as an
  // input by name: it is bound again on every run rather than captured.
  backend::Tensor bind_input(const backend::Tensor& host, std::string name);
  // A graph block names the host variables it reads: a tensor this gives a
  // name for becomes an input by name instead of a captured one.
  std::function<std::string(const backend::Tensor&)> input_name;
  // The value a tensor stands for, capturing it when the trace has not seen it.
  ValueId value_of(const backend::Tensor& t);
  bool is_traced(const backend::Tensor& t) const;
  // An in-place update traced as a new value: from here on, the tensor the
  // host holds stands for `now` (`p -= lr * g` on a param).
  void rebind(const backend::Tensor& host, const backend::Tensor& now);
  // Whether the trace wrote into the memory of this host tensor (or of one
  // it is a view of): its contents are then not what the host memory holds.
  bool wrote_into(const backend::Tensor& host) const {
    return host.defined() && !host.is_traced() && written_blocks_.contains(host.block().get());
  }

  // Where the next nodes come from, and which nn function call they are in.
  void push_scope(std::string name, const Loc& call);
  void pop_scope();
  void set_phase(Phase p) { phase_ = p; }
  Phase phase() const { return phase_; }

  // A host call (print) on every run, with the values of `in`.
  void add_host_call(std::string name, std::span<const backend::Tensor> in, HostFn fn);

  // Ends the trace: the outputs, in order, and a state update for every
  // captured tensor the trace changed. Tensors it made become unreadable,
  // with an error naming where they were made (a tensor escaping the graph).
  // Returns the graph.
  Graph finish(std::span<const backend::Tensor> outputs);

  // Where a traced tensor was made ("digits.nn:9:11"), for escape errors.
  std::string origin(const backend::Tensor& t) const;
  // The name of the graph argument t is ("x", "batch[0]"), "" for a tensor
  // that is none (made by the trace, or captured).
  std::string argument_name(const backend::Tensor& t) const;

  bool on_dispatch(const backend::OpDef& op, std::span<const backend::Tensor> in, const backend::Attrs& attrs,
                   const backend::OutTypes& types, backend::Tensors& out) override;
  // The backward of an op made in scope s goes into s's mirror `∇name`,
  // nested under the scope grad() was called in as s is under the graph, so
  // a picture groups (and folds) the backward pass as it does the forward.
  uint32_t group() const override { return scope_; }
  uint32_t backward_of(uint32_t scope) override { return std::exchange(backward_of_, scope); }

 private:
  // A tensor's identity: the same memory seen as the same type is one value,
  // whatever handle (a param's leaf view, a fresh view of the tape) holds it.
  struct Key {
    const void* block;
    size_t offset;
    backend::DType dtype;
    backend::Shape shape;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.block) ^ (k.offset * 0x9e3779b97f4a7c15ull) ^
             (size_t(k.shape.numel()) << 8) ^ size_t(k.dtype);
    }
  };
  static Key key(const backend::Tensor& t) { return {t.block().get(), t.offset(), t.dtype(), t.shape()}; }
  backend::Tensor make_traced(ValueId v);
  uint32_t mirror(uint32_t forward_scope);
  bool made_here(const backend::Tensor& t) const;  // made by this trace, seen as it was made
  // The value t stands for now (kNone: not seen yet); set_value moves it on.
  ValueId current(const backend::Tensor& t) const;
  void set_value(const backend::Tensor& t, ValueId v);
  ValueId capture(const backend::Tensor& t);
  // Tensors that share memory in eager mode as a reshape of one another (a
  // view op's output over its whole input; docs/language.md): a write into
  // one is given to every other as a reshape of its new value, so that
  // graph mode sees through views as eager mode does.
  void note_view(const backend::Tensor& base, const backend::Tensor& view);
  void share_write(const backend::Tensor& written);
  void reshape_into(const backend::Tensor& alias, const backend::Tensor& from);  // alias = reshape(from)
  ValueId holder_of(const backend::Tensor& output) const;  // Graph::output_holders
  NodeId append(const backend::OpDef* op, std::span<const backend::Tensor> in, const backend::Attrs& attrs,
                const backend::OutTypes& types);

  Graph graph_;
  backend::Ref<GraphMark> mark_;
  // The current value of each tensor the trace did not make (arguments bound
  // by name, captured tensors); a tensor it made carries its value in its block.
  std::unordered_map<Key, ValueId, KeyHash> values_;
  std::unordered_set<const void*> written_blocks_;  // of host tensors rebind() gave a new value
  struct Captured {
    backend::Tensor tensor;
    ValueId first;  // the value it was captured as
  };
  std::vector<Captured> entries_;  // arguments and captured tensors, in order
  std::unordered_map<Key, uint32_t, KeyHash> alias_group_;  // tensor -> its group in alias_groups_
  std::vector<std::vector<backend::Tensor>> alias_groups_;
  // (block, offset, bytes, dtype) -> the first entry captured there
  std::map<std::tuple<const void*, size_t, size_t, backend::DType>, size_t> captured_at_;
  uint32_t scope_ = 0;
  uint32_t backward_of_ = 0;  // the forward scope whose backward is being traced; 0: none
  // (grad()'s scope, forward scope) -> its mirror
  std::unordered_map<uint64_t, uint32_t> mirrors_;
  std::pair<uint64_t, uint32_t> last_mirror_{~uint64_t(0), 0};  // the last one found
  Phase phase_ = Phase::forward;
  backend::DispatchHook* saved_hook_ = nullptr;
  Tracer* saved_active_ = nullptr;
  bool started_ = false;
};

}  // namespace nn::ir
