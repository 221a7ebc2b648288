// Value kinds' names and record field access.
#include "frontend/value.h"

#include <memory>

#include "frontend/utf8_text.h"

namespace nn::frontend {

double Value::as_number() const {
  switch (kind()) {
    case Kind::Int: return double(as_int());
    case Kind::Float: return as_float();
    case Kind::Bool: return as_bool() ? 1.0 : 0.0;
    default: return 0.0;
  }
}

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::None: return "none";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::Str: return "string";
    case Value::Kind::Tensor: return "tensor";
    case Value::Kind::List: return "list";
    case Value::Kind::Tuple: return "tuple";
    case Value::Kind::Record: return "record";
    case Value::Kind::Range: return "range";
    case Value::Kind::Function: return "function";
    case Value::Kind::DType: return "dtype";
    case Value::Kind::Device: return "device";
    case Value::Kind::Iterator: return "iterator";
  }
  return "?";
}

std::string type_name(const Value& v) {
  if (v.is_tensor()) return v.as_tensor().type().str();
  return kind_name(v.kind());
}

std::string a_type_name(const Value& v) {
  std::string n = type_name(v);
  if (v.is_tensor()) return "a tensor " + n;
  bool vowel = n[0] == 'a' || n[0] == 'e' || n[0] == 'i' || n[0] == 'o' || n[0] == 'u';
  return (vowel ? "an " : "a ") + n;
}

Value* Record::find(Symbol name) {
  for (auto& [k, v] : fields)
    if (k == name) return &v;
  return nullptr;
}
const Value* Record::find(Symbol name) const {
  for (auto& [k, v] : fields)
    if (k == name) return &v;
  return nullptr;
}
void Record::set(Symbol name, Value v) {
  if (Value* old = find(name))
    *old = std::move(v);
  else
    fields.emplace_back(name, std::move(v));
}

namespace {
// The containers waiting to be freed by the outermost release_nested of
// this thread; null when no release is under way.
thread_local std::vector<Value>* pending_release = nullptr;

bool is_container(const Value& v) { return v.is_list() || v.is_tuple() || v.is_record(); }

template <class Take>
void release_all(size_t n, Take take) {
  if (pending_release) {  // inside an outer release: hand the containers to its loop
    for (size_t i = 0; i < n; ++i)
      if (Value* v = take(i)) pending_release->push_back(std::move(*v));
    return;
  }
  std::vector<Value> queue;
  pending_release = &queue;
  for (size_t i = 0; i < n; ++i)
    if (Value* v = take(i)) queue.push_back(std::move(*v));
  while (!queue.empty()) {
    Value last = std::move(queue.back());
    queue.pop_back();
  }  // `last` dies here; a container it frees hands its items to the queue
  pending_release = nullptr;
}
}  // namespace

HostString::HostString(std::string t) : text(std::move(t)), ascii(is_ascii(text)) {}

const std::vector<size_t>& HostString::starts() const {
  if (const std::vector<size_t>* found = starts_.load(std::memory_order_acquire)) return *found;
  auto made = std::make_unique<std::vector<size_t>>();
  for (size_t i = 0; i < text.size(); i += utf8_char_length(text, i)) made->push_back(i);
  made->push_back(text.size());
  std::vector<size_t>* none = nullptr;
  // Another thread may have made them first: then its table is the one.
  if (starts_.compare_exchange_strong(none, made.get(), std::memory_order_acq_rel)) return *made.release();
  return *none;
}

StrPtr make_str(std::string s) {
  if (!backend::current_account()) return std::make_shared<const HostString>(std::move(s));
  struct Counted {
    explicit Counted(std::string s) : str(std::move(s)) {}
    HostString str;
    backend::AccountCharge charge;
  };
  auto c = std::make_shared<Counted>(std::move(s));
  c->charge.resize(sizeof(Counted) + c->str.text.capacity());
  return StrPtr(c, &c->str);
}

void release_nested(std::vector<Value>& items) {
  release_all(items.size(), [&](size_t i) { return is_container(items[i]) ? &items[i] : nullptr; });
}
void release_nested(std::vector<std::pair<Symbol, Value>>& fields) {
  release_all(fields.size(), [&](size_t i) { return is_container(fields[i].second) ? &fields[i].second : nullptr; });
}

}  // namespace nn::frontend
