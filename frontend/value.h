// Values of nn (SPEC §3): host scalars, strings, tensors, lists, tuples,
// records, ranges, functions, dtypes, devices and iterators. A Value is a
// small variant; containers and functions are shared by reference.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "backend/device.h"
#include "backend/memory_account.h"
#include "backend/tensor.h"
#include "frontend/symbol.h"

namespace nn::frontend {

class Value;
struct List;
struct Tuple;
struct Record;
struct Function;
struct Iterator;
using ListPtr = std::shared_ptr<List>;
using TuplePtr = std::shared_ptr<const Tuple>;
using RecordPtr = std::shared_ptr<Record>;
using FunctionPtr = std::shared_ptr<const Function>;
using IteratorPtr = std::shared_ptr<Iterator>;
// A string's text, read by characters (UTF-8 code points, as Python's;
// frontend/utf8_text.h). ASCII text is its bytes; other text has its
// characters' offsets found once, on the first index, so that s[i] in a
// loop stays O(1).
struct HostString {
  explicit HostString(std::string t);
  ~HostString() { delete starts_.load(); }
  HostString(const HostString&) = delete;
  HostString& operator=(const HostString&) = delete;
  std::string text;
  bool ascii;
  int64_t chars() const { return ascii ? int64_t(text.size()) : int64_t(starts().size()) - 1; }
  std::string_view char_at(int64_t i) const {  // 0 <= i < chars()
    if (ascii) return std::string_view(text).substr(size_t(i), 1);
    const std::vector<size_t>& at = starts();
    return std::string_view(text).substr(at[size_t(i)], at[size_t(i) + 1] - at[size_t(i)]);
  }

 private:
  const std::vector<size_t>& starts() const;  // each character's offset, then the end
  // Made on first use; one pointer, as strings are many and most are ASCII,
  // and atomic, as a string may be read on several threads.
  mutable std::atomic<std::vector<size_t>*> starts_{nullptr};
};
using StrPtr = std::shared_ptr<const HostString>;

// A string counted against the running interpreter's memory cap
// (backend/memory_account.h); throws OutOfMemory past it.
StrPtr make_str(std::string s);

struct NoneValue {};
// lo, lo + step, ... up to hi (excluded), as Python's range; step != 0.
struct RangeValue {
  int64_t lo = 0, hi = 0, step = 1;
  // The number of items, in unsigned arithmetic: hi - lo overflowed for a
  // range over most of the int64 line, whose length came out negative.
  uint64_t count() const {
    if (step > 0) return hi > lo ? (uint64_t(hi) - uint64_t(lo) - 1) / uint64_t(step) + 1 : 0;
    return lo > hi ? (uint64_t(lo) - uint64_t(hi) - 1) / (0 - uint64_t(step)) + 1 : 0;
  }
  // count(), or INT64_MAX past it (which len() refuses): as many as a loop
  // can ever take.
  int64_t size() const { return int64_t(std::min<uint64_t>(count(), uint64_t(INT64_MAX))); }
  int64_t at(int64_t i) const { return int64_t(uint64_t(lo) + uint64_t(i) * uint64_t(step)); }
};
struct DeviceValue {
  backend::Device* device = nullptr;
};

class Value {
 public:
  using Variant = std::variant<NoneValue, bool, int64_t, double, StrPtr, backend::Tensor, ListPtr, TuplePtr,
                               RecordPtr, RangeValue, FunctionPtr, backend::DType, DeviceValue, IteratorPtr>;
  enum class Kind : uint8_t {
    None, Bool, Int, Float, Str, Tensor, List, Tuple, Record, Range, Function, DType, Device, Iterator
  };

  Value() = default;
  Value(NoneValue) {}
  Value(bool b) : v_(b) {}
  Value(int64_t i) : v_(i) {}
  Value(int i) : v_(int64_t(i)) {}
  Value(double f) : v_(f) {}
  Value(std::string s) : v_(make_str(std::move(s))) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value(backend::Tensor t) : v_(std::move(t)) {}
  Value(ListPtr l) : v_(std::move(l)) {}
  Value(TuplePtr t) : v_(std::move(t)) {}
  Value(RecordPtr r) : v_(std::move(r)) {}
  Value(RangeValue r) : v_(r) {}
  Value(FunctionPtr f) : v_(std::move(f)) {}
  Value(backend::DType d) : v_(d) {}
  Value(DeviceValue d) : v_(d) {}
  Value(IteratorPtr it) : v_(std::move(it)) {}

  Kind kind() const { return Kind(v_.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_str() const { return kind() == Kind::Str; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_tuple() const { return kind() == Kind::Tuple; }
  bool is_record() const { return kind() == Kind::Record; }
  bool is_range() const { return kind() == Kind::Range; }
  bool is_function() const { return kind() == Kind::Function; }
  bool is_dtype() const { return kind() == Kind::DType; }
  bool is_device() const { return kind() == Kind::Device; }
  bool is_iterator() const { return kind() == Kind::Iterator; }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  // An int, float or bool as a double.
  double as_number() const;
  const std::string& as_str() const { return std::get<StrPtr>(v_)->text; }
  const HostString& as_host_str() const { return *std::get<StrPtr>(v_); }
  const backend::Tensor& as_tensor() const { return std::get<backend::Tensor>(v_); }
  backend::Tensor& as_tensor() { return std::get<backend::Tensor>(v_); }
  const ListPtr& as_list() const { return std::get<ListPtr>(v_); }
  const TuplePtr& as_tuple() const { return std::get<TuplePtr>(v_); }
  const RecordPtr& as_record() const { return std::get<RecordPtr>(v_); }
  RangeValue as_range() const { return std::get<RangeValue>(v_); }
  const FunctionPtr& as_function() const { return std::get<FunctionPtr>(v_); }
  backend::DType as_dtype() const { return std::get<backend::DType>(v_); }
  backend::Device* as_device() const { return std::get<DeviceValue>(v_).device; }
  const IteratorPtr& as_iterator() const { return std::get<IteratorPtr>(v_); }

  const Variant& variant() const { return v_; }

 private:
  Variant v_;
};

// The name of a value's kind as users read it: "int", "tensor", "record".
const char* kind_name(Value::Kind k);
std::string type_name(const Value& v);  // "f32[2, 3]" for tensors, else kind_name
// type_name with an article: "an int", "a tensor f32[2]"... for messages.
std::string a_type_name(const Value& v);

// Frees the containers among `items` one after another rather than each
// inside the last: a list nested a million deep ([d] in a loop) would
// otherwise be freed by a million nested C++ calls and end the stack.
void release_nested(std::vector<Value>& items);
void release_nested(std::vector<std::pair<Symbol, Value>>& fields);

// Lists and tuples count their items against the interpreter's memory cap:
// count() after the items grew (throws OutOfMemory past the cap).
// True on a thread while a graph's code runs (traced, or as plain code
// under --eager): the lists and records it makes are its own.
inline thread_local bool t_graph_code_runs = false;
struct List {
  std::vector<Value> items;
  // Made by a graph's code: see Record::made_by_graph.
  bool made_by_graph = t_graph_code_runs;
  backend::AccountCharge charge;
  void count() { charge.resize(items.capacity() * sizeof(Value)); }
  ~List() { release_nested(items); }
};
struct Tuple {
  std::vector<Value> items;
  backend::AccountCharge charge;
  ~Tuple() { release_nested(items); }
};
struct Record {
  std::vector<std::pair<Symbol, Value>> fields;  // in definition order
  // Made by a graph's code: a plain assignment to its tensor field is a new
  // value, where one to a field of a record from outside the graph (or an
  // item of a list from outside it) is a state update (SPEC §13).
  bool made_by_graph = t_graph_code_runs;
  ~Record() { release_nested(fields); }
  Value* find(Symbol name);
  const Value* find(Symbol name) const;
  void set(Symbol name, Value v);
};

// An iterator over values (batches(), progress()): next() gives std::nullopt at the end.
struct Iterator {
  virtual ~Iterator() = default;
  std::optional<Value> next() {
    std::optional<Value> v = advance();
    if (v) ++taken;
    return v;
  }
  // How many values next() gave: a graph given this iterator traces again
  // once it moved on, since the trace unrolled the values it took.
  uint64_t taken = 0;
  virtual std::optional<int64_t> length() const { return std::nullopt; }
  // Calls `f` on each value the iterator holds (the cycle collector walks
  // them: frontend/cycle_collector.cpp); one holding none need not say.
  virtual void for_each_value(const std::function<void(const Value&)>& f) const { (void)f; }

 protected:
  virtual std::optional<Value> advance() = 0;
};

// Throws OutOfMemory where n items more (a list made from a range) would
// pass the memory cap: asked before they are made, which could take hours.
inline void check_items_fit(int64_t n) {
  constexpr int64_t most = int64_t(SIZE_MAX / 2 / sizeof(Value));
  if (n > most)  // past what a vector can reserve
    throw backend::OutOfMemory("out of memory on cpu: " + std::to_string(n) + " items", SIZE_MAX);
  backend::AccountCharge probe;
  probe.resize(size_t(std::clamp<int64_t>(n, 0, most)) * sizeof(Value));
}

inline ListPtr make_list(std::vector<Value> items = {}) {
  auto list = std::make_shared<List>();
  list->items = std::move(items);
  list->count();
  return list;
}
inline TuplePtr make_tuple(std::vector<Value> items) {
  auto tuple = std::make_shared<Tuple>();
  tuple->items = std::move(items);
  tuple->charge.resize(tuple->items.capacity() * sizeof(Value));
  return tuple;
}
inline RecordPtr make_record() { return std::make_shared<Record>(); }

}  // namespace nn::frontend
