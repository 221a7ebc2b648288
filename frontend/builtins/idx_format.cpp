// Reading IDX files (the MNIST format, http://yann.lecun.com/exdb/mnist/):
// header checks against the file's size, then big-endian data decoded in
// chunks straight into the result's dtype.
#include "frontend/builtins/idx_format.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "frontend/builtins/file_io.h"

namespace nn::frontend::idx {
namespace {
using backend::DType;
using fileio::FileError;

struct TypeCode {
  unsigned char code;
  const char* name;
  size_t size;
};
constexpr TypeCode kTypes[] = {{0x08, "ubyte", 1}, {0x09, "sbyte", 1}, {0x0B, "short", 2},
                               {0x0C, "int", 4},   {0x0D, "float", 4}, {0x0E, "double", 8}};

uint64_t be(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

// One element of type `code` at p, as a double or an int64 (exactly).
template <class Dst>
Dst decode(unsigned char code, const unsigned char* p) {
  switch (code) {
    case 0x08:
      return Dst(p[0]);
    case 0x09:
      return Dst(int8_t(p[0]));
    case 0x0B:
      return Dst(int16_t(uint16_t(be(p, 2))));
    case 0x0C:
      return Dst(int32_t(uint32_t(be(p, 4))));
    case 0x0D: {
      uint32_t bits = uint32_t(be(p, 4));
      float f;
      std::memcpy(&f, &bits, 4);
      return Dst(f);
    }
    default: {
      uint64_t bits = be(p, 8);
      double d;
      std::memcpy(&d, &bits, 8);
      return Dst(d);
    }
  }
}

// Float to integer as nn's astype does: toward zero, saturating, NaN to 0.
template <class T>
T saturate(double d) {
  if (d != d) return 0;
  if (d <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (d >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return T(d);
}

std::string shape_text(const std::vector<uint64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + ")";
}

}  // namespace

backend::Tensor read(const std::string& path, std::optional<DType> want) {
  fileio::InputFile f(path);
  unsigned char magic[4] = {};
  const size_t have = size_t(std::min<uint64_t>(f.size(), 4));
  f.read(magic, have, "the magic number");
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08llx", (unsigned long long)be(magic, 4));
  if (have == 0 || magic[0] != 0 || (have > 1 && magic[1] != 0))
    throw FileError(path, std::string("not an IDX file (bad magic ") + (have == 4 ? hex : "") +
                              (have == 4 ? ": " : "") + "the first two bytes must be 0)");
  if (have < 4)
    throw FileError(path, "truncated: the magic number needs 4 bytes, the file has " + std::to_string(have));
  const TypeCode* type = nullptr;
  for (const TypeCode& t : kTypes)
    if (t.code == magic[2]) type = &t;
  if (!type) {
    char code[8];
    std::snprintf(code, sizeof code, "0x%02x", magic[2]);
    throw FileError(path, std::string("not an IDX file (unknown data type ") + code + " in magic " + hex + ")");
  }
  const size_t ndim = magic[3];
  if (ndim > size_t(backend::kMaxDims))
    throw FileError(path, "has " + std::to_string(ndim) + " dimensions; nn tensors have at most " +
                              std::to_string(backend::kMaxDims));
  unsigned char dim_bytes[4 * backend::kMaxDims];
  f.read(dim_bytes, 4 * ndim, "the shape (" + std::to_string(ndim) + " dimensions)");
  std::vector<uint64_t> dims;
  for (size_t i = 0; i < ndim; ++i) dims.push_back(be(dim_bytes + 4 * i, 4));

  const uint64_t bytes = fileio::data_bytes(path, dims, type->size);
  const std::string what = "the shape " + shape_text(dims) + " of " + type->name + " needs " + std::to_string(bytes) +
                           " bytes of data, the file has " + std::to_string(f.remaining()) + " after the header";
  if (bytes > f.remaining()) throw FileError(path, "truncated: " + what);
  if (bytes < f.remaining()) throw FileError(path, "data size mismatch: " + what);

  const bool floating = type->code == 0x0D || type->code == 0x0E;
  const DType dtype = want ? *want : floating ? (type->code == 0x0D ? DType::f32 : DType::f64) : DType::i64;
  backend::Tensor t = fileio::new_tensor(dims, dtype);
  const uint64_t n = bytes / type->size;
  // Decoded in chunks: the file's bytes are never held whole beside the result.
  std::vector<unsigned char> buf(size_t(std::min<uint64_t>(bytes, 1 << 20) / type->size * type->size));
  backend::visit_dtype(dtype, [&]<class T>() {
    T* out = t.data<T>();
    for (uint64_t done = 0; done < n;) {
      const uint64_t count = std::min<uint64_t>(n - done, buf.size() / type->size);
      f.read(buf.data(), count * type->size, "the data");
      for (uint64_t i = 0; i < count; ++i) {
        const unsigned char* p = buf.data() + i * type->size;
        if constexpr (std::is_same_v<T, bool>)
          out[done + i] = decode<double>(type->code, p) != 0;
        else if constexpr (std::is_integral_v<T>)
          out[done + i] = floating ? saturate<T>(decode<double>(type->code, p)) : T(decode<int64_t>(type->code, p));
        else
          out[done + i] = T(decode<double>(type->code, p));
      }
      done += count;
    }
  });
  return t;
}

}  // namespace nn::frontend::idx
