// Built-ins that read and write files (SPEC §8): load_npy save_npy load_idx
// load_csv, and the checkpoints save/load (safetensors; a record's nesting
// becomes dotted names and back, its host values ride in the metadata; the
// tensors are state()'s, training_state.cpp). Each
// checks allow_files first; the format code lives in *_format.cpp beside
// this file.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "backend/ops.h"
#include "frontend/builtins/builtins.h"
#include "frontend/builtins/csv_format.h"
#include "frontend/builtins/file_io.h"
#include "frontend/builtins/idx_format.h"
#include "frontend/host_data.h"
#include "frontend/builtins/npy_format.h"
#include "frontend/builtins/safetensors_format.h"
#include "frontend/builtins/training_state.h"
#include "frontend/format.h"
#include "frontend/function.h"
#include "frontend/interpreter.h"
#include "frontend/stack_guard.h"
#include "frontend/tensor_walk.h"

namespace nn::frontend::builtins {
namespace {
using backend::DType;
using Json = nlohmann::ordered_json;  // keeps the order of a record's fields

// The path argument i, after the allow_files check.
const std::string& path_arg(Args& a, size_t i, bool write) {
  const std::string& path = a.str(i);
  std::string denied = fileio::access_denied(a.vm().options().allow_files, path, write);
  if (!denied.empty()) a.fail(i, denied);
  return path;
}

// A dtype argument that the file formats can produce (no f16/bf16 on CPU).
DType data_dtype(Args& a, size_t i) {
  DType d = a.dtype(i);
  if (d == DType::f16 || d == DType::bf16)
    a.fail(i, "dtype " + std::string(backend::dtype_name(d)) + " is not supported here (use f32 f64 i32 i64 bool)");
  return d;
}

// ---- save: a value's leaves under dotted names ----
//
// Tensors go to the safetensors body. Host leaves (none, bools, numbers,
// strings: a layer's `kind`, `stride`, a missing bias) go, with the order of
// every leaf, to the metadata entry "nn.values": a JSON object from dotted
// name to value, where {} stands for the tensor of that name. Other tools
// ignore it; load() uses it to give back the record as it was saved, its
// functions excepted.

constexpr const char* kValuesKey = "nn.values";

struct Flat {
  safetensors::Contents contents;
  Json values = Json::object();
  // Each tensor is written once, under its first name (state()'s rule); a
  // later place holding it is {"same": first name}, so load shares it again.
  std::map<const void*, std::string> written;
  // The containers around the one being walked: one met again inside
  // itself (r.self = r) is a cycle, not walked again (as state() has it).
  std::set<const void*> around;
};

void flatten(Args& a, const Value& v, const std::string& name, Flat& out) {
  auto child = [&](const std::string& part) { return name.empty() ? part : name + "." + part; };
  // As deep as load reads names, and never to the end of the stack.
  if (out.around.size() >= kMaxValueDepth || stack_nearly_full())
    a.fail(0, "save: the value is nested more than " + std::to_string(kMaxValueDepth) +
                  " lists, tuples or records deep, one inside another");
  switch (v.kind()) {
    case Value::Kind::Tensor: {
      auto [it, first] = out.written.emplace(v.as_tensor().impl(), name);
      if (first) {
        out.contents.tensors.emplace_back(name, v.as_tensor());
        out.values[name] = Json::object();
      } else {
        out.values[name] = Json{{"same", it->second}};
      }
      return;
    }
    case Value::Kind::Record: {
      const auto* r = v.as_record().get();
      // An empty one keeps its place (in a list, the items after it keep
      // their indices; it came back as a record of the others).
      if (r->fields.empty() && !name.empty()) {
        out.values[name] = Json{{"empty", "record"}};
        return;
      }
      if (!out.around.insert(r).second) return;
      for (auto& [field, value] : r->fields) flatten(a, value, child(symbol_name(field)), out);
      out.around.erase(r);
      return;
    }
    case Value::Kind::List:
    case Value::Kind::Tuple: {
      const void* container = v.is_list() ? static_cast<const void*>(v.as_list().get()) : v.as_tuple().get();
      const auto& items = v.is_list() ? v.as_list()->items : v.as_tuple()->items;
      if (items.empty() && !name.empty()) {  // as an empty record
        out.values[name] = Json{{"empty", "list"}};
        return;
      }
      if (!out.around.insert(container).second) return;
      for (size_t i = 0; i < items.size(); ++i) {
        // A function in a list (`relu` in a Sequential) keeps its place, so
        // the items after it keep their indices: load gives none there.
        if (items[i].is_function())
          out.values[child(std::to_string(i))] = Json{{"function", true}};
        else
          flatten(a, items[i], child(std::to_string(i)), out);
      }
      out.around.erase(container);
      return;
    }
    // A layer's `call` and other functions are code, not state: the script
    // that defines them makes them again.
    case Value::Kind::Function:
      return;
    case Value::Kind::None:
      out.values[name] = nullptr;
      return;
    case Value::Kind::Bool:
      out.values[name] = v.as_bool();
      return;
    case Value::Kind::Int:
      out.values[name] = v.as_int();
      return;
    case Value::Kind::Str:
      out.values[name] = v.as_str();
      return;
    case Value::Kind::Float:
      // JSON has no NaN or infinities: those are spelled as tagged strings.
      if (std::isfinite(v.as_float()))
        out.values[name] = v.as_float();
      else
        out.values[name] = Json{{"float", std::isnan(v.as_float()) ? "nan" : v.as_float() > 0 ? "inf" : "-inf"}};
      return;
    default:
      a.fail(0, "save: `" + name + "` is " + a_type_name(v) +
                    ", which save cannot write (it writes tensors, numbers, strings, bools and none, in records, "
                    "lists and tuples)");
  }
}

// ---- load: dotted names back into records and lists ----

struct Node {
  std::optional<Value> leaf;
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> children;  // in file order
  std::map<std::string, Node*> by_name;
};

// "0", "1", ... "n-1" in canonical spelling: then a node is a list.
bool is_list_node(const Node& n) {
  if (n.children.empty()) return false;
  std::vector<bool> seen(n.children.size(), false);
  for (auto& [name, _] : n.children) {
    if (name.empty() || name.size() > 9 || (name.size() > 1 && name[0] == '0')) return false;
    size_t i = 0;
    for (char c : name) {
      if (c < '0' || c > '9') return false;
      i = i * 10 + size_t(c - '0');
    }
    if (i >= seen.size() || seen[i]) return false;
    seen[i] = true;
  }
  return true;
}

Value to_value(Node& n) {
  if (n.leaf) return *n.leaf;
  if (is_list_node(n)) {
    std::vector<Value> items(n.children.size());
    for (auto& [name, child] : n.children) items[std::stoul(name)] = to_value(*child);
    return Value(make_list(std::move(items)));
  }
  RecordPtr r = make_record();
  for (auto& [name, child] : n.children) r->set(intern(name), to_value(*child));
  return Value(r);
}

// The leaves of a file, in their saved order: those "nn.values" lists (with
// the tensors it names), then any tensor it does not name (files from other
// tools have no "nn.values").
std::vector<std::pair<std::string, Value>> leaves(const std::string& path, safetensors::Contents& c) {
  std::map<std::string, size_t> tensor_at;
  for (size_t i = 0; i < c.tensors.size(); ++i) tensor_at[c.tensors[i].first] = i;
  std::vector<bool> used(c.tensors.size(), false);
  std::vector<std::pair<std::string, Value>> out;
  std::map<std::string, Value> tensor_named;  // for {"same": name}
  for (auto& [key, text] : c.metadata) {
    if (key != kValuesKey) continue;
    Json values = Json::parse(text, nullptr, false);
    if (values.is_discarded() || !values.is_object())
      throw fileio::FileError(path, std::string("bad __metadata__: ") + kValuesKey + " is not a JSON object");
    for (auto& [name, v] : values.items()) {
      auto bad = [&] {
        throw fileio::FileError(path, std::string("bad __metadata__: ") + kValuesKey + " entry `" + name + "`");
      };
      if (v.is_object() && v.empty()) {
        auto it = tensor_at.find(name);
        if (it == tensor_at.end())
          throw fileio::FileError(path, std::string("bad __metadata__: ") + kValuesKey + " names tensor `" + name +
                                            "`, which the file does not hold");
        used[it->second] = true;
        out.emplace_back(name, Value(on_default_device(c.tensors[it->second].second)));
        tensor_named[name] = out.back().second;
      } else if (v.is_object() && v.size() == 1 && v.contains("same") && v["same"].is_string()) {
        auto it = tensor_named.find(v["same"].get<std::string>());
        if (it == tensor_named.end()) bad();
        out.emplace_back(name, it->second);
      } else if (v.is_object() && v.size() == 1 && v.contains("function"))
        out.emplace_back(name, Value());
      else if (v.is_object() && v.size() == 1 && v.contains("empty") && v["empty"] == "record")
        out.emplace_back(name, Value(make_record()));
      else if (v.is_object() && v.size() == 1 && v.contains("empty") && v["empty"] == "list")
        out.emplace_back(name, Value(make_list({})));
      else if (v.is_null())
        out.emplace_back(name, Value());
      else if (v.is_boolean())
        out.emplace_back(name, Value(v.get<bool>()));
      else if (v.is_number_integer())
        out.emplace_back(name, Value(v.get<int64_t>()));
      else if (v.is_number_unsigned())
        bad();  // beyond int64: not something nn wrote
      else if (v.is_number_float())
        out.emplace_back(name, Value(v.get<double>()));
      else if (v.is_string())
        out.emplace_back(name, Value(v.get<std::string>()));
      else if (v.is_object() && v.size() == 1 && v.contains("float") && v["float"].is_string()) {
        std::string f = v["float"].get<std::string>();
        double d = f == "nan" ? std::nan("") : f == "inf" ? HUGE_VAL : f == "-inf" ? -HUGE_VAL : 0;
        if (d == 0) bad();
        out.emplace_back(name, Value(d));
      } else
        bad();
    }
  }
  for (size_t i = 0; i < c.tensors.size(); ++i)
    if (!used[i]) out.emplace_back(c.tensors[i].first, Value(on_default_device(c.tensors[i].second)));
  return out;
}

// Deeper dotted names are refused: the records and lists they make are
// built and freed recursively (3,000,000 levels overflowed the stack).
constexpr size_t kMaxNameDepth = 10000;

Value nest(const std::string& path, const std::vector<std::pair<std::string, Value>>& items) {
  Node root;
  for (auto& [name, value] : items) {
    if (size_t(std::count(name.begin(), name.end(), '.')) + 1 > kMaxNameDepth)
      throw fileio::FileError(path, "a name of more than " + std::to_string(kMaxNameDepth) + " dotted parts (`" +
                                        name.substr(0, 40) + "...`)");
    Node* n = &root;
    for (size_t start = 0;;) {
      size_t dot = name.find('.', start);
      std::string part = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (n->leaf)
        throw fileio::FileError(path, "names clash: `" + name.substr(0, start - 1) + "` is a value and has fields (`" +
                                          name + "`)");
      auto it = n->by_name.find(part);
      if (it == n->by_name.end()) {
        n->children.emplace_back(part, std::make_unique<Node>());
        it = n->by_name.emplace(part, n->children.back().second.get()).first;
      }
      n = it->second;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (n->leaf || !n->children.empty())
      throw fileio::FileError(path, "names clash: `" + name + "` is a value and has fields");
    n->leaf = value;
  }
  if (root.children.empty()) return Value(make_record());
  return to_value(root);
}

}  // namespace

void install_files(Interpreter& vm) {
  def(vm, "load_npy", "path", [](Args& a) { return Value(on_default_device(npy::read(path_arg(a, 0, false)))); });
  def(vm, "save_npy", "x, path", [](Args& a) {
    refuse_in_graph(a, "save_npy");
    backend::Tensor x = a.tensor(0);
    npy::write(x, path_arg(a, 1, true));
    return Value();
  });
  def(vm, "load_idx", "path, dtype=none", [](Args& a) {
    std::optional<DType> d;
    if (!a[1].is_none()) d = data_dtype(a, 1);
    return Value(on_default_device(idx::read(path_arg(a, 0, false), d)));
  });
  def(vm, "load_csv", "path, header=true, dtype=f32", [](Args& a) {
    const std::string& path = path_arg(a, 0, false);
    bool header = a.boolean(1);
    DType d = data_dtype(a, 2);
    const bool integers = backend::is_integral(d) && d != DType::boolean;
    csv::Table t = csv::read(path, header, integers);
    const backend::Shape shape{t.rows, t.cols};
    if (!integers) return Value(on_default_device(backend::from_doubles(t.values, shape, d)));
    // Integer cells read exactly (9007199254740993 is no double), others
    // truncate toward zero; a value the dtype cannot hold (3000000000 as
    // i32, nan, an integer past int64) is an error, as in tensor(), not a
    // saturated number.
    std::vector<int64_t> ints(t.ints.size());
    for (size_t k = 0; k < ints.size(); ++k) {
      const bool integer = t.kinds[k] == csv::Table::integer;
      const bool fits = integer ? fits_integer(t.ints[k], d)
                                : t.kinds[k] == csv::Table::floating && fits_integer(t.values[k], d);
      if (!fits)  // named as the file's other errors are: PATH:LINE
        a.fail(2, path + ":" + std::to_string(t.lines[k / size_t(t.cols)]) + ": cell " +
                      std::to_string(k % size_t(t.cols) + 1) + " holds " +
                      (integer ? std::to_string(t.ints[k]) : format_float(t.values[k])) + ", which " +
                      std::string(backend::dtype_name(d)) + " cannot hold");
      ints[k] = integer ? t.ints[k] : int64_t(t.values[k]);
    }
    return Value(on_default_device(backend::astype(backend::from_ints(ints, shape, DType::i64), d)));
  });
  def(vm, "save", "record, path", [](Args& a) {
    refuse_in_graph(a, "save");
    const Value& v = a[0];
    if (!v.is_record() && !v.is_list() && !v.is_tuple())
      a.fail(0, "save needs a record of tensors, not " + a_type_name(v) +
                    (v.is_tensor() ? " (save_npy writes one tensor)" : ""));
    // Everything is gathered and checked before the file is touched: a bad
    // value leaves the old checkpoint as it was.
    Flat flat;
    flatten(a, v, "", flat);
    flat.contents.metadata.emplace_back("format", "nn");
    // Strings that are not valid UTF-8 (JSON needs it) get U+FFFD in place
    // of the bad bytes rather than an exception.
    flat.contents.metadata.emplace_back(kValuesKey, flat.values.dump(-1, ' ', false, Json::error_handler_t::replace));
    safetensors::write(flat.contents, path_arg(a, 1, true));
    return Value();
  });
  def(vm, "load", "path", [](Args& a) {
    const std::string& path = path_arg(a, 0, false);
    safetensors::Contents c = safetensors::read(path);
    return nest(path, checkpoint_leaves(path, c));
  });
}

std::vector<std::pair<std::string, Value>> checkpoint_leaves(const std::string& path, safetensors::Contents& c) {
  return leaves(path, c);
}

}  // namespace nn::frontend::builtins
