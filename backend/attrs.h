// Attributes of an op call: named host values (axes, a slope, a dtype) that
// are part of the op, not tensors flowing into it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "backend/dtype.h"
#include "backend/error.h"
#include "backend/shape.h"

namespace nn::backend {

struct FusedProgram;  // backend/ops/fused_program.h: the program of a fused elementwise node
using ProgramPtr = std::shared_ptr<const FusedProgram>;

using AttrValue = std::variant<int64_t, double, bool, std::vector<int64_t>, DType, std::string, Shape, ProgramPtr>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string_view, AttrValue>> items) : items_(items) {}

  Attrs& set(std::string_view key, AttrValue v) {
    for (auto& [k, old] : items_)
      if (k == key) {
        old = std::move(v);
        return *this;
      }
    items_.emplace_back(key, std::move(v));
    return *this;
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  template <class T>
  const T& get(std::string_view key) const {
    const AttrValue* v = find(key);
    if (!v || !std::holds_alternative<T>(*v)) throw Error("internal: op attribute `" + std::string(key) + "` missing");
    return std::get<T>(*v);
  }
  template <class T>
  T get_or(std::string_view key, T fallback) const {
    const AttrValue* v = find(key);
    return v && std::holds_alternative<T>(*v) ? std::get<T>(*v) : fallback;
  }
  const std::vector<std::pair<std::string_view, AttrValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  std::string str() const;  // "axes=[0, 1], keepdims=false"
  // Whether o has the same attributes, each equal as its text would be
  // (doubles bit for bit, fused programs by their steps), without the
  // text: how passes merge equal op calls. hash() agrees with it.
  bool same_as(const Attrs& o) const;
  size_t hash() const;

  // The value of `key`, or null.
  const AttrValue* find(std::string_view key) const {
    for (auto& [k, v] : items_)
      if (k == key) return &v;
    return nullptr;
  }
 private:
  // Keys are string literals of the op definitions: static storage.
  std::vector<std::pair<std::string_view, AttrValue>> items_;
};

}  // namespace nn::backend
