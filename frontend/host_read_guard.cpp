// HostReads (frontend/host_read_guard.h).
#include "frontend/host_read_guard.h"

#include <algorithm>
#include <cmath>

#include "frontend/format.h"
#include "frontend/symbol.h"

namespace nn::frontend {
namespace {
bool same(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::Int: return a.as_int() == b.as_int();
    case Value::Kind::Float: {
      // -0.0 is not 0.0 (1 / z is -inf, not inf); any NaN is NaN.
      const double x = a.as_float(), y = b.as_float();
      return (x == y && std::signbit(x) == std::signbit(y)) || (x != x && y != y);
    }
    case Value::Kind::Bool: return a.as_bool() == b.as_bool();
    case Value::Kind::Str: return a.as_str() == b.as_str();
    case Value::Kind::DType: return a.as_dtype() == b.as_dtype();
    case Value::Kind::None: return true;
    case Value::Kind::Range: {
      const RangeValue x = a.as_range(), y = b.as_range();
      return x.lo == y.lo && x.hi == y.hi && x.step == y.step;
    }
    case Value::Kind::Device: return a.as_device() == b.as_device();
    case Value::Kind::Record: return a.as_record() == b.as_record();
    case Value::Kind::Function: return a.as_function() == b.as_function();
    case Value::Kind::Tuple: {
      const auto &x = a.as_tuple()->items, &y = b.as_tuple()->items;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!same(x[i], y[i])) return false;
      return true;
    }
    default: return false;
  }
}

// A one-element tensor's value as item() gives it.
Value host_value(const backend::Tensor& t) {
  if (t.dtype() == backend::DType::boolean) return Value(t.item_bool());
  if (is_integral(t.dtype())) return Value(t.item_int());
  return Value(t.item_double());
}

// Host values of a few characters, and tuples of them (not tensors,
// records or lists, which may be large).
bool prints_small(const Value& v) {
  if (v.is_tuple()) {
    for (const Value& item : v.as_tuple()->items)
      if (!prints_small(item)) return false;
    return true;
  }
  return !v.is_tensor() && !v.is_record() && !v.is_list() && !v.is_function() && !v.is_iterator();
}

// "is now 0.05 (was 0.1)"; a record, function or list is compared by
// identity, and may be large: "is another record".
std::string change(const Value& now, const Value& was) {
  if (now.is_record() && was.is_record()) return "is another record";
  if (now.is_function() && was.is_function()) return "is another function";
  if (now.is_list() && was.is_list())
    return now.as_list() == was.as_list() ? "has other items than when traced" : "is another list";
  if (now.is_tuple() && was.is_tuple() && !(prints_small(now) && prints_small(was)))
    return "has other items than when traced";
  if (now.is_tensor() && was.is_tensor()) return "now holds another tensor";
  if (now.is_iterator() && was.is_iterator())
    return now.as_iterator() == was.as_iterator() ? "has moved on since the trace took its values" : "is another iterator";
  return "is now " + to_str(now) + " (was " + to_str(was) + ")";
}

// An item of a list as the trace saw it: tensors are compared by identity
// (their values are the graph's inputs), values of no guarded kind by kind.
bool same_item(const Value& now, const Value& was) {
  if (was.is_tensor()) return now.is_tensor() && now.as_tensor().impl() == was.as_tensor().impl();
  if (HostReads::guarded(was)) return same(now, was);
  return now.kind() == was.kind();
}

}  // namespace

HostReads::Seen HostReads::seen(const Value& v) {
  // The lists being looked into: one that holds itself is seen by identity there.
  thread_local std::vector<const List*> open;
  Seen s{v, {}};
  if (v.is_iterator()) s.taken = v.as_iterator()->taken;
  const std::vector<Value>* items = nullptr;
  if (v.is_list() && std::find(open.begin(), open.end(), v.as_list().get()) == open.end()) items = &v.as_list()->items;
  if (v.is_tuple()) items = &v.as_tuple()->items;
  if (!items) return s;
  if (v.is_list()) open.push_back(v.as_list().get());
  s.items.reserve(items->size());
  for (const Value& item : *items) s.items.push_back(seen(item));
  s.deep = true;
  if (v.is_list()) open.pop_back();
  return s;
}

bool HostReads::holds(const Value& now, const Seen& was) {
  if (was.tensor_value)
    return now.is_tensor() && now.as_tensor().numel() == 1 && same(host_value(now.as_tensor()), was.value);
  if (was.value.is_iterator())
    return now.is_iterator() && now.as_iterator() == was.value.as_iterator() && now.as_iterator()->taken == was.taken;
  if (!was.deep) return was.value.is_list() ? now.is_list() && now.as_list() == was.value.as_list()
                                            : same_item(now, was.value);
  const std::vector<Value>* items = nullptr;
  if (was.value.is_list() && now.is_list() && now.as_list() == was.value.as_list()) items = &now.as_list()->items;
  if (was.value.is_tuple() && now.is_tuple()) items = &now.as_tuple()->items;
  if (!items || items->size() != was.items.size()) return false;
  for (size_t i = 0; i < items->size(); ++i)
    if (!holds((*items)[i], was.items[i])) return false;
  return true;
}

bool HostReads::guarded(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Int: case Value::Kind::Float: case Value::Kind::Bool: case Value::Kind::Str:
    case Value::Kind::None: case Value::Kind::DType: case Value::Kind::Range: case Value::Kind::Device:
    case Value::Kind::Record: case Value::Kind::Function: case Value::Kind::List: case Value::Kind::Iterator:
      return true;
    case Value::Kind::Tuple:
      for (const Value& item : v.as_tuple()->items)
        if (!guarded(item) && !item.is_tensor()) return false;
      return true;
    default: return false;
  }
}

void HostReads::note_name(Symbol name, const Value& v) {
  for (const Name& n : names_)
    if (n.name == name) return;  // the first read is what the trace used
  names_.push_back({name, seen(v)});
}

void HostReads::note_held(const EnvPtr& scope, Symbol name, const Value& v) {
  for (const Held& h : held_)
    if (h.name == name && !h.scope.owner_before(scope) && !scope.owner_before(h.scope)) return;
  held_.push_back({scope, name, seen(v)});
}

void HostReads::note_field(const RecordPtr& r, Symbol field, const Value& v) {
  for (const Field& f : fields_)
    if (f.record == r && f.field == field) return;
  fields_.push_back({r, field, seen(v)});
}

void HostReads::forget_captured(const std::unordered_set<const backend::TensorImpl*>& captured) {
  auto captured_tensor = [&](const Seen& s) {
    return !s.tensor_value && s.value.is_tensor() && captured.contains(s.value.as_tensor().impl());
  };
  std::erase_if(names_, [&](const Name& n) { return captured_tensor(n.value); });
}

void HostReads::note_fields(const RecordPtr& r) {
  for (const FieldNames& f : field_names_)
    if (f.record == r) return;
  FieldNames f{r, {}};
  for (const auto& [name, v] : r->fields) {
    f.names.push_back(name);
    if (noted(v)) note_field(r, name, v);
  }
  field_names_.push_back(std::move(f));
}

void HostReads::note_absent(const RecordPtr& r, Symbol field) {
  for (const Absent& a : absent_)
    if (a.record == r && a.field == field) return;
  absent_.push_back({r, field});
}

void HostReads::note_name_value(Symbol name, const backend::Tensor& t) {
  if (t.numel() != 1) return;
  for (const Name& n : names_)
    if (n.name == name) return;
  Seen s{host_value(t), {}};
  s.tensor_value = true;
  names_.push_back({name, std::move(s)});
}

void HostReads::note_value(const backend::Tensor& t) {
  for (const Read& r : values_)
    if (r.tensor.impl() == t.impl()) return;
  values_.push_back({t, read_value(t)});
}

Value HostReads::read_value(const backend::Tensor& t) {
  return t.numel() == 1 ? host_value(t) : Value(to_str(Value(t)));
}

void write_fed(const backend::Tensor& t, double v) {
  backend::Tensor target = t;
  const float f = float(v);
  if (t.dtype() == backend::DType::f64) target.device()->copy_from_host(target.raw_data(), &v, sizeof v);
  else target.device()->copy_from_host(target.raw_data(), &f, sizeof f);
}

void HostReads::note_fed(const RecordPtr& r, Symbol field, const backend::Tensor& t) {
  if (!feeds(r, field)) fed_.push_back({r, field, t});
}

bool HostReads::feeds(const RecordPtr& r, Symbol field) const {
  for (const Fed& f : fed_)
    if (f.record == r && f.field == field) return true;
  return false;
}

std::optional<double> fed_number(const Value& v) {
  if (v.is_number()) return v.as_number();
  if (v.is_tensor() && v.as_tensor().numel() == 1 && !v.as_tensor().is_traced()) return v.as_tensor().item_double();
  return std::nullopt;
}

void HostReads::feed() const {
  for (const Fed& f : fed_) write_fed(f.tensor, *fed_number(*f.record->find(f.field)));
}

std::string HostReads::why_not(Env* env) const {
  // "" when `name` still holds `was`; `now`: what it holds now, if anything.
  auto differs = [](Symbol name, const Value* now, const Seen& was) -> std::string {
    if (!now) return "`" + symbol_name(name) + "` no longer exists";
    if (holds(*now, was)) return "";
    if (was.tensor_value && now->is_tensor())
      return "`" + symbol_name(name) + "` now holds " +
             (now->as_tensor().numel() == 1 ? "the value " + to_str(host_value(now->as_tensor()))
                                            : "a tensor " + now->as_tensor().type().str()) +
             " (was " + to_str(was.value) + ")";
    return "`" + symbol_name(name) + "` " + change(*now, was.value);
  };
  for (const Name& n : names_)
    if (std::string why = differs(n.name, env ? env->find(n.name) : nullptr, n.value); !why.empty()) return why;
  for (const Held& h : held_)
    if (const EnvPtr scope = h.scope.lock())
      if (std::string why = differs(h.name, scope->find_local(h.name), h.value); !why.empty()) return why;
  for (const FieldNames& f : field_names_) {
    bool same_names = f.names.size() == f.record->fields.size();
    for (size_t i = 0; i < f.names.size() && same_names; ++i) same_names = f.names[i] == f.record->fields[i].first;
    if (!same_names) return "a record the graph read whole has other fields than when traced";
  }
  for (const Absent& a : absent_)
    if (a.record->find(a.field))
      return "a record now has a field `" + symbol_name(a.field) + "`, which `." + symbol_name(a.field) +
             "(...)` calls in place of the function the trace called";
  for (const Read& r : values_)
    if (const Value now = read_value(r.tensor); !same(now, r.value))
      return "a tensor " + r.tensor.type().str() + " read as a host value " + change(now, r.value);
  for (const Fed& f : fed_) {
    const Value* now = f.record->find(f.field);
    if (!now || !fed_number(*now))
      return "a record's field `" + symbol_name(f.field) + "` no longer holds a number";
  }
  for (const Field& f : fields_) {
    const Value* now = f.record->find(f.field);
    if (!now) return "a record's field `" + symbol_name(f.field) + "` no longer exists";
    if (!holds(*now, f.value))
      return "a record's field `" + symbol_name(f.field) + "` " + change(*now, f.value.value);
  }
  return "";
}

}  // namespace nn::frontend
