// Reading and writing NumPy .npy files. The header is a Python dict literal
// ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }); a small
// parser of that literal subset reads it, so no Python is needed.
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include "frontend/builtins/npy_format.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "backend/ops.h"
#include "backend/untraced.h"
#include "frontend/builtins/file_io.h"

namespace nn::frontend::npy {
namespace {
using backend::DType;
using fileio::FileError;

static_assert(std::endian::native == std::endian::little, "the .npy code assumes a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// Headers longer than this are refused before they are read: a real header
// is under 200 bytes (NumPy itself refuses over 10000 by default).
constexpr uint64_t kMaxHeader = 1 << 20;

// One value of the header dict.
struct PyValue {
  enum Kind { str, boolean, tuple, other } kind = other;
  std::string s;
  bool b = false;
  std::vector<uint64_t> ints;
};

// A parser of the header's Python literal: a dict of string keys whose values
// are strings, True/False or tuples of non-negative ints.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::string_view text) : path_(path), t_(text) {}

  std::vector<std::pair<std::string, PyValue>> dict() {
    std::vector<std::pair<std::string, PyValue>> items;
    expect('{');
    while (true) {
      if (peek() == '}') break;
      std::string key = string();
      expect(':');
      items.emplace_back(std::move(key), value());
      if (peek() == ',') {
        ++i_;
        continue;
      }
      break;
    }
    expect('}');
    return items;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    std::string near(t_.substr(i_, 20));
    throw FileError(path_, "bad header: " + what + (i_ < t_.size() ? " at `" + near + "`" : " at its end"));
  }
  char peek() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
    return i_ < t_.size() ? t_[i_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) bad(std::string("expected `") + c + "`");
    ++i_;
  }
  std::string string() {
    char q = peek();
    if (q != '\'' && q != '"') bad("expected a string");
    size_t end = t_.find(q, ++i_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string s(t_.substr(i_, end - i_));
    i_ = end + 1;
    return s;
  }
  uint64_t integer() {
    uint64_t v = 0;
    size_t start = i_;
    while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') {
      if (!fileio::checked_mul(v, 10, v) || __builtin_add_overflow(v, uint64_t(t_[i_] - '0'), &v))
        bad("a dimension too large");
      ++i_;
    }
    if (i_ == start) bad("expected a non-negative integer");
    if (i_ < t_.size() && t_[i_] == 'L') ++i_;  // Python 2 long literals, in old files
    return v;
  }
  PyValue value() {
    PyValue v;
    char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = PyValue::str;
      v.s = string();
    } else if (t_.substr(i_).starts_with("True") || t_.substr(i_).starts_with("False")) {
      v.kind = PyValue::boolean;
      v.b = t_[i_] == 'T';
      i_ += v.b ? 4 : 5;
    } else if (c == '(') {
      v.kind = PyValue::tuple;
      ++i_;
      while (peek() != ')') {
        v.ints.push_back(integer());
        if (peek() == ',')
          ++i_;
        else if (peek() != ')')
          bad("expected `,` or `)`");
      }
      ++i_;
    } else {
      skip_nested();  // a list (structured dtype) or something else: the caller names it
    }
    return v;
  }
  // Skips one bracketed or bare value up to the next top-level `,` or `}`.
  void skip_nested() {
    int depth = 0;
    for (; i_ < t_.size(); ++i_) {
      char c = t_[i_];
      if (c == '[' || c == '(' || c == '{')
        ++depth;
      else if (c == ']' || c == ')' || c == '}') {
        if (depth == 0) return;
        --depth;
      } else if (c == ',' && depth == 0) {
        return;
      }
    }
  }

  const std::string& path_;
  std::string_view t_;
  size_t i_ = 0;
};

std::string shape_repr(const std::vector<uint64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

// The dtype of a descr string, or a FileError saying why nn cannot read it.
DType parse_descr(const std::string& path, const std::string& d) {
  const char* supported = " (nn reads <f2 <f4 <f8 <i4 <i8 |b1)";
  if (d.size() >= 2 && d.substr(1) == "b1") return DType::boolean;  // one byte: any byte order is fine
  if (d.size() == 3 && (d[0] == '<' || d[0] == '=')) {
    std::string k = d.substr(1);
    if (k == "f2") return DType::f16;
    if (k == "f4") return DType::f32;
    if (k == "f8") return DType::f64;
    if (k == "i4") return DType::i32;
    if (k == "i8") return DType::i64;
  }
  if (!d.empty() && d[0] == '>') throw FileError(path, "big-endian data ('" + d + "') is not supported" + supported);
  throw FileError(path, "unsupported dtype '" + d + "'" + supported);
}

const char* descr_of(DType t) {
  switch (t) {
    case DType::f16:
      return "<f2";
    case DType::f32:
      return "<f4";
    case DType::f64:
      return "<f8";
    case DType::i32:
      return "<i4";
    case DType::i64:
      return "<i8";
    case DType::boolean:
      return "|b1";
    default:
      return nullptr;
  }
}

uint32_t le32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

backend::Tensor read(const std::string& path) {
  fileio::InputFile f(path);
  // Magic first, so that a file of another kind is named as such even when
  // it is shorter than the preamble.
  unsigned char pre[kMagicLen + 2] = {};
  const size_t have = size_t(std::min<uint64_t>(f.size(), sizeof pre));
  f.read(pre, have, "the preamble");
  if (std::memcmp(pre, kMagic, std::min(have, kMagicLen)) != 0 || have == 0)
    throw FileError(path, "not an .npy file (it does not start with \\x93NUMPY)");
  if (have < sizeof pre)
    throw FileError(path, "truncated: the preamble needs 8 bytes, the file has " + std::to_string(have));
  const int major = pre[6], minor = pre[7];
  if (!(major >= 1 && major <= 3) || minor != 0)
    throw FileError(path, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                              " (nn reads 1.0, 2.0 and 3.0)");
  unsigned char len_bytes[4] = {0, 0, 0, 0};
  f.read(len_bytes, major == 1 ? 2 : 4, "the header length");
  const uint64_t header_len = le32(len_bytes);
  if (header_len > kMaxHeader)
    throw FileError(path, "header too long (" + std::to_string(header_len) + " bytes; nn reads up to " +
                              std::to_string(kMaxHeader) + ")");
  std::string header(size_t(header_len), '\0');
  f.read(header.data(), header_len, "the header");

  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<uint64_t>> shape;
  for (auto& [key, v] : HeaderParser(path, header).dict()) {
    if (key == "descr") {
      if (v.kind != PyValue::str) throw FileError(path, "structured dtypes are not supported (descr is not a string)");
      descr = v.s;
    } else if (key == "fortran_order") {
      if (v.kind != PyValue::boolean) throw FileError(path, "bad header: fortran_order is not True or False");
      fortran = v.b;
    } else if (key == "shape") {
      if (v.kind != PyValue::tuple) throw FileError(path, "bad header: shape is not a tuple of integers");
      shape = v.ints;
    }
  }
  for (auto [have, name] :
       {std::pair{descr.has_value(), "descr"}, {fortran.has_value(), "fortran_order"}, {shape.has_value(), "shape"}})
    if (!have) throw FileError(path, std::string("bad header: no '") + name + "' key");
  const DType dtype = parse_descr(path, *descr);
  // The data size is checked against the file before any allocation.
  const uint64_t bytes = fileio::data_bytes(path, *shape, backend::dtype_size(dtype));
  const std::string what = "the shape " + shape_repr(*shape) + " of '" + *descr + "' needs " + std::to_string(bytes) +
                           " bytes of data, the file has " + std::to_string(f.remaining()) + " after the header";
  if (bytes > f.remaining()) throw FileError(path, "truncated: " + what);
  if (bytes < f.remaining()) throw FileError(path, "data size mismatch: " + what);
  // Fortran order (NumPy's save of a transposed array) holds the array of
  // the reversed shape in C order: read so, then its axes are reversed.
  std::vector<uint64_t> stored = *shape;
  if (*fortran) std::reverse(stored.begin(), stored.end());
  backend::Tensor t = fileio::new_tensor(stored, dtype);
  if (bytes) f.read(t.raw_data(), bytes, "the data");
  if (dtype == DType::boolean) {
    // A bool must hold 0 or 1; NumPy files should, but any nonzero byte is true.
    auto* p = static_cast<unsigned char*>(t.raw_data());
    for (uint64_t i = 0; i < bytes; ++i) p[i] = p[i] != 0;
  }
  if (*fortran && t.ndim() > 1) {
    std::vector<int64_t> reversed;
    for (int64_t d = t.ndim() - 1; d >= 0; --d) reversed.push_back(d);
    backend::Untraced now;  // a file's values, even while a graph is traced
    t = backend::permute(t, reversed);
  }
  return t;
}

void write(const backend::Tensor& x_in, const std::string& path) {
  const char* descr = descr_of(x_in.dtype());
  if (!descr)
    throw backend::Error("save_npy: " + std::string(backend::dtype_name(x_in.dtype())) +
                         " tensors cannot be written (nn writes f16 f32 f64 i32 i64 bool; NumPy has no bf16)");
  backend::Tensor x = fileio::on_cpu(x_in);
  std::vector<uint64_t> dims;
  for (int64_t d : x.shape()) dims.push_back(uint64_t(d));
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape_repr(dims) + ", }";
  // NumPy pads the header with spaces and ends it with a newline so that the
  // data starts on a 64-byte boundary; version 2.0 only when 1.0's 16-bit
  // length cannot hold the header.
  size_t preamble = kMagicLen + 2 + 2;
  size_t padded = (preamble + header.size() + 1 + 63) / 64 * 64 - preamble;
  int major = 1;
  if (padded > 0xFFFF) {
    major = 2;
    preamble = kMagicLen + 2 + 4;
    padded = (preamble + header.size() + 1 + 63) / 64 * 64 - preamble;
  }
  header.append(padded - header.size() - 1, ' ');
  header += '\n';
  std::string pre(kMagic, kMagicLen);
  pre += char(major);
  pre += char(0);
  const uint64_t n = header.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) pre += char((n >> (8 * i)) & 0xFF);

  fileio::AtomicFile out(path);
  out.write(pre.data(), pre.size());
  out.write(header.data(), header.size());
  if (x.nbytes()) out.write(x.raw_data(), x.nbytes());
  out.commit();
}

}  // namespace nn::frontend::npy
