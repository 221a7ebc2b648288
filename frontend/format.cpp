// How values print. The rules, which script tests and the REPL rely on:
//
//   none -> none         true / false          ints: 42, -7
//   floats (host f64): shortest round-trip digits, laid out as Python's repr:
//     positional when the decimal exponent is in [-4, 16), with ".0" added to
//     integral values (2.0, 0.1, 0.0001, -0.0, 1000000000000000.0);
//     otherwise exponent form with a sign and at least two exponent digits
//     (1e-05, 1e+16, 1.5e+300); inf, -inf, nan.
//   strings: to_str gives them raw; to_repr quotes them with the escapes of
//     the language ("a\"b\\n") and \r, \xHH for other control bytes.
//   lists [1, "a", <fn f>]    tuples (1, 2) (1,) ()    records {w: 1, b: 2} {}
//     Items always print as to_repr. A container met again inside itself
//     prints as [...], (...) or {...}.
//   ranges 0..5    dtypes f32    devices cpu    iterators <iterator>
//   functions: <fn name>, <fn> for a lambda, <graph name> for a graph
//     function, <built-in fn name>, <bound fn name> for method sugar (x.sum).
//
// Tensors:
//   0-d: the bare element (3, 0.1, true); an f32, f16 or bf16 element prints
//     the shortest digits that read back to it in its own dtype, not those
//     of its widened double (an f16 1.1 is 1.1).
//   Otherwise a header, dtype and shape ("f32[2, 3]"), followed by NumPy-style
//   brackets with ", " between elements. 1-d and empty tensors print on the
//   header's line: "i64[3] [1, 2, 3]", "f32[0] []". Higher ranks start on the
//   next line; each row sits on its own line indented to its depth, and
//   blocks of rank >= 3 are separated by blank lines (as NumPy does):
//       f32[2, 3]
//       [[1.0, 2.5, -3.0],
//        [4.0, 5.0,  6.0]]
//   Elements are right-aligned per column: every element at the same index of
//   the last axis gets the width of the widest of them, so columns line up
//   without padding the whole tensor to its single widest number.
//   Tensors of more than 1000 elements are summarised: along each axis longer
//   than 6 only the first 3 and last 3 entries show, with "..." between; the
//   header then names the device ("f32[1000, 1000] cpu"). The device is also
//   named for any tensor that does not live on the CPU.
//   Tensors inside containers print the same way, header included, so a list
//   of tensors cannot be mistaken for a nested list. format_tensor with
//   with_header=false gives the bracket part alone, for callers that show the
//   type elsewhere (such as a REPL :type line or an IR constant).
#include "frontend/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "backend/device.h"
#include "backend/half.h"
#include "backend/error.h"
#include "frontend/function.h"
#include "frontend/stack_guard.h"

namespace nn::frontend {

namespace {

// ---------------------------------------------------------------- numbers

// Lays out the shortest round-trip digits of v as Python's repr does. F is
// float or double; std::to_chars picks the shortest digits for that type.
template <class F>
std::string python_float(F v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view s(buf, size_t(res.ptr - buf));  // "-1.2345e+05"

  std::string out;
  if (!s.empty() && s.front() == '-') {
    out += '-';
    s.remove_prefix(1);
  }
  size_t e_pos = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e_pos))
    if (c != '.') digits += c;
  std::string_view exp_text = s.substr(e_pos + 1);
  bool exp_negative = exp_text.front() == '-';
  if (exp_text.front() == '+' || exp_text.front() == '-') exp_text.remove_prefix(1);
  int exp = 0;
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);
  if (exp_negative) exp = -exp;

  if (exp < -4 || exp >= 16) {
    // Exponent form: 1e-05, 1.5e+300.
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += exp < 0 ? "e-" : "e+";
    int mag = exp < 0 ? -exp : exp;
    if (mag < 10) out += '0';
    out += std::to_string(mag);
  } else if (exp >= 0) {
    // Positional with an integer part: 2.0, 123.5, 1000000.0.
    size_t int_len = size_t(exp) + 1;
    if (digits.size() <= int_len) {
      out += digits + std::string(int_len - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, int_len) + "." + digits.substr(int_len);
    }
  } else {
    // Positional below one: 0.1, 0.0001.
    out += "0." + std::string(size_t(-exp - 1), '0') + digits;
  }
  return out;
}

// The shortest digits that read back (as nn reads a number: one rounding from
// the double) to the same f16 or bf16, laid out as python_float does: an f16
// 1.1 prints 1.1, not the 1.0996094 its widened float would.
std::string python_half(backend::DType t, uint16_t bits) {
  const float v = t == backend::DType::f16 ? backend::half_to_float(bits) : backend::bf16_to_float(bits);
  if (!std::isfinite(v)) return python_float(v);
  for (int precision = 0; precision < 9; ++precision) {
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, precision);
    double back = 0;
    std::from_chars(buf, res.ptr, back);
    uint16_t again = 0;
    backend::store_half_exact(t, &again, 0, back);
    if (again == bits) return python_float(back);
  }
  return python_float(v);
}

// ---------------------------------------------------------------- tensors

constexpr int64_t kSummariseAbove = 1000;  // elements (NumPy's threshold)
constexpr int64_t kEdgeItems = 3;          // shown at each end of a long axis
constexpr int64_t kEllipsis = -1;          // marks "..." in a list of shown indices

// Host-readable bytes of a tensor: its own memory on the CPU, a copy otherwise.
class HostView {
 public:
  explicit HostView(const backend::Tensor& t) {
    if (t.device()->type() == backend::DeviceType::cpu) {
      data_ = t.raw_data();
    } else {
      copy_.resize((t.nbytes() + 7) / 8);
      t.device()->copy_to_host(copy_.data(), t.raw_data(), t.nbytes());
      data_ = copy_.data();
    }
  }
  template <class T> T at(int64_t i) const { return static_cast<const T*>(data_)[i]; }

 private:
  const void* data_ = nullptr;
  std::vector<uint64_t> copy_;  // uint64_t keeps any element type aligned
};

// A function giving the text of the element at a flat index.
std::function<std::string(int64_t)> element_formatter(const HostView& view, backend::DType dtype) {
  using backend::DType;
  switch (dtype) {
    case DType::f16:
    case DType::bf16: return [&view, dtype](int64_t i) { return python_half(dtype, view.at<uint16_t>(i)); };
    default: break;
  }
  return backend::visit_dtype(dtype, [&]<class T>() -> std::function<std::string(int64_t)> {
    if constexpr (std::is_same_v<T, bool>)
      return [&view](int64_t i) { return std::string(view.at<bool>(i) ? "true" : "false"); };
    else if constexpr (std::is_floating_point_v<T>)
      return [&view](int64_t i) { return python_float(view.at<T>(i)); };
    else
      return [&view](int64_t i) { return std::to_string(view.at<T>(i)); };
  });
}

// Builds the bracket text of an n-d tensor (n >= 1, at least one element).
class TensorPrinter {
 public:
  TensorPrinter(const backend::Tensor& t, bool summarise)
      : view_(t), element_(element_formatter(view_, t.dtype())), ndim_(t.ndim()) {
    strides_ = backend::contiguous_strides(t.shape());
    for (int axis = 0; axis < ndim_; ++axis) {
      int64_t n = t.shape()[axis];
      std::vector<int64_t> idx;
      if (summarise && n > 2 * kEdgeItems) {
        for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
        idx.push_back(kEllipsis);
        for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
      } else {
        for (int64_t i = 0; i < n; ++i) idx.push_back(i);
      }
      shown_.push_back(std::move(idx));
    }
    widths_.assign(shown_.back().size(), 0);
  }
  // element_ reads view_ by reference: a copy would point into the original.
  TensorPrinter(const TensorPrinter&) = delete;
  TensorPrinter& operator=(const TensorPrinter&) = delete;

  std::string text() {
    collect(0, 0);
    std::string out;
    next_cell_ = 0;
    emit(0, out);
    return out;
  }

 private:
  // First pass: the text of every shown element, in print order, and the
  // width of each column of the last axis.
  void collect(int axis, int64_t base) {
    const auto& idx = shown_[axis];
    for (size_t k = 0; k < idx.size(); ++k) {
      if (idx[k] == kEllipsis) continue;
      int64_t at = base + idx[k] * strides_[axis];
      if (axis + 1 < ndim_) {
        collect(axis + 1, at);
      } else {
        cells_.push_back(element_(at));
        widths_[k] = std::max(widths_[k], cells_.back().size());
      }
    }
  }

  // Second pass: brackets, separators and padded cells.
  void emit(int axis, std::string& out) {
    const auto& idx = shown_[axis];
    out += '[';
    bool last_axis = axis + 1 == ndim_;
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k > 0) {
        if (last_axis) {
          out += ", ";
        } else {
          // Rows end their line; each further axis below adds a blank line.
          out += ',';
          out.append(size_t(ndim_ - axis - 1), '\n');
          out.append(size_t(axis + 1), ' ');
        }
      }
      if (idx[k] == kEllipsis) {
        out += "...";
      } else if (last_axis) {
        const std::string& cell = cells_[next_cell_++];
        out.append(widths_[k] - cell.size(), ' ');
        out += cell;
      } else {
        emit(axis + 1, out);
      }
    }
    out += ']';
  }

  HostView view_;
  std::function<std::string(int64_t)> element_;
  int ndim_;
  std::array<int64_t, backend::kMaxDims> strides_{};
  std::vector<std::vector<int64_t>> shown_;  // per axis, kEllipsis where "..." goes
  std::vector<std::string> cells_;
  std::vector<size_t> widths_;  // per shown column of the last axis
  size_t next_cell_ = 0;
};

// ---------------------------------------------------------------- values

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static const char* hex = "0123456789abcdef";
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

// The name a function was defined with; empty for a lambda.
std::string plain_name(const Function& f) {
  switch (f.kind) {
    case Function::Kind::Closure: return f.def ? f.def->name : "";
    case Function::Kind::Builtin: return f.builtin ? f.builtin->name : "";
    case Function::Kind::Bound: return f.target ? plain_name(*f.target) : "";
  }
  return "";
}

std::string function_repr(const Function& f) {
  std::string name = plain_name(f);
  std::string suffix = name.empty() ? ">" : " " + name + ">";
  switch (f.kind) {
    case Function::Kind::Closure: return (f.def && f.def->is_graph ? "<graph" : "<fn") + suffix;
    case Function::Kind::Builtin: return "<built-in fn" + suffix;
    case Function::Kind::Bound: return "<bound fn" + suffix;
  }
  return "<fn>";
}

// Formats values, remembering which containers are being printed so a
// container that holds itself (r.me = r) ends instead of recursing forever.
class ValuePrinter {
 public:
  std::string repr(const Value& v) {
    if (stack_nearly_full()) throw backend::Error("the value is nested too deeply to print");
    switch (v.kind()) {
      case Value::Kind::None: return "none";
      case Value::Kind::Bool: return v.as_bool() ? "true" : "false";
      case Value::Kind::Int: return std::to_string(v.as_int());
      case Value::Kind::Float: return format_float(v.as_float());
      case Value::Kind::Str: return quote(v.as_str());
      case Value::Kind::Tensor: return format_tensor(v.as_tensor());
      case Value::Kind::List: return sequence(v.as_list().get(), v.as_list()->items, "[", "]", false);
      case Value::Kind::Tuple: return sequence(v.as_tuple().get(), v.as_tuple()->items, "(", ")", true);
      case Value::Kind::Record: return record(*v.as_record());
      case Value::Kind::Range: {
        RangeValue r = v.as_range();
        std::string s = std::to_string(r.lo) + ".." + std::to_string(r.hi);
        return r.step == 1 ? s : "range(" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + ", " +
                                     std::to_string(r.step) + ")";
      }
      case Value::Kind::Function: return v.as_function() ? function_repr(*v.as_function()) : "<fn>";
      case Value::Kind::DType: return std::string(backend::dtype_name(v.as_dtype()));
      case Value::Kind::Device: return v.as_device() ? v.as_device()->name() : backend::cpu_device()->name();
      case Value::Kind::Iterator: return "<iterator>";
    }
    return "?";
  }

 private:
  bool enter(const void* container) {
    if (std::find(active_.begin(), active_.end(), container) != active_.end()) return false;
    active_.push_back(container);
    return true;
  }

  std::string sequence(const void* self, const std::vector<Value>& items, const char* open, const char* close,
                       bool is_tuple) {
    if (!enter(self)) return std::string(open) + "..." + close;
    std::string out = open;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += ", ";
      out += repr(items[i]);
    }
    if (is_tuple && items.size() == 1) out += ',';  // (1,) is a tuple, (1) is not
    active_.pop_back();
    return out + close;
  }

  std::string record(const Record& r) {
    if (!enter(&r)) return "{...}";
    std::string out = "{";
    for (size_t i = 0; i < r.fields.size(); ++i) {
      if (i) out += ", ";
      out += symbol_name(r.fields[i].first) + ": " + repr(r.fields[i].second);
    }
    active_.pop_back();
    return out + "}";
  }

  std::vector<const void*> active_;
};

}  // namespace

std::string format_float(double v) { return python_float(v); }

std::string format_float32(float v) { return python_float(v); }

std::string format_tensor(const backend::Tensor& t, bool with_header) {
  if (!t.defined()) return "<undefined tensor>";
  if (t.ndim() == 0) {
    HostView view(t);
    return element_formatter(view, t.dtype())(0);
  }
  bool summarise = t.numel() > kSummariseAbove;
  std::string body = t.numel() == 0 ? "[]" : TensorPrinter(t, summarise).text();
  if (!with_header) return body;
  std::string header = t.type().str();
  if (summarise || t.device()->type() != backend::DeviceType::cpu) header += " " + t.device()->name();
  bool one_line = t.ndim() == 1 || t.numel() == 0;
  return header + (one_line ? " " : "\n") + body;
}

std::string to_repr(const Value& v) { return ValuePrinter().repr(v); }

std::string to_str(const Value& v) {
  if (v.is_str()) return v.as_str();
  return to_repr(v);
}

}  // namespace nn::frontend
