// TensorProto <-> nn tensors (tensor_proto.h).
#include "onnx/tensor_proto.h"

#include <cstdint>
#include <cstring>

#include "backend/error.h"
#include "backend/ops.h"

namespace nn::onnx_io {

using backend::DType;
using backend::Error;
using backend::Tensor;
using P = onnx::TensorProto;

std::optional<DType> dtype_of(int t) {
  switch (t) {
    case P::FLOAT: return DType::f32;
    case P::DOUBLE: return DType::f64;
    case P::FLOAT16: return DType::f16;
    case P::BFLOAT16: return DType::bf16;
    case P::BOOL: return DType::boolean;
    case P::INT32: case P::INT16: case P::INT8: case P::UINT16: case P::UINT8: return DType::i32;
    case P::INT64: case P::UINT32: case P::UINT64: return DType::i64;
    default: return std::nullopt;
  }
}

int onnx_type_of(DType t) {
  switch (t) {
    case DType::f32: return P::FLOAT;
    case DType::f64: return P::DOUBLE;
    case DType::f16: return P::FLOAT16;
    case DType::bf16: return P::BFLOAT16;
    case DType::boolean: return P::BOOL;
    case DType::i32: return P::INT32;
    case DType::i64: return P::INT64;
  }
  return P::UNDEFINED;
}

std::string onnx_type_name(int t) {
  return P::DataType_IsValid(t) ? P::DataType_Name(P::DataType(t)) : "type " + std::to_string(t);
}

namespace {

// The i-th value of raw little-endian data of ONNX type t, widened.
template <class Out>
Out raw_at(const std::string& raw, int t, int64_t i) {
  auto read = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, raw.data() + i * sizeof(v), sizeof(v));
    return v;
  };
  switch (t) {
    case P::UINT8: return Out(read(uint8_t()));
    case P::INT8: return Out(read(int8_t()));
    case P::UINT16: return Out(read(uint16_t()));
    case P::INT16: return Out(read(int16_t()));
    case P::UINT32: return Out(read(uint32_t()));
    case P::UINT64: return Out(read(uint64_t()));
    default: return Out(0);
  }
}

size_t onnx_size(int t) {
  switch (t) {
    case P::UINT8: case P::INT8: case P::BOOL: return 1;
    case P::UINT16: case P::INT16: case P::FLOAT16: case P::BFLOAT16: return 2;
    case P::FLOAT: case P::INT32: case P::UINT32: return 4;
    default: return 8;
  }
}

// nn holds u64 in i64: a value past i64's range would read as a negative
// number, so it is an Error rather than a silently different value.
int64_t u64_as_i64(uint64_t v, const std::string& what) {
  if (v > uint64_t(INT64_MAX))
    throw Error(what + " holds the UINT64 value " + std::to_string(v) +
                ", past the largest nn's i64 holds (2^63 - 1)");
  return int64_t(v);
}

}  // namespace

Tensor to_tensor(const P& p, const std::string& what) {
  if (p.data_location() == P::EXTERNAL || p.external_data_size() > 0)
    throw Error(what + " keeps its data in an external file, which nn does not read");
  const auto dtype = dtype_of(p.data_type());
  if (!dtype) throw Error(what + " has element type " + onnx_type_name(p.data_type()) + ", which nn has no dtype for");
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  int64_t count = 1;  // checked as it grows: a damaged file's dims may overflow
  for (int64_t d : dims) {
    if (d < 0) throw Error(what + " has a negative dimension");
    if (d > 0 && count > (int64_t(1) << 40) / d) throw Error(what + " has more than 2^40 elements");
    count *= d;
  }
  const backend::Shape shape = backend::Shape::of(dims);
  const int64_t n = shape.numel();
  Tensor t = Tensor::empty(shape, *dtype);
  const int type = p.data_type();
  const size_t want = size_t(n) * onnx_size(type);
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    if (raw.size() != want)
      throw Error(what + " has " + std::to_string(raw.size()) + " bytes of data; its shape " + shape.str() +
                  " needs " + std::to_string(want));
    if (*dtype == DType::boolean) {  // any byte but 0 is true; a bool holds only 0 or 1
      for (int64_t i = 0; i < n; ++i) t.data<bool>()[i] = raw[size_t(i)] != 0;
    } else if (onnx_size(type) == backend::dtype_size(*dtype)) {
      if (n) std::memcpy(t.raw_data(), raw.data(), want);
    } else if (*dtype == DType::i32) {
      for (int64_t i = 0; i < n; ++i) t.data<int32_t>()[i] = raw_at<int32_t>(raw, type, i);
    } else if (type == P::UINT64) {
      for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = u64_as_i64(raw_at<uint64_t>(raw, type, i), what);
    } else {
      for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = raw_at<int64_t>(raw, type, i);
    }
    return t;
  }
  // Typed fields: each ONNX type has one (onnx.proto's comments).
  auto check = [&](int64_t have) {
    if (have != n)
      throw Error(what + " has " + std::to_string(have) + " values; its shape " + shape.str() + " needs " +
                  std::to_string(n));
  };
  switch (type) {
    case P::FLOAT:
      check(p.float_data_size());
      std::copy(p.float_data().begin(), p.float_data().end(), t.data<float>());
      break;
    case P::DOUBLE:
      check(p.double_data_size());
      std::copy(p.double_data().begin(), p.double_data().end(), t.data<double>());
      break;
    case P::INT64:
      check(p.int64_data_size());
      std::copy(p.int64_data().begin(), p.int64_data().end(), t.data<int64_t>());
      break;
    case P::UINT32: case P::UINT64:
      check(p.uint64_data_size());
      for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = u64_as_i64(p.uint64_data(int(i)), what);
      break;
    case P::FLOAT16: case P::BFLOAT16:  // bits in int32_data
      check(p.int32_data_size());
      for (int64_t i = 0; i < n; ++i) t.data<uint16_t>()[i] = uint16_t(p.int32_data(int(i)));
      break;
    case P::BOOL:
      check(p.int32_data_size());
      for (int64_t i = 0; i < n; ++i) t.data<bool>()[i] = p.int32_data(int(i)) != 0;
      break;
    default:  // INT32 and the narrower integers
      check(p.int32_data_size());
      std::copy(p.int32_data().begin(), p.int32_data().end(), t.data<int32_t>());
      break;
  }
  return t;
}

P to_proto(const Tensor& t, const std::string& name) {
  P p;
  p.set_name(name);
  p.set_data_type(onnx_type_of(t.dtype()));
  for (int64_t d : t.shape().dims()) p.add_dims(d);
  const Tensor host = backend::to_device(t, backend::cpu_device());
  p.set_raw_data(std::string(static_cast<const char*>(host.raw_data()), host.nbytes()));
  return p;
}

}  // namespace nn::onnx_io
