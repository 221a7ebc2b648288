// The walk over the tensors inside a value (frontend/tensor_walk.h).
#include "frontend/tensor_walk.h"

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

Walk walk(const Value& v, ValuePath& path, Reach reach, const TensorVisitor& visit,
          std::unordered_set<const void*>* opened) {
  if (v.is_tensor()) return visit.tensor ? visit.tensor(v.as_tensor(), path) : Walk::go_on;
  if (visit.other) visit.other(v, path);
  const Inside in = inside(v, reach);
  if (!in.id || (opened && !opened->insert(in.id).second)) return Walk::go_on;
  if (in.items)
    for (size_t i = 0; i < in.items->size(); ++i) {
      path.push_index(i);
      const Walk w = walk((*in.items)[i], path, reach, visit, opened);
      path.pop();
      if (w == Walk::stop) return w;
    }
  if (in.fields)
    for (const auto& [k, x] : *in.fields) {
      path.push_field(k);
      const Walk w = walk(x, path, reach, visit, opened);
      path.pop();
      if (w == Walk::stop) return w;
    }
  return Walk::go_on;
}

Value map(const Value& v, ValuePath& path, Reach reach,
          const std::function<backend::Tensor(const backend::Tensor&, const ValuePath&)>& fn) {
  if (v.is_tensor()) return Value(fn(v.as_tensor(), path));
  const Inside in = inside(v, reach);
  if (in.items) {
    std::vector<Value> items;
    items.reserve(in.items->size());
    for (size_t i = 0; i < in.items->size(); ++i) {
      path.push_index(i);
      items.push_back(map((*in.items)[i], path, reach, fn));
      path.pop();
    }
    return v.is_list() ? Value(make_list(std::move(items))) : Value(make_tuple(std::move(items)));
  }
  if (in.fields) {
    RecordPtr r = make_record();
    for (const auto& [k, x] : *in.fields) {
      path.push_field(k);
      r->fields.emplace_back(k, map(x, path, reach, fn));
      path.pop();
    }
    return Value(r);
  }
  return v;
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
  return walk(v, path, reach, visit, opened);
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
  return map(v, path, reach, fn);
}

}  // namespace nn::frontend
