// Capture guards (frontend/capture_guard.h): built once after a trace,
// checked on every call of the compiled graph.
#include "frontend/capture_guard.h"

#include <algorithm>
#include <map>
#include <set>
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

// A container's identity; null for other values.
const void* container_id(const Value& v) {
  if (const ListPtr* l = std::get_if<ListPtr>(&v.variant())) return l->get();
  if (const TuplePtr* t = std::get_if<TuplePtr>(&v.variant())) return t->get();
  if (const RecordPtr* r = std::get_if<RecordPtr>(&v.variant())) return r->get();
  return nullptr;
}

const backend::TensorImpl* tensor_impl(const Value* v) {
  const backend::Tensor* t = v ? std::get_if<backend::Tensor>(&v->variant()) : nullptr;
  return t ? t->impl() : nullptr;
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

  // The tree: one step per distinct (parent, kind, name, position).
  std::map<std::tuple<uint32_t, From, Symbol, uint32_t>, uint32_t> known;
  std::vector<std::vector<Leaf>> leaves;  // per step, until they are laid out in one array
  auto step = [&](From kind, uint32_t from, Symbol name, uint32_t index) {
    auto [it, added] = known.emplace(std::make_tuple(from, kind, name, index), uint32_t(out.steps_.size()));
    if (added) {
      out.steps_.push_back({kind, from, name, index});
      leaves.emplace_back();
    }
    return it->second;
  };
  // The step that first reached each container; a later step reaching it is
  // an alias that checks only that it still holds it.
  std::unordered_map<const void*, uint32_t> owner;
  std::set<std::tuple<uint32_t, Symbol, uint32_t>> have_leaf;
  auto enter = [&](uint32_t id, const Value& v) {
    Step& st = out.steps_[id];
    if (st.same_as) return false;
    const void* c = container_id(v);
    if (!c) return true;
    auto [it, added] = owner.emplace(c, id);
    if (!added && it->second != id) {
      st.same_as = c;
      return false;
    }
    return true;
  };
  // Adds the path from a root to a captured tensor, finding each field's
  // position as it goes.
  auto add_path = [&](uint32_t root, const Value& root_value, const ValuePath& path) {
    const auto& steps = path.steps();
    if (steps.empty()) {  // the root is the tensor
      if (!out.steps_[root].expect) {
        out.steps_[root].expect = root_value.as_tensor().impl();
        out.held_.push_back(root_value.as_tensor());
      }
      return;
    }
    uint32_t at = root;
    const Value* v = &root_value;
    for (size_t k = 0; k < steps.size(); ++k) {
      if (!enter(at, *v)) return;
      const ValuePath::Step& s = steps[k];
      uint32_t pos = uint32_t(s.index);
      const Value* next;
      if (s.field) {
        const auto& fields = v->as_record()->fields;
        pos = 0;
        while (fields[pos].first != s.field) ++pos;
        next = &fields[pos].second;
      } else {
        next = &(*items_of(*v))[pos];
      }
      if (k + 1 == steps.size()) {
        if (have_leaf.emplace(at, s.field, pos).second) {
          leaves[at].push_back({s.field, pos, next->as_tensor().impl()});
          out.held_.push_back(next->as_tensor());
        }
        return;
      }
      at = step(s.field ? From::field : From::item, at, s.field, pos);
      v = next;
    }
  };
  // Each root walked on its own, so that a container two names share is
  // guarded under both (either may be rebound). An argument's tensors
  // reached through lists and tuples alone are graph inputs, checked by the
  // signature; those in its records are captured.
  auto walk_root = [&](const Value& v, const std::string& name, From kind, uint32_t index) {
    if (v.is_function()) return;
    const Symbol sym = intern(name);
    std::unordered_set<const void*> opened;
    TensorVisitor visit;
    visit.tensor = [&](const backend::Tensor& t, const ValuePath& path) {
      if (kind == From::argument && std::none_of(path.steps().begin(), path.steps().end(),
                                                 [](const ValuePath::Step& s) { return s.field != 0; }))
        return Walk::go_on;
      if (!t.is_traced() && is_captured(t)) add_path(step(kind, kNone, sym, index), v, path);
      return Walk::go_on;
    };
    for_each_tensor(v, name, Reach::sequences_and_records, visit, &opened);
  };

  std::unordered_set<Symbol> seen;
  for (size_t i = 0; i < scope.arg_names.size() && i < scope.args.size(); ++i) {
    seen.insert(intern(scope.arg_names[i]));
    walk_root(scope.args[i], scope.arg_names[i], From::argument, uint32_t(i));
  }
  for (Env* e = scope.env; e && e != scope.stop; e = e->parent.get())
    for (size_t i = 0; i < e->names.size(); ++i)
      if (seen.insert(e->names[i]).second) walk_root(e->values[i], symbol_name(e->names[i]), From::name, 0);

  for (size_t i = 0; i < out.steps_.size(); ++i) {
    out.steps_[i].leaves_begin = uint32_t(out.leaves_.size());
    out.leaves_.insert(out.leaves_.end(), leaves[i].begin(), leaves[i].end());
    out.steps_[i].leaves_end = uint32_t(out.leaves_.size());
  }
  out.at_.resize(out.steps_.size());
  return out;
}

const Value* CaptureGuards::resolve(const Step& s, const GuardScope& scope) const {
  switch (s.from_kind) {
    case From::argument: return s.index < scope.args.size() ? &scope.args[s.index] : nullptr;
    case From::name: return scope.env ? scope.env->find(s.name) : nullptr;
    case From::field: {
      const Value* p = at_[s.from];
      const RecordPtr* r = p ? std::get_if<RecordPtr>(&p->variant()) : nullptr;
      if (!r) return nullptr;
      const auto& fields = (*r)->fields;
      if (s.index < fields.size() && fields[s.index].first == s.name) return &fields[s.index].second;
      return (*r)->find(s.name);  // the fields moved
    }
    case From::item: {
      const Value* p = at_[s.from];
      const std::vector<Value>* items = p ? items_of(*p) : nullptr;
      return items && s.index < items->size() ? &(*items)[s.index] : nullptr;
    }
  }
  return nullptr;
}

const Value* CaptureGuards::leaf_value(const Value& container, const Leaf& l) const {
  if (l.field) {
    const RecordPtr* r = std::get_if<RecordPtr>(&container.variant());
    if (!r) return nullptr;
    const auto& fields = (*r)->fields;
    if (l.index < fields.size() && fields[l.index].first == l.field) return &fields[l.index].second;
    return (*r)->find(l.field);
  }
  const std::vector<Value>* items = items_of(container);
  return items && l.index < items->size() ? &(*items)[l.index] : nullptr;
}

CaptureGuards::Broken CaptureGuards::first_broken(const GuardScope& scope) const {
  for (uint32_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    const Value* v = resolve(s, scope);
    at_[i] = v;
    if (s.same_as) {
      if (!v || container_id(*v) != s.same_as) return {i, kNone};
      continue;
    }
    if (s.expect) {
      if (tensor_impl(v) != s.expect) return {i, kNone};
      continue;
    }
    if (s.leaves_begin == s.leaves_end) continue;
    if (!v) return {i, s.leaves_begin};
    // The leaves of one container together: the common case is a position,
    // a name and a pointer compare each.
    if (const RecordPtr* r = std::get_if<RecordPtr>(&v->variant())) {
      const auto& fields = (*r)->fields;
      for (uint32_t k = s.leaves_begin; k < s.leaves_end; ++k) {
        const Leaf& l = leaves_[k];
        const Value* x = l.index < fields.size() && fields[l.index].first == l.field ? &fields[l.index].second
                                                                                     : (*r)->find(l.field);
        if (tensor_impl(x) != l.expect) return {i, k};
      }
    } else if (const std::vector<Value>* items = items_of(*v)) {
      for (uint32_t k = s.leaves_begin; k < s.leaves_end; ++k) {
        const Leaf& l = leaves_[k];
        if (l.field || l.index >= items->size() || tensor_impl(&(*items)[l.index]) != l.expect) return {i, k};
      }
    } else {
      return {i, s.leaves_begin};
    }
  }
  return {};
}

std::string CaptureGuards::path_of(uint32_t step) const {
  std::vector<uint32_t> chain;
  for (uint32_t i = step; i != kNone; i = steps_[i].from) chain.push_back(i);
  std::string s;
  for (size_t k = chain.size(); k-- > 0;) {
    const Step& st = steps_[chain[k]];
    if (st.from_kind == From::field) s += '.';
    if (st.from_kind == From::item) s += '[';
    s += st.from_kind == From::item ? std::to_string(st.index) : symbol_name(st.name);
    if (st.from_kind == From::item) s += ']';
  }
  return s;
}

namespace {
std::string now_holds(const std::string& path, const Value* v) {
  std::string s = "`";
  s += path;
  s += '`';
  if (!v) return s + " no longer exists";
  if (v->is_tensor()) return s + " now holds another tensor";
  if (container_id(*v)) return s + " now holds another " + kind_name(v->kind());
  return s + " now holds " + a_type_name(*v);
}
}  // namespace

std::string CaptureGuards::why_not(const GuardScope& scope) const {
  const Broken b = first_broken(scope);
  if (b.step == kNone) return "";
  // The outermost step of the path that found nothing: say what its parent
  // holds instead when that is not a container of the right kind.
  std::vector<uint32_t> chain;
  for (uint32_t i = b.step; i != kNone; i = steps_[i].from) chain.push_back(i);
  for (size_t k = chain.size(); k-- > 0;) {
    if (at_[chain[k]]) continue;
    if (k + 1 < chain.size()) {
      const Value* parent = at_[chain[k + 1]];
      const bool fits = steps_[chain[k]].from_kind == From::field ? parent->is_record() : items_of(*parent) != nullptr;
      if (!fits) return now_holds(path_of(chain[k + 1]), parent);
    }
    return now_holds(path_of(chain[k]), nullptr);
  }
  if (b.leaf == kNone) return now_holds(path_of(b.step), at_[b.step]);
  const Leaf& l = leaves_[b.leaf];
  const Value* container = at_[b.step];
  std::string path = path_of(b.step);
  const bool fits = l.field ? container->is_record() : items_of(*container) != nullptr;
  if (!fits) return now_holds(path, container);
  if (l.field) {
    path += '.';
    path += symbol_name(l.field);
  } else {
    path += '[';
    path += std::to_string(l.index);
    path += ']';
  }
  return now_holds(path, leaf_value(*container, l));
}

}  // namespace nn::frontend
