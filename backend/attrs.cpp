// Attributes as text: "axes=[0, 1], keepdims=false" (the IR printer, and
// keys for merging equal op calls).
#include "backend/attrs.h"

#include <fmt/format.h>

#include <charconv>
#include <variant>

#include "backend/ops/fused_program.h"

namespace nn::backend {
namespace {

// One attribute value as the script would spell it: numbers in their
// shortest round-trip form, lists and shapes in brackets, strings quoted.
std::string attr_value_text(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          char buf[32];
          auto r = std::to_chars(buf, buf + sizeof buf, x);
          return std::string(buf, r.ptr);
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::string s = "[";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + std::to_string(x[i]);
          return s + "]";
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::string(dtype_name(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + x + "\"";
        } else if constexpr (std::is_same_v<T, Shape>) {
          return x.str();
        } else {
          return x ? fmt::format("{{{}}}", program_text(*x)) : "{}";  // a fused program
        }
      },
      v);
}

}  // namespace

std::string Attrs::str() const {
  std::string s;
  for (const auto& [key, value] : items_) {
    if (!s.empty()) s += ", ";
    s += std::string(key) + "=" + attr_value_text(value);
  }
  return s;
}

}  // namespace nn::backend
