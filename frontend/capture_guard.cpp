// Capture guards (frontend/capture_guard.h): built once after a trace,
// checked on every call of the compiled graph.
#include "frontend/capture_guard.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "frontend/tensor_walk.h"

namespace nn::frontend {
namespace {

// The same memory seen as the same type: how the tracer tells a captured
// tensor (ir/tracer.h), whatever handle the graph and the path hold.
bool same_tensor(const backend::Tensor& a, const backend::Tensor& b) {
  return a.block() == b.block() && a.offset() == b.offset() && a.dtype() == b.dtype() && a.shape() == b.shape();
}

const std::vector<Value>* items_of(const Value& v) {
  if (const ListPtr* l = std::get_if<ListPtr>(&v.variant())) return &(*l)->items;
  if (const TuplePtr* t = std::get_if<TuplePtr>(&v.variant())) return &(*t)->items;
  return nullptr;
}

}  // namespace

CaptureGuards CaptureGuards::build(const ir::Graph& g, const GuardScope& scope) {
  CaptureGuards out;
  std::unordered_multimap<const void*, const backend::Tensor*> captured;  // by memory block
  for (const ir::Value& v : g.values)
    if (v.captured.defined()) captured.emplace(v.captured.block().get(), &v.captured);
  if (captured.empty()) return out;
  auto is_captured = [&](const backend::Tensor& t) {
    auto [lo, hi] = captured.equal_range(t.block().get());
    for (auto it = lo; it != hi; ++it)
      if (same_tensor(*it->second, t)) return true;
    return false;
  };

  // The tree: one step per distinct (parent, name, position).
  std::map<std::tuple<uint32_t, Symbol, uint32_t, bool>, uint32_t> known;
  auto step = [&](uint32_t from, Symbol name, uint32_t index, bool by_name) {
    auto [it, added] = known.emplace(std::make_tuple(from, name, index, by_name), uint32_t(out.steps_.size()));
    if (added) out.steps_.push_back({from, name, index, by_name, {}});
    return it->second;
  };
  // Adds the path from a root to a captured tensor, finding each field's
  // position as it goes.
  auto add_path = [&](uint32_t root, const Value& root_value, const ValuePath& path) {
    uint32_t at = root;
    const Value* v = &root_value;
    for (const ValuePath::Step& s : path.steps()) {
      if (s.field) {
        const auto& fields = v->as_record()->fields;
        size_t pos = 0;
        while (fields[pos].first != s.field) ++pos;
        v = &fields[pos].second;
        at = step(at, s.field, uint32_t(pos), false);
      } else {
        v = &(*items_of(*v))[s.index];
        at = step(at, 0, uint32_t(s.index), false);
      }
    }
    if (!out.steps_[at].expect.defined()) {
      out.steps_[at].expect = v->as_tensor();
      ++out.leaves_;
    }
  };
  // Each root walked on its own, so that a container two names share is
  // guarded under both (either may be rebound).
  // An argument's tensors reached through lists and tuples alone are graph
  // inputs, checked by the signature; those in its records are captured.
  auto walk_root = [&](const Value& v, const std::string& name, bool by_name, uint32_t index) {
    if (v.is_function()) return;
    const Symbol sym = intern(name);
    std::unordered_set<const void*> opened;
    TensorVisitor visit;
    visit.tensor = [&](const backend::Tensor& t, const ValuePath& path) {
      if (!by_name && std::none_of(path.steps().begin(), path.steps().end(),
                                   [](const ValuePath::Step& s) { return s.field != 0; }))
        return Walk::go_on;
      if (!t.is_traced() && is_captured(t)) add_path(step(kNone, sym, index, by_name), v, path);
      return Walk::go_on;
    };
    for_each_tensor(v, name, Reach::sequences_and_records, visit, &opened);
  };

  std::unordered_set<Symbol> seen;
  for (size_t i = 0; i < scope.arg_names.size() && i < scope.args.size(); ++i) {
    seen.insert(intern(scope.arg_names[i]));
    walk_root(scope.args[i], scope.arg_names[i], false, uint32_t(i));
  }
  for (Env* e = scope.env; e && e != scope.stop; e = e->parent.get())
    for (size_t i = 0; i < e->names.size(); ++i)
      if (seen.insert(e->names[i]).second) walk_root(e->values[i], symbol_name(e->names[i]), true, 0);
  out.at_.resize(out.steps_.size());
  return out;
}

const Value* CaptureGuards::resolve(const Step& s, const GuardScope& scope) const {
  if (s.from == kNone) {
    if (s.by_name) return scope.env ? scope.env->find(s.name) : nullptr;
    return s.index < scope.args.size() ? &scope.args[s.index] : nullptr;
  }
  const Value* p = at_[s.from];
  if (!p) return nullptr;
  if (s.name) {
    const RecordPtr* r = std::get_if<RecordPtr>(&p->variant());
    if (!r) return nullptr;
    const auto& fields = (*r)->fields;
    if (s.index < fields.size() && fields[s.index].first == s.name) return &fields[s.index].second;
    return (*r)->find(s.name);  // the fields moved
  }
  const std::vector<Value>* items = items_of(*p);
  return items && s.index < items->size() ? &(*items)[s.index] : nullptr;
}

uint32_t CaptureGuards::first_broken(const GuardScope& scope) const {
  for (uint32_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    const Value* v = resolve(s, scope);
    at_[i] = v;
    if (!s.expect.defined()) continue;
    const backend::Tensor* t = v ? std::get_if<backend::Tensor>(&v->variant()) : nullptr;
    if (!t || t->impl() != s.expect.impl()) return i;
  }
  return kNone;
}

std::string CaptureGuards::path_of(uint32_t step) const {
  std::vector<uint32_t> chain;
  for (uint32_t i = step; i != kNone; i = steps_[i].from) chain.push_back(i);
  std::string s;
  for (size_t k = chain.size(); k-- > 0;) {
    const Step& st = steps_[chain[k]];
    if (st.from != kNone) s += st.name ? '.' : '[';
    s += st.name ? symbol_name(st.name) : std::to_string(st.index);
    if (st.from != kNone && !st.name) s += ']';
  }
  return s;
}

std::string CaptureGuards::why_not(const GuardScope& scope) const {
  const uint32_t i = first_broken(scope);
  if (i == kNone) return "";
  const Value* v = at_[i];
  std::string who = "`";
  who += path_of(i);
  who += '`';
  if (!v) return who + " no longer exists";
  if (!v->is_tensor()) return who + " now holds " + a_type_name(*v);
  return who + " now holds another tensor";
}

}  // namespace nn::frontend
