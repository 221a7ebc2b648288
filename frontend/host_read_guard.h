// Host-read guards (SPEC §17): the host values a trace read from outside
// the graph (a global `lr = 0.1`, a loop's `i` around a graph block, a
// layer's `training` flag), which became constants of the compiled graph.
// Checked on every call, so that `lr = 0.05` or `eval(m)` makes the graph
// trace again instead of replaying the old value.
#pragma once
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "backend/tensor.h"
#include "frontend/environment.h"
#include "frontend/value.h"

namespace nn::frontend {

// Writes v into a fed 0-d f32 or f64 tensor, on its device; not a write a
// version counter sees (SPEC §17): the tensor holds a copy of a host number.
void write_fed(const backend::Tensor& t, double v);

// The number a fed field holds: a host number or a one-element tensor.
std::optional<double> fed_number(const Value& v);

class HostReads {
 public:
  // Whether v is a value the guards compare: what a trace folds into the
  // graph as a constant (numbers, bools, strings, none, dtypes, ranges,
  // devices, tuples of them), and records and functions, by identity: a
  // record rebound (`cfg = {scale: 3.0}`, `opt = sgd(...)`) is another
  // record, whose fields the guards of the old one did not see, and a
  // function rebound or defined again (`fn f(x) {...}` at the REPL) is other
  // code, which the trace inlined. A list is compared by identity and by
  // its items as the trace first saw it (their number, their values, the
  // tensors, records and lists they are): the trace unrolled a loop over
  // it or folded an item in, so `xs[0] = 3.0` or `append(layers, l)` traces
  // again too. An iterator is compared by identity and by how many values
  // it gave: the trace unrolled those it took.
  static bool guarded(const Value& v);
  // What a trace notes where it reads a value: a guarded one, or a tensor
  // of the host (by identity; one the trace made stands for a graph value).
  static bool noted(const Value& v) { return guarded(v) || (v.is_tensor() && !v.as_tensor().is_traced()); }
  // A name read while tracing that lives in the scope the graph was defined
  // in or one around it: checked as the graph's code sees it on each call.
  void note_name(Symbol name, const Value& v);
  // A name read while tracing from another scope that was there before the
  // trace (a module's globals read by its functions, a closure's captured
  // scope): checked in that scope, while it lives.
  void note_held(const EnvPtr& scope, Symbol name, const Value& v);
  // A record's field read while tracing.
  void note_field(const RecordPtr& r, Symbol field, const Value& v);
  // A record read whole (fields(r)): which fields it has, and each value.
  void note_fields(const RecordPtr& r);
  // A record's field the trace looked for and did not find (method sugar
  // then called a function of that name).
  void note_absent(const RecordPtr& r, Symbol field);
  // A tensor from outside the graph whose value the trace read as a host
  // value (item(k), int(k), `if k`, str(w)): compared by value (by its text
  // when it has more than one element).
  void note_value(const backend::Tensor& t);
  // The same for the tensor a name holds (a graph block's variable, bound
  // anew on every run): the value of whatever tensor it holds then.
  void note_name_value(Symbol name, const backend::Tensor& t);

  // A record's field read into a fed tensor (backend TensorImpl::fed): not
  // a constant of the graph; feed() copies its value in before every run.
  void note_fed(const RecordPtr& r, Symbol field, const backend::Tensor& t);
  void feed() const;
  // Whether r.field was read into a fed tensor by this trace.
  bool feeds(const RecordPtr& r, Symbol field) const;

  // Drops the guards of names (of the graph's own scopes) that held one of
  // these tensors: the capture guards check the paths to what it captured.
  // Fields and other scopes' names stay: a record or closure reached from
  // elsewhere is not among those paths.
  void forget_captured(const std::unordered_set<const backend::TensorImpl*>& captured);

  // Whether every value read is still the same; names are looked up from
  // `env` outwards, as the graph's code sees them on this call.
  bool hold(Env* env) const { return why_not(env).empty(); }
  // "`lr` is now 0.05"; "" when they hold.
  std::string why_not(Env* env) const;
  bool empty() const {
    return names_.empty() && held_.empty() && fields_.empty() && fed_.empty() && values_.empty() && absent_.empty() &&
           field_names_.empty();
  }

 private:
  // A value as the trace read it: lists (and tuples holding lists) with
  // their items as they were then, since the list itself may change.
  struct Seen {
    Value value;
    std::vector<Seen> items;
    bool deep = false;  // items holds what the list or tuple held
    uint64_t taken = 0;  // an iterator's position
    bool tensor_value = false;  // `value` is the host value of the one-element tensor a name holds
  };
  static Seen seen(const Value& v);
  static bool holds(const Value& now, const Seen& was);
  struct Name {
    Symbol name;
    Seen value;
  };
  struct Held {
    std::weak_ptr<Env> scope;  // not kept alive: once it is gone, nothing can rebind its names
    Symbol name;
    Seen value;
  };
  struct Field {
    RecordPtr record;
    Symbol field;
    Seen value;
  };
  struct Fed {
    RecordPtr record;
    Symbol field;
    backend::Tensor tensor;
  };
  std::vector<Name> names_;
  std::vector<Held> held_;
  std::vector<Field> fields_;
  std::vector<Fed> fed_;
  struct Read {
    backend::Tensor tensor;
    Value value;
  };
  std::vector<Read> values_;
  static Value read_value(const backend::Tensor& t);
  struct Absent {
    RecordPtr record;
    Symbol field;
  };
  std::vector<Absent> absent_;
  struct FieldNames {
    RecordPtr record;
    std::vector<Symbol> names;
  };
  std::vector<FieldNames> field_names_;
};

}  // namespace nn::frontend
