// nn.h: the public C++ embedding API of nn (SPEC §12). Standard headers only;
// everything else is behind pointers to implementation (pimpl).
//
//   #include <nn/nn.h>
//   nn::Interpreter vm;                     // nn::Options: threads, device, ...
//   vm.run_file("model.nn");
//   vm.set("x", nn::Tensor::from_blob(ptr, {64, 784}, nn::f32));  // no copy
//   nn::Value y = vm.eval("predict(x)");    // throws nn::Error with the diagnostic
//   float* out = y.tensor().data<float>();
//   vm.define("host_fn", [](nn::Args a) -> nn::Value { return a.number(0) * 2; });
//
// Interpreters are independent; one interpreter is used by one thread at a
// time. Values and tensors may outlive the interpreter that made them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nn {

// ------------------------------------------------------------------ Error

// Every failure of a script (syntax, name, type, shape, dtype, memory, file,
// a host function's exception...) reaches the host as an nn::Error. what() is
// the rendered diagnostic as the nn program prints it.
class Error : public std::runtime_error {
 public:
  Error(std::string rendered, std::string message, std::string file = {}, int line = 0, int column = 0,
        std::optional<int> exit_code = std::nullopt);
  // The first diagnostic's message, without location or notes.
  const std::string& message() const { return message_; }
  // Where it points: file ("<eval>" for code given to eval), 1-based line and
  // column; empty / 0 when it has no location.
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  // Set when the script called exit(code).
  std::optional<int> exit_code() const { return exit_code_; }

 private:
  std::string message_, file_;
  int line_ = 0, column_ = 0;
  std::optional<int> exit_code_;
};

// ------------------------------------------------------------------ DType

enum class DType : uint8_t { f32, f64, i32, i64, boolean, f16, bf16 };
inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType boolean = DType::boolean;
inline constexpr DType f16 = DType::f16;
inline constexpr DType bf16 = DType::bf16;

const char* dtype_name(DType t);  // "f32", "bool", ...
size_t dtype_size(DType t);       // bytes per element

// The dtype whose elements are a T (float, double, int32_t, int64_t, bool).
template <class T> constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::f32;
  else if constexpr (std::is_same_v<T, double>) return DType::f64;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::i32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::i64;
  else if constexpr (std::is_same_v<T, bool>) return DType::boolean;
  else static_assert(sizeof(T) == 0, "nn: no dtype for this element type (use raw_data())");
}

// ------------------------------------------------------------------ Tensor

class Tensor {
 public:
  struct Impl;
  Tensor();  // undefined (no data)
  ~Tensor();
  Tensor(const Tensor&);
  Tensor(Tensor&&) noexcept;
  Tensor& operator=(const Tensor&);
  Tensor& operator=(Tensor&&) noexcept;

  // A tensor over memory the caller owns and keeps alive (and unchanged while
  // scripts use it); nothing is copied. ptr must be suitably aligned for dtype.
  static Tensor from_blob(void* ptr, std::vector<int64_t> shape, DType dtype);
  // A tensor holding a copy of the data at ptr.
  static Tensor copy_from(const void* ptr, std::vector<int64_t> shape, DType dtype);
  template <class T> static Tensor from_blob(T* ptr, std::vector<int64_t> shape) {
    return from_blob(static_cast<void*>(ptr), std::move(shape), dtype_of<T>());
  }
  // Throws nn::Error when v does not hold exactly the shape's elements.
  template <class T> static Tensor copy_from(const std::vector<T>& v, std::vector<int64_t> shape) {
    return copy_counted(static_cast<const void*>(v.data()), v.size(), std::move(shape), dtype_of<T>());
  }

  bool defined() const;
  DType dtype() const;
  std::vector<int64_t> shape() const;
  int ndim() const;
  int64_t numel() const;
  size_t nbytes() const;
  std::string device() const;  // "cpu", "cuda:0"
  std::string type() const;    // "f32[2, 3]"

  // The elements of a CPU tensor (row-major, contiguous). Throws nn::Error
  // when T does not match the dtype or the tensor is not on the CPU.
  template <class T> T* data() { return static_cast<T*>(checked_data(dtype_of<T>())); }
  template <class T> const T* data() const {
    return static_cast<const T*>(const_cast<Tensor*>(this)->checked_data(dtype_of<T>()));
  }
  void* raw_data();  // any dtype; throws unless on the CPU
  // Copies of the elements converted to double / the one element (numel 1).
  std::vector<double> to_vector() const;
  double item() const;

  // Internal: the implementation (an incomplete type for hosts).
  Impl* impl() const { return impl_.get(); }
  explicit Tensor(std::shared_ptr<Impl> impl);

 private:
  void* checked_data(DType expected);
  static Tensor copy_counted(const void* ptr, size_t count, std::vector<int64_t> shape, DType dtype);
  std::shared_ptr<Impl> impl_;
};

// ------------------------------------------------------------------ Value

class Value {
 public:
  struct Impl;
  enum class Kind : uint8_t { none, boolean, integer, floating, string, tensor, list, tuple, record, function, other };

  Value();  // none
  Value(bool b);
  Value(int i);
  Value(int64_t i);
  Value(double f);
  Value(float f) : Value(double(f)) {}
  Value(std::string s);
  Value(const char* s);
  Value(Tensor t);
  static Value list(std::vector<Value> items);
  static Value tuple(std::vector<Value> items);
  static Value record(std::vector<std::pair<std::string, Value>> fields);
  ~Value();
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;

  Kind kind() const;
  // "int", "tensor", "record" ... as scripts name kinds.
  std::string kind_name() const;
  bool is_none() const { return kind() == Kind::none; }
  bool is_bool() const { return kind() == Kind::boolean; }
  bool is_int() const { return kind() == Kind::integer; }
  bool is_float() const { return kind() == Kind::floating; }
  bool is_string() const { return kind() == Kind::string; }
  bool is_tensor() const { return kind() == Kind::tensor; }
  bool is_list() const { return kind() == Kind::list; }
  bool is_tuple() const { return kind() == Kind::tuple; }
  bool is_record() const { return kind() == Kind::record; }
  bool is_function() const { return kind() == Kind::function; }

  // Accessors: each throws nn::Error on a value of another kind.
  bool as_bool() const;
  int64_t as_int() const;
  double as_float() const;  // a float, or an int converted
  const std::string& as_string() const;
  Tensor tensor() const;  // shares the data
  std::vector<Value> items() const;  // of a list or a tuple
  std::vector<std::pair<std::string, Value>> fields() const;  // of a record
  Value field(const std::string& name) const;  // throws if absent
  // As print() shows it.
  std::string str() const;

  // Internal: the implementation (an incomplete type for hosts).
  const Impl* impl() const { return impl_.get(); }
  explicit Value(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

// ------------------------------------------------------------------ Args

// The arguments of a host function as a script called it. The checked
// accessors turn misuse into a diagnostic at the script's call.
class Args {
 public:
  Args(std::string function_name, std::vector<Value> values, const void* context);
  // The library's: `call` points at the script's call while it runs, and is
  // cleared when it returns, so an Args kept past its call fails plainly.
  Args(std::string function_name, std::vector<Value> values, std::shared_ptr<const void*> call);
  size_t size() const { return values_.size(); }
  const std::string& function_name() const { return name_; }
  // Checks the count: "f takes 2 arguments but 3 were given".
  void expect(size_t count) const;
  void expect(size_t min, size_t max) const;  // min > max: an nn::Error (the host's mistake)
  // Argument i; fails when fewer were given.
  const Value& operator[](size_t i) const;
  Tensor tensor(size_t i) const;     // a tensor, or a number / list converted
  int64_t integer(size_t i) const;   // an int (or a 1-element integer tensor)
  double number(size_t i) const;     // int, float, bool or a 1-element tensor
  bool boolean(size_t i) const;
  std::string str(size_t i) const;
  const std::vector<Value>& values() const { return values_; }
  // A diagnostic at the script's call: "f: argument 1: <message>".
  [[noreturn]] void fail(size_t i, const std::string& message) const;
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const void* context() const { return call_ ? *call_ : nullptr; }
  std::string name_;
  std::vector<Value> values_;
  std::shared_ptr<const void*> call_;  // the frontend's call, null once it returned
};

using HostFunction = std::function<Value(Args)>;

// ------------------------------------------------------------------ Options

struct Options {
  int threads = 0;                        // kernel threads; 0: all cores
  std::string device = "cpu";             // cpu, or cuda / cuda:N where built with CUDA and a GPU is present
  std::vector<std::string> search_paths;  // for imports (NN_PATH is added too)
  bool allow_files = true;                // false: scripts can open no file
  size_t max_memory_bytes = 0;            // 0: no limit (process-wide CPU pool)
  std::vector<std::string> args;          // `args` in scripts
  uint64_t seed = 0;                      // random seed
  std::string precision = "f32";          // f32, tf32, bf16 or f16 (as nn --precision)
  std::ostream* out = nullptr;            // where print() writes; null: std::cout
  double time_limit = 0;                  // seconds a call from the host may run; 0 (or 1e9 and more): no limit
};

// ------------------------------------------------------------------ Interpreter

class Interpreter {
 public:
  explicit Interpreter(Options options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;
  Interpreter(Interpreter&&) noexcept;
  Interpreter& operator=(Interpreter&&) noexcept;

  // Runs a file / code in the main module; returns the value of the last
  // expression statement (none if there is none). Throws nn::Error.
  Value run_file(const std::string& path);
  Value eval(const std::string& code);

  // Globals of the main module. set takes a name scripts can write (SPEC §2:
  // `[A-Za-z_][A-Za-z0-9_]*`, not a keyword), else throws nn::Error.
  void set(const std::string& name, Value v);
  Value get(const std::string& name) const;  // throws nn::Error if absent
  bool has(const std::string& name) const;

  // Calls a script (or host) function by global name or as a value.
  Value call(const std::string& name, std::vector<Value> args);
  Value call(const Value& fn, std::vector<Value> args);
  template <class... A> Value call(const std::string& name, A&&... a) {
    return call(name, std::vector<Value>{Value(std::forward<A>(a))...});
  }
  template <class... A> Value call(const char* name, A&&... a) {
    return call(std::string(name), std::vector<Value>{Value(std::forward<A>(a))...});
  }
  template <class... A> Value call(const Value& fn, A&&... a) {
    return call(fn, std::vector<Value>{Value(std::forward<A>(a))...});
  }

  // Defines a host function callable from scripts (in every module); name
  // as for set. Any exception it throws becomes a diagnostic at the
  // script's call, except an nn::Error with an exit_code() (a nested eval
  // whose script called exit), which ends the run as exit() does. The
  // function belongs to this interpreter: called through another (its
  // value kept by the host), it is an nn::Error.
  void define(const std::string& name, HostFunction fn);

  const Options& options() const;

  // Stops the code this interpreter runs now, from any thread: the running
  // run_file / eval / call ends with the nn::Error "interrupted" at its next
  // statement, and the interpreter stays usable. A request made while
  // nothing runs is dropped when the next call starts. (A host function
  // that blocks, or one long kernel, ends before the stop is seen.)
  void interrupt() noexcept;

 private:
  struct Impl;
  Impl& live() const;  // throws nn::Error on a moved-from interpreter
  std::unique_ptr<Impl> impl_;
};

const char* version();

}  // namespace nn
