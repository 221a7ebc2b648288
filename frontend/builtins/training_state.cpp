// Built-ins for the whole state of a training run (SPEC §17): state(x), the
// flat record of every tensor of a model, optimizer or any nest of them;
// load_state(x, src), which copies a checkpoint into those tensors in place
// (and its host values into x's of the same name and kind);
// rng_state() and set_rng_state(s), the random generator's position, so that
// a resumed run repeats an uninterrupted one bit for bit.
#include "frontend/builtins/training_state.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "backend/autograd.h"
#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/builtins/file_io.h"
#include "frontend/builtins/safetensors_format.h"
#include "frontend/interpreter.h"
#include "frontend/tensor_walk.h"

namespace nn::frontend::builtins {

std::vector<std::pair<std::string, backend::Tensor>> state_entries(const Value& v) {
  std::vector<std::pair<std::string, backend::Tensor>> out;
  std::unordered_set<const void*> seen_tensors, opened;
  TensorVisitor visit;
  visit.tensor = [&](const backend::Tensor& t, const ValuePath& path) {
    if (seen_tensors.insert(t.impl()).second) out.emplace_back(path.dotted(), t);
    return Walk::go_on;
  };
  for_each_tensor(v, "", Reach::sequences_and_records, visit, &opened);
  return out;
}

namespace {

using Entries = std::vector<std::pair<std::string, backend::Tensor>>;

// load_state's source, read once: a checkpoint file (its tensors under
// their names), or a record (flat from state() or load(), or nested like a
// model) with its tensors by state().
struct Source {
  std::optional<safetensors::Contents> file;
  Entries tensors;
};

Source read_source(Args& a) {
  const Value& src = a[1];
  Source s;
  if (src.is_str()) {
    const std::string& path = src.as_str();
    std::string denied = fileio::access_denied(a.vm().options().allow_files, path, false);
    if (!denied.empty()) a.fail(1, denied);
    s.file = safetensors::read(path);
    s.tensors = s.file->tensors;
    return s;
  }
  if (!src.is_record() && !src.is_list() && !src.is_tuple())
    a.fail(1, "load_state reads from a checkpoint path or a record of tensors, not " + a_type_name(src));
  s.tensors = state_entries(src);
  return s;
}

// The host values (bools, numbers, strings) a record or list nest holds in
// its records' fields and its lists' items, under state()'s dotted names:
// the places load_state can set. Tuples cannot be changed: not walked.
template <class F>
void for_each_host_slot(Value& v, const std::string& name, size_t depth, const F& f) {
  if (depth >= kMaxValueDepth) return;
  auto child = [&](const std::string& part) { return name.empty() ? part : name + "." + part; };
  auto visit = [&](Value& item, const std::string& path) {
    if (item.is_bool() || item.is_int() || item.is_float() || item.is_str()) f(path, item);
    else if (item.is_record() || item.is_list()) for_each_host_slot(item, path, depth + 1, f);
  };
  if (v.is_record())
    for (auto& [field, value] : v.as_record()->fields) visit(value, child(symbol_name(field)));
  else if (v.is_list())
    for (size_t i = 0; i < v.as_list()->items.size(); ++i) visit(v.as_list()->items[i], child(std::to_string(i)));
}

// Sets x's host values from the source's of the same name and kind (a
// resumed run's epoch count); the rest is left as it is.
void load_host_values(Value& x, const Value& src, Source& from) {
  std::unordered_map<std::string, Value> source;
  if (from.file) {
    for (auto& [name, v] : checkpoint_leaves(src.as_str(), *from.file))
      if (!v.is_tensor()) source.emplace(name, v);
  } else {
    Value walked = src;
    for_each_host_slot(walked, "", 0, [&](const std::string& name, Value& v) { source.emplace(name, v); });
  }
  if (source.empty()) return;
  for_each_host_slot(x, "", 0, [&](const std::string& name, Value& v) {
    auto it = source.find(name);
    if (it != source.end() && it->second.kind() == v.kind()) v = it->second;
  });
}

// "`a`, `b` and 3 more": a long list stays readable.
std::string name_list(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  std::string s;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) s += (i ? ", `" : "`") + names[i] + "`";
  if (names.size() > kShown) s += " and " + std::to_string(names.size() - kShown) + " more";
  return s;
}

Value string_list(const std::vector<std::string>& names) {
  auto l = make_list();
  for (const std::string& n : names) l->items.push_back(Value(n));
  return Value(l);
}

Value load_state(Args& a) {
  refuse_in_graph(a, "load_state");
  const Value& x = a[0];
  if (!x.is_record() && !x.is_list() && !x.is_tuple())
    a.fail(0, "load_state copies into the tensors of a record or list (a model, an optimizer), not " +
                  a_type_name(x));
  bool strict = a.boolean(2);
  Entries target = state_entries(x);
  Source from = read_source(a);
  const Entries& source = from.tensors;
  std::unordered_map<std::string, const backend::Tensor*> by_name;
  for (auto& [name, t] : source) by_name.emplace(name, &t);

  // Everything is compared before anything is copied: a refused checkpoint
  // leaves the model as it was.
  std::vector<std::string> missing, unexpected, mismatched;
  std::vector<std::pair<backend::Tensor, const backend::Tensor*>> copies;
  std::unordered_set<std::string> wanted;
  for (auto& [name, t] : target) {
    wanted.insert(name);
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      missing.push_back(name);
      continue;
    }
    const backend::Tensor& s = *it->second;
    if (s.shape() != t.shape() || s.dtype() != t.dtype())
      mismatched.push_back("`" + name + "` is " + t.type().str() + " here and " + s.type().str() + " in the source");
    else
      copies.emplace_back(t, it->second);
  }
  for (auto& [name, t] : source)
    if (!wanted.count(name)) unexpected.push_back(name);

  if (!mismatched.empty() || (strict && (!missing.empty() || !unexpected.empty()))) {
    std::string msg = "load_state: the source does not fit";
    if (!missing.empty()) msg += "; missing " + name_list(missing);
    if (!unexpected.empty()) msg += "; unexpected " + name_list(unexpected);
    for (const std::string& m : mismatched) msg += "; " + m;
    if (mismatched.empty()) msg += " (strict=false loads the names both have and returns the others)";
    a.fail(1, msg);
  }
  // In place: every optimizer and compiled graph holding these tensors sees
  // the new values. The copy is not part of any gradient.
  backend::NoGradGuard no_grad;
  // A source that is one of the targets' memory (load_state(r, {a: r.b,
  // b: r.a})) is read before any copy writes it: copied first, as a
  // swap through a temporary does.
  std::unordered_set<const void*> written;
  for (auto& [t, s] : copies) written.insert(t.block().get());
  std::vector<backend::Tensor> sources;
  for (auto& [t, s] : copies) {
    backend::Tensor src = s->device() == t.device() ? *s : backend::to_device(*s, t.device());
    if (!t.same(src) && written.count(src.block().get())) src = backend::index(src, {});  // a copy
    sources.push_back(src);
  }
  for (size_t i = 0; i < copies.size(); ++i) {
    backend::Tensor dst = copies[i].first;
    if (!dst.same(sources[i])) backend::index_assign(dst, {}, sources[i]);
  }
  Value target_nest = x;
  load_host_values(target_nest, a[1], from);
  if (strict) return Value();
  RecordPtr r = make_record();
  r->set(intern("missing"), string_list(missing));
  r->set(intern("unexpected"), string_list(unexpected));
  return Value(r);
}

}  // namespace

void install_training_state(Interpreter& vm) {
  def(vm, "state", "x", [](Args& a) {
    const Value& x = a[0];
    if (!x.is_record() && !x.is_list() && !x.is_tuple())
      a.fail(0, "state needs a record or list (a model, an optimizer, a nest of them), not " + a_type_name(x));
    RecordPtr r = make_record();
    for (auto& [name, t] : state_entries(a[0])) r->fields.emplace_back(intern(name), Value(t));
    return Value(r);
  });
  def(vm, "load_state", "x, src, strict=true", load_state);
  // The generator as an i64[2] tensor [seed, position]: a checkpoint holds it
  // like any other tensor.
  def(vm, "rng_state", "", [](Args& a) {
    refuse_in_graph(a, "rng_state");
    backend::RngState s = backend::rng_state();
    return Value(backend::from_ints({int64_t(s.seed), int64_t(s.offset)}, backend::Shape{2}, backend::DType::i64));
  });
  def(vm, "set_rng_state", "s", [](Args& a) {
    refuse_in_graph(a, "set_rng_state");
    backend::Tensor s = a.tensor(0);
    if (s.dtype() != backend::DType::i64 || s.shape() != backend::Shape{2})
      a.fail(0, "set_rng_state needs the i64[2] tensor that rng_state() gives, not " + s.type().str());
    backend::Tensor host = fileio::on_cpu(s);
    const int64_t* v = host.data<int64_t>();
    backend::set_rng_state({uint64_t(v[0]), uint64_t(v[1])});
    return Value();
  });
}

}  // namespace nn::frontend::builtins
