// The walk over the tensors inside a value (frontend/tensor_walk.h).
#include "frontend/tensor_walk.h"

#include <algorithm>
#include <string>

#include "backend/error.h"
#include "frontend/stack_guard.h"

namespace nn::frontend {
namespace {

// The items or fields of a container the walk opens; all null otherwise.
struct Inside {
  const std::vector<Value>* items = nullptr;
  const std::vector<std::pair<Symbol, Value>>* fields = nullptr;
  const void* id = nullptr;
};

Inside inside(const Value& v, Reach reach) {
  if (v.is_list()) return {&v.as_list()->items, nullptr, v.as_list().get()};
  if (v.is_tuple()) return {&v.as_tuple()->items, nullptr, v.as_tuple().get()};
  if (v.is_record() && reach == Reach::sequences_and_records)
    return {nullptr, &v.as_record()->fields, v.as_record().get()};
  return {};
}

// The containers being looked into, outermost first: one that holds itself
// (`append(a, a)`) is not opened again inside itself, or the walk would
// never end.
using Open = std::vector<const void*>;
bool holds_itself(const Open& open, const void* id) { return std::find(open.begin(), open.end(), id) != open.end(); }

// Before a container is opened: values nested past the limit are an error,
// not a stack overflow (an embedding host's thread may have a small stack).
void open_one_more(const Open& open) {
  if (open.size() >= kMaxValueDepth || stack_nearly_full())
    throw backend::Error("the value is nested too deeply (more than " + std::to_string(kMaxValueDepth) +
                         " lists, tuples or records, one inside another, or less on this thread's stack)");
}

Walk walk(const Value& v, ValuePath& path, Reach reach, const TensorVisitor& visit,
          std::unordered_set<const void*>* opened, Open& open) {
  if (v.is_tensor()) return visit.tensor ? visit.tensor(v.as_tensor(), path) : Walk::go_on;
  if (visit.other) visit.other(v, path);
  const Inside in = inside(v, reach);
  if (!in.id || holds_itself(open, in.id) || (opened && !opened->insert(in.id).second)) return Walk::go_on;
  open_one_more(open);
  open.push_back(in.id);
  Walk w = Walk::go_on;
  if (in.items)
    for (size_t i = 0; i < in.items->size() && w != Walk::stop; ++i) {
      path.push_index(i);
      w = walk((*in.items)[i], path, reach, visit, opened, open);
      path.pop();
    }
  if (in.fields)
    for (size_t i = 0; i < in.fields->size() && w != Walk::stop; ++i) {
      path.push_field((*in.fields)[i].first);
      w = walk((*in.fields)[i].second, path, reach, visit, opened, open);
      path.pop();
    }
  open.pop_back();
  return w;
}

Value map(const Value& v, ValuePath& path, Reach reach,
          const std::function<backend::Tensor(const backend::Tensor&, const ValuePath&)>& fn, Open& open) {
  if (v.is_tensor()) return Value(fn(v.as_tensor(), path));
  const Inside in = inside(v, reach);
  if (!in.id || holds_itself(open, in.id)) return v;
  open_one_more(open);
  open.push_back(in.id);
  Value out = v;
  if (in.items) {
    std::vector<Value> items;
    items.reserve(in.items->size());
    for (size_t i = 0; i < in.items->size(); ++i) {
      path.push_index(i);
      items.push_back(map((*in.items)[i], path, reach, fn, open));
      path.pop();
    }
    out = v.is_list() ? Value(make_list(std::move(items))) : Value(make_tuple(std::move(items)));
  }
  if (in.fields) {
    RecordPtr r = make_record();
    for (const auto& [k, x] : *in.fields) {
      path.push_field(k);
      r->fields.emplace_back(k, map(x, path, reach, fn, open));
      path.pop();
    }
    out = Value(r);
  }
  open.pop_back();
  return out;
}

}  // namespace

std::string ValuePath::str() const {
  std::string s(root_);
  for (const Step& step : steps_) {
    if (step.field) {
      s += '.';
      s += symbol_name(step.field);
    } else {
      s += '[';
      s += std::to_string(step.index);
      s += ']';
    }
  }
  return s;
}

std::string ValuePath::dotted() const {
  std::string s(root_);
  for (const Step& step : steps_) {
    if (!s.empty()) s += '.';
    s += step.field ? symbol_name(step.field) : std::to_string(step.index);
  }
  return s;
}

Walk for_each_tensor(const Value& v, std::string_view root, Reach reach, const TensorVisitor& visit,
                     std::unordered_set<const void*>* opened) {
  ValuePath path(root);
  Open open;
  return walk(v, path, reach, visit, opened, open);
}

void for_each_tensor(const Value& v, Reach reach, const std::function<void(const backend::Tensor&)>& fn) {
  TensorVisitor visit;
  visit.tensor = [&](const backend::Tensor& t, const ValuePath&) {
    fn(t);
    return Walk::go_on;
  };
  for_each_tensor(v, {}, reach, visit);
}

Value map_tensors(const Value& v, std::string_view root, Reach reach,
                  const std::function<backend::Tensor(const backend::Tensor&, const ValuePath&)>& fn) {
  ValuePath path(root);
  Open open;
  return map(v, path, reach, fn, open);
}

}  // namespace nn::frontend
