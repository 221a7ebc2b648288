// Attributes as text: "axes=[0, 1], keepdims=false" (the IR printer), and
// compared and hashed as that text would be, without making it (passes
// merging equal op calls).
#include "backend/attrs.h"

#include <fmt/format.h>

#include <bit>
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

// Doubles by their bits: 0.0 and -0.0 differ, a NaN equals itself.
uint64_t bits(double x) { return std::bit_cast<uint64_t>(x); }

bool same_value(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) return bits(*x) == bits(std::get<double>(b));
  if (std::holds_alternative<ProgramPtr>(a)) return attr_value_text(a) == attr_value_text(b);
  return a == b;
}

}  // namespace

bool Attrs::same_as(const Attrs& o) const {
  if (items_.size() != o.items_.size()) return false;
  for (size_t i = 0; i < items_.size(); ++i)
    if (items_[i].first != o.items_[i].first || !same_value(items_[i].second, o.items_[i].second)) return false;
  return true;
}

size_t Attrs::hash() const {
  size_t h = items_.size();
  auto mix = [&](size_t x) { h = (h ^ x) * 0x100000001b3ull; };
  for (const auto& [key, value] : items_) {
    mix(std::hash<std::string_view>()(key));
    mix(value.index());
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, double>) mix(bits(x));
          else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, bool> || std::is_same_v<T, DType>) mix(size_t(x));
          else if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, Shape>)
            for (int64_t d : x) mix(size_t(d));
          else if constexpr (std::is_same_v<T, std::string>) mix(std::hash<std::string>()(x));
          // fused programs: by key and kind only; same_as compares them
        },
        value);
  }
  return h;
}

std::string Attrs::str() const {
  std::string s;
  for (const auto& [key, value] : items_) {
    if (!s.empty()) s += ", ";
    s += std::string(key) + "=" + attr_value_text(value);
  }
  return s;
}

}  // namespace nn::backend
