// The public embedding API (include/nn/nn.h), its values: errors, tensors,
// values and host functions' arguments, wrapping the internal ones
// (embed_interpreter.cpp holds the interpreter).
#include <cstring>
#include <new>
#include <nn/nn.h>

#include "backend/device.h"
#include "backend/error.h"
#include "backend/ops.h"
#include "backend/tensor.h"
#include "frontend/diagnostic.h"
#include "frontend/format.h"
#include "frontend/function.h"
#include "frontend/interpreter.h"
#include "frontend/value.h"
#include "frontend/embed_internal.h"

namespace nn {

using namespace embed;

// ------------------------------------------------------------------ Error

Error::Error(std::string rendered, std::string message, std::string file, int line, int column,
             std::optional<int> exit_code)
    : std::runtime_error(std::move(rendered)),
      message_(std::move(message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      exit_code_(exit_code) {}

const char* dtype_name(DType t) {
  static const std::string names[] = {"f32", "f64", "i32", "i64", "bool", "f16", "bf16"};
  return names[uint8_t(t)].c_str();
}
size_t dtype_size(DType t) { return be::dtype_size(to_backend(t)); }
const char* version() { return NN_VERSION; }

// ------------------------------------------------------------------ Tensor

Tensor::Tensor() = default;
Tensor::~Tensor() = default;
Tensor::Tensor(const Tensor&) = default;
Tensor::Tensor(Tensor&&) noexcept = default;
Tensor& Tensor::operator=(const Tensor&) = default;
Tensor& Tensor::operator=(Tensor&&) noexcept = default;
Tensor::Tensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Tensor Tensor::from_blob(void* ptr, std::vector<int64_t> shape, DType dtype) {
  // The shape is checked first (too many dimensions, or more bytes than the
  // address space holds): its element count is read only once it fits.
  be::Tensor t = guarded(nullptr, [&] {
    try {
      return be::Tensor::from_blob(ptr, to_shape(shape), to_backend(dtype));
    } catch (const be::Error& e) {
      throw_plain(std::string("Tensor::from_blob: ") + e.what());
    }
  });
  if (!ptr && t.nbytes() > 0) throw_plain("Tensor::from_blob: a null pointer for a non-empty tensor");
  return Tensor(std::make_shared<Impl>(Impl{std::move(t)}));
}

Tensor Tensor::copy_from(const void* ptr, std::vector<int64_t> shape, DType dtype) {
  return copy_counted(ptr, SIZE_MAX, std::move(shape), dtype);
}

// count: the elements at ptr, SIZE_MAX where the caller does not say.
Tensor Tensor::copy_counted(const void* ptr, size_t count, std::vector<int64_t> shape, DType dtype) {
  return guarded(nullptr, [&] {
    be::Tensor t = be::Tensor::empty(to_shape(shape), to_backend(dtype));  // no memory taken yet
    if (!ptr && t.nbytes() > 0) throw_plain("Tensor::copy_from: a null pointer for a non-empty tensor");
    if (count != SIZE_MAX && count != size_t(t.numel()))
      throw_plain("Tensor::copy_from: the vector holds " + std::to_string(count) + " elements, the shape " +
                  t.shape().str() + " " + std::to_string(t.numel()));
    if (t.nbytes()) std::memcpy(t.raw_data(), ptr, t.nbytes());
    return Tensor(std::make_shared<Impl>(Impl{std::move(t)}));
  });
}

static const be::Tensor& checked(const Tensor::Impl* impl) {
  if (!impl || !impl->t.defined()) throw_plain("the tensor is undefined (default-constructed)");
  return impl->t;
}

bool Tensor::defined() const { return impl_ && impl_->t.defined(); }
DType Tensor::dtype() const { return from_backend(checked(impl_.get()).dtype()); }
std::vector<int64_t> Tensor::shape() const {
  const be::Shape& s = checked(impl_.get()).shape();
  std::vector<int64_t> out;
  for (int i = 0; i < s.ndim(); ++i) out.push_back(s[i]);
  return out;
}
int Tensor::ndim() const { return checked(impl_.get()).ndim(); }
int64_t Tensor::numel() const { return checked(impl_.get()).numel(); }
size_t Tensor::nbytes() const { return checked(impl_.get()).nbytes(); }
std::string Tensor::device() const { return checked(impl_.get()).device()->name(); }
std::string Tensor::type() const { return checked(impl_.get()).type().str(); }

void* Tensor::raw_data() {
  be::Tensor& t = const_cast<be::Tensor&>(checked(impl_.get()));
  if (t.device() != be::cpu_device())
    throw_plain("the tensor is on " + t.device()->name() + ", not the cpu: its data cannot be read directly");
  return guarded(nullptr, [&] { return t.raw_data(); });
}

void* Tensor::checked_data(DType expected) {
  const be::Tensor& t = checked(impl_.get());
  if (from_backend(t.dtype()) != expected)
    throw_plain("the tensor is " + t.type().str() + ", not " + dtype_name(expected) + ": data<T>() must match its dtype");
  return raw_data();
}

std::vector<double> Tensor::to_vector() const {
  const be::Tensor& t = checked(impl_.get());
  return guarded(nullptr, [&] {
    be::Tensor d = be::astype(t, be::DType::f64);
    if (d.device() != be::cpu_device()) d = be::to_device(d, be::cpu_device());
    const double* p = d.data<double>();
    return std::vector<double>(p, p + d.numel());
  });
}

double Tensor::item() const {
  const be::Tensor& t = checked(impl_.get());
  if (t.numel() != 1) throw_plain("item() of a tensor " + t.type().str() + " (it needs exactly 1 element)");
  return guarded(nullptr, [&] { return t.item_double(); });
}

// ------------------------------------------------------------------ Value

Value::Value() = default;
Value::Value(bool b) : impl_(std::make_shared<const Impl>(Impl{fe::Value(b)})) {}
Value::Value(int i) : impl_(std::make_shared<const Impl>(Impl{fe::Value(int64_t(i))})) {}
Value::Value(int64_t i) : impl_(std::make_shared<const Impl>(Impl{fe::Value(i)})) {}
Value::Value(double f) : impl_(std::make_shared<const Impl>(Impl{fe::Value(f)})) {}
// Strings, lists and tuples count against the memory cap of the interpreter
// running, when a host function makes them: its OutOfMemory, an nn::Error.
Value::Value(std::string s)
    : impl_(guarded(nullptr, [&] { return std::make_shared<const Impl>(Impl{fe::Value(std::move(s))}); })) {}
Value::Value(const char* s) : Value(std::string(s ? s : "")) {}
Value::Value(Tensor t) {
  if (!t.defined()) throw_plain("an undefined tensor cannot become a value");
  impl_ = std::make_shared<const Impl>(Impl{fe::Value(t.impl()->t)});
}
Value::Value(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Value::~Value() = default;
Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;

Value Value::list(std::vector<Value> items) {
  std::vector<fe::Value> vs;
  for (auto& v : items) vs.push_back(to_internal(v));
  return guarded(nullptr, [&] { return wrap(fe::Value(fe::make_list(std::move(vs)))); });
}
Value Value::tuple(std::vector<Value> items) {
  std::vector<fe::Value> vs;
  for (auto& v : items) vs.push_back(to_internal(v));
  return guarded(nullptr, [&] { return wrap(fe::Value(fe::make_tuple(std::move(vs)))); });
}
Value Value::record(std::vector<std::pair<std::string, Value>> fields) {
  fe::RecordPtr r = fe::make_record();
  for (auto& [k, v] : fields) r->set(fe::intern(k), to_internal(v));
  return Value(std::make_shared<const Impl>(Impl{fe::Value(r)}));
}

Value::Kind Value::kind() const {
  if (!impl_) return Kind::none;
  switch (impl_->v.kind()) {
    case fe::Value::Kind::None: return Kind::none;
    case fe::Value::Kind::Bool: return Kind::boolean;
    case fe::Value::Kind::Int: return Kind::integer;
    case fe::Value::Kind::Float: return Kind::floating;
    case fe::Value::Kind::Str: return Kind::string;
    case fe::Value::Kind::Tensor: return Kind::tensor;
    case fe::Value::Kind::List: return Kind::list;
    case fe::Value::Kind::Tuple: return Kind::tuple;
    case fe::Value::Kind::Record: return Kind::record;
    case fe::Value::Kind::Function: return Kind::function;
    default: return Kind::other;
  }
}

std::string Value::kind_name() const { return impl_ ? fe::type_name(impl_->v) : "none"; }

namespace {
[[noreturn]] void wrong_kind(const Value& v, const char* wanted) {
  throw_plain(std::string("the value is ") + (v.impl() ? fe::a_type_name(v.impl()->v) : std::string("none")) +
              ", not " + wanted);
}
}  // namespace

bool Value::as_bool() const {
  if (!is_bool()) wrong_kind(*this, "a bool");
  return impl_->v.as_bool();
}
int64_t Value::as_int() const {
  if (!is_int()) wrong_kind(*this, "an int");
  return impl_->v.as_int();
}
double Value::as_float() const {
  if (is_int()) return double(impl_->v.as_int());
  if (!is_float()) wrong_kind(*this, "a float");
  return impl_->v.as_float();
}
const std::string& Value::as_string() const {
  if (!is_string()) wrong_kind(*this, "a string");
  return impl_->v.as_str();
}
Tensor Value::tensor() const {
  if (!is_tensor()) wrong_kind(*this, "a tensor");
  return Tensor(std::make_shared<Tensor::Impl>(Tensor::Impl{impl_->v.as_tensor()}));
}
std::vector<Value> Value::items() const {
  const std::vector<fe::Value>* items = nullptr;
  if (is_list()) items = &impl_->v.as_list()->items;
  else if (is_tuple()) items = &impl_->v.as_tuple()->items;
  else wrong_kind(*this, "a list or a tuple");
  std::vector<Value> out;
  for (const auto& v : *items) out.push_back(Value(std::make_shared<const Impl>(Impl{v})));
  return out;
}
std::vector<std::pair<std::string, Value>> Value::fields() const {
  if (!is_record()) wrong_kind(*this, "a record");
  std::vector<std::pair<std::string, Value>> out;
  for (const auto& [k, v] : impl_->v.as_record()->fields)
    out.emplace_back(fe::symbol_name(k), Value(std::make_shared<const Impl>(Impl{v})));
  return out;
}
Value Value::field(const std::string& name) const {
  if (!is_record()) wrong_kind(*this, "a record");
  const fe::Value* v = impl_->v.as_record()->find(fe::intern(name));
  if (!v) throw_plain("the record has no field `" + name + "`");
  return Value(std::make_shared<const Impl>(Impl{*v}));
}
std::string Value::str() const {
  return guarded(nullptr, [&] { return impl_ ? fe::to_str(impl_->v) : std::string("none"); });
}


// ------------------------------------------------------------------ Args

Args::Args(std::string function_name, std::vector<Value> values, const void* context)
    : Args(std::move(function_name), std::move(values), std::make_shared<const void*>(context)) {}
Args::Args(std::string function_name, std::vector<Value> values, std::shared_ptr<const void*> call)
    : name_(std::move(function_name)), values_(std::move(values)), call_(std::move(call)) {}

void Args::fail(const std::string& message) const {
  // In a call from a script: a diagnostic at the call; else a plain error.
  if (context()) fe::fail(static_cast<const fe::Args*>(context())->call_span(), name_ + ": " + message);
  throw_plain(name_ + ": " + message);
}

void Args::fail(size_t i, const std::string& message) const {
  fail("argument " + std::to_string(i + 1) + ": " + message);
}

void Args::expect(size_t count) const {
  if (values_.size() != count)
    fail("takes " + plural(count, "argument") + " but " + std::to_string(values_.size()) +
         (values_.size() == 1 ? " was" : " were") + " given");
}

void Args::expect(size_t min, size_t max) const {
  // The host's own mistake, whatever the script passed: said so, not
  // blamed on the script's call.
  if (min > max)
    throw_plain("Args::expect(" + std::to_string(min) + ", " + std::to_string(max) +
                "): the minimum is greater than the maximum (a mistake in the host function)");
  if (min == max) return expect(min);
  if (values_.size() < min || values_.size() > max)
    fail("takes " + std::to_string(min) + " to " + plural(max, "argument") + " but " +
         std::to_string(values_.size()) + (values_.size() == 1 ? " was" : " were") + " given");
}

const Value& Args::operator[](size_t i) const {
  if (i >= values_.size())
    fail("is missing argument " + std::to_string(i + 1) + " (" + std::to_string(values_.size()) +
         (values_.size() == 1 ? " was" : " were") + " given)");
  return values_[i];
}

Tensor Args::tensor(size_t i) const {
  const Value& v = (*this)[i];
  if (v.is_tensor()) return v.tensor();
  if (!context()) fail(i, "expected a tensor, got " + v.kind_name());
  auto* a = static_cast<const fe::Args*>(context());
  try {
    be::Tensor t = const_cast<fe::Args*>(a)->vm().to_tensor(to_internal(v), a->call_span());
    return Tensor(std::make_shared<Tensor::Impl>(Tensor::Impl{std::move(t)}));
  } catch (const fe::ScriptError& e) {
    fail(i, e.what());  // "expected a tensor or a number, got a string"
  }
}

int64_t Args::integer(size_t i) const {
  const Value& v = (*this)[i];
  if (v.is_int()) return v.as_int();
  if (v.is_tensor()) {
    const be::Tensor& t = v.impl()->v.as_tensor();
    if (t.numel() == 1 && (t.dtype() == be::DType::i32 || t.dtype() == be::DType::i64)) return t.item_int();
  }
  fail(i, "expected an int, got " + v.kind_name());
}

double Args::number(size_t i) const {
  const Value& v = (*this)[i];
  if (v.is_int() || v.is_float() || v.is_bool()) return v.impl()->v.as_number();
  if (v.is_tensor() && v.impl()->v.as_tensor().numel() == 1) return v.impl()->v.as_tensor().item_double();
  fail(i, "expected a number, got " + v.kind_name());
}

bool Args::boolean(size_t i) const {
  const Value& v = (*this)[i];
  if (v.is_bool()) return v.as_bool();
  fail(i, "expected a bool, got " + v.kind_name());
}

std::string Args::str(size_t i) const {
  const Value& v = (*this)[i];
  if (v.is_string()) return v.as_string();
  fail(i, "expected a string, got " + v.kind_name());
}

}  // namespace nn
