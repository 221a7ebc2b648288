// The public embedding API (include/nn/nn.h) over the frontend's interpreter:
// values and tensors wrap the internal ones; every internal failure becomes
// an nn::Error carrying the rendered diagnostic.
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

namespace nn {

namespace fe = nn::frontend;
namespace be = nn::backend;

struct Tensor::Impl {
  be::Tensor t;
};
struct Value::Impl {
  fe::Value v;
};

namespace {

be::DType to_backend(DType d) { return be::DType(uint8_t(d)); }
DType from_backend(be::DType d) { return DType(uint8_t(d)); }

fe::Value to_internal(const Value& v) { return v.impl() ? v.impl()->v : fe::Value(); }

[[noreturn]] void throw_plain(const std::string& message) {
  throw Error("error: " + message + "\n", message);
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

be::Shape to_shape(const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 0) throw_plain("a tensor's shape cannot have a negative dimension");
  return be::Shape::of(shape);
}

Error to_error(const fe::Interpreter& vm, fe::ScriptError e) {
  // A script function the host called was called from no source line.
  const std::string unknown = ", called at <unknown>";
  for (auto& d : e.diagnostics())
    for (auto& note : d.notes)
      if (note.size() >= unknown.size() && note.compare(note.size() - unknown.size(), unknown.size(), unknown) == 0)
        note = note.substr(0, note.size() - unknown.size()) + ", called by the host";
  std::string rendered = vm.render(e);
  if (rendered.empty()) rendered = std::string("error: ") + e.what() + "\n";
  if (e.diagnostics().empty()) return Error(rendered, e.what());
  const fe::Diagnostic& d = e.diagnostics().front();
  std::string file;
  int line = 0, col = 0;
  if (d.span.valid()) {
    auto& sources = const_cast<fe::Interpreter&>(vm).sources();
    const fe::SourceFile& f = sources.file(d.span.file);
    fe::LineCol lc = f.line_col(d.span.begin);
    file = f.path();
    line = int(lc.line);
    col = int(lc.col);
  }
  return Error(rendered, d.message, file, line, col);
}

// Runs f, turning every internal failure into an nn::Error. vm may be null
// (while the interpreter is being built).
template <class F> auto guarded(const fe::Interpreter* vm, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const fe::ScriptError& e) {
    if (vm) throw to_error(*vm, e);
    throw_plain(e.what());
  } catch (const fe::ExitRequest& e) {
    std::string m = "the script called exit(" + std::to_string(e.code) + ")";
    throw Error("error: " + m + "\n", m, {}, 0, 0, e.code);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw_plain("out of memory");
  } catch (const std::exception& e) {
    throw_plain(e.what());
  }
}

}  // namespace

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
  be::Shape s = to_shape(shape);
  if (!ptr && s.numel() > 0) throw_plain("Tensor::from_blob: a null pointer for a non-empty tensor");
  return Tensor(std::make_shared<Impl>(Impl{be::Tensor::from_blob(ptr, s, to_backend(dtype))}));
}

Tensor Tensor::copy_from(const void* ptr, std::vector<int64_t> shape, DType dtype) {
  be::Shape s = to_shape(shape);
  if (!ptr && s.numel() > 0) throw_plain("Tensor::copy_from: a null pointer for a non-empty tensor");
  return guarded(nullptr, [&] {
    be::Tensor t = be::Tensor::empty(s, to_backend(dtype));
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
Value::Value(std::string s) : impl_(std::make_shared<const Impl>(Impl{fe::Value(std::move(s))})) {}
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
  return Value(std::make_shared<const Impl>(Impl{fe::Value(fe::make_list(std::move(vs)))}));
}
Value Value::tuple(std::vector<Value> items) {
  std::vector<fe::Value> vs;
  for (auto& v : items) vs.push_back(to_internal(v));
  return Value(std::make_shared<const Impl>(Impl{fe::Value(fe::make_tuple(std::move(vs)))}));
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
std::string Value::str() const { return impl_ ? fe::to_str(impl_->v) : "none"; }

namespace {
Value wrap(fe::Value v) { return Value(std::make_shared<const Value::Impl>(Value::Impl{std::move(v)})); }
}  // namespace

// ------------------------------------------------------------------ Args

Args::Args(std::string function_name, std::vector<Value> values, const void* context)
    : name_(std::move(function_name)), values_(std::move(values)), context_(context) {}

void Args::fail(const std::string& message) const {
  // In a call from a script: a diagnostic at the call; else a plain error.
  if (context_) fe::fail(static_cast<const fe::Args*>(context_)->call_span(), name_ + ": " + message);
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
  if (!context_) fail(i, "expected a tensor, got " + v.kind_name());
  auto* a = static_cast<const fe::Args*>(context_);
  try {
    be::Tensor t = const_cast<fe::Args*>(a)->vm().to_tensor(to_internal(v), a->call_span());
    return Tensor(std::make_shared<Tensor::Impl>(Tensor::Impl{std::move(t)}));
  } catch (const fe::ScriptError& e) {
    fail(i, std::string("expected a tensor: ") + e.what());
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

// ------------------------------------------------------------------ Interpreter

struct Interpreter::Impl {
  Options opts;
  std::unique_ptr<fe::Interpreter> vm;
  // The CPU pool's limit is process-wide: each call sets this interpreter's.
  void enter() const { be::cpu_device()->pool().set_limit(opts.max_memory_bytes); }
};

Interpreter::Interpreter(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(options);
  const Options& o = impl_->opts;
  if (!o.device.empty() && !be::find_device(o.device))
    throw_plain("device `" + o.device + "` is not available: " + be::device_unavailable_reason(o.device));
  if (o.threads < 0) throw_plain("Options::threads cannot be negative");
  fe::InterpreterOptions fo;
  fo.threads = o.threads;
  fo.device = o.device.empty() ? "cpu" : o.device;
  fo.seed = o.seed;
  fo.search_paths = o.search_paths;
  fo.allow_files = o.allow_files;
  fo.max_memory_bytes = o.max_memory_bytes;
  fo.args = o.args;
  fo.out = o.out;
  impl_->enter();
  impl_->vm = guarded(nullptr, [&] { return std::make_unique<fe::Interpreter>(std::move(fo)); });
}

Interpreter::~Interpreter() = default;
Interpreter::Interpreter(Interpreter&&) noexcept = default;
Interpreter& Interpreter::operator=(Interpreter&&) noexcept = default;

const Options& Interpreter::options() const { return impl_->opts; }

Value Interpreter::run_file(const std::string& path) {
  impl_->enter();
  return guarded(impl_->vm.get(), [&] { return wrap(impl_->vm->run_file(path)); });
}

Value Interpreter::eval(const std::string& code) {
  impl_->enter();
  return guarded(impl_->vm.get(), [&] { return wrap(impl_->vm->run_code("<eval>", code)); });
}

void Interpreter::set(const std::string& name, Value v) {
  impl_->vm->set_global(name, to_internal(v));
}

bool Interpreter::has(const std::string& name) const { return impl_->vm->find_global(name) != nullptr; }

Value Interpreter::get(const std::string& name) const {
  fe::Value* v = impl_->vm->find_global(name);
  if (!v) throw_plain("no global named `" + name + "`");
  return wrap(*v);
}

Value Interpreter::call(const std::string& name, std::vector<Value> args) {
  Value f = get(name);
  if (!f.is_function() && !f.is_record()) throw_plain("`" + name + "` is " + f.kind_name() + ", not a function");
  return call(f, std::move(args));
}

Value Interpreter::call(const Value& fn, std::vector<Value> args) {
  if (!fn.is_function() && !fn.is_record()) throw_plain("cannot call " + fn.kind_name() + ": it is not a function");
  impl_->enter();
  std::vector<fe::Value> positional;
  for (auto& a : args) positional.push_back(to_internal(a));
  return guarded(impl_->vm.get(), [&] { return wrap(impl_->vm->call(to_internal(fn), std::move(positional))); });
}

void Interpreter::define(const std::string& name, HostFunction fn) {
  if (!fn) throw_plain("define(`" + name + "`): an empty function");
  auto b = std::make_shared<fe::Builtin>();
  b->name = name;
  b->variadic = true;
  b->fn = [name, fn = std::move(fn)](fe::Args& a) -> fe::Value {
    std::vector<Value> values;
    for (auto& v : a.rest()) values.push_back(wrap(v));
    Args args(name, std::move(values), &a);
    try {
      return to_internal(fn(std::move(args)));
    } catch (const fe::ScriptError&) {
      throw;  // a diagnostic already (Args accessors, nested calls)
    } catch (const fe::ExitRequest&) {
      throw;
    } catch (const Error& e) {
      fe::fail(a.call_span(), name + ": " + e.message());
    } catch (const std::exception& e) {
      fe::fail(a.call_span(), "host function `" + name + "` failed: " + e.what());
    } catch (...) {
      fe::fail(a.call_span(), "host function `" + name + "` failed with an unknown exception");
    }
  };
  impl_->vm->define_builtin(std::move(b));
}

}  // namespace nn
