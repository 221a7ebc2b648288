// What the two halves of the embedding API (embed_api.cpp: values and
// tensors; embed_interpreter.cpp: the interpreter) share: the wrapped
// internal types and the conversion of every internal failure to nn::Error.
#pragma once
#include <new>
#include <nn/nn.h>

#include "backend/error.h"
#include "backend/tensor.h"
#include "frontend/diagnostic.h"
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

namespace embed {

inline be::DType to_backend(DType d) { return be::DType(uint8_t(d)); }
inline DType from_backend(be::DType d) { return DType(uint8_t(d)); }

inline fe::Value to_internal(const Value& v) { return v.impl() ? v.impl()->v : fe::Value(); }

[[noreturn]] inline void throw_plain(const std::string& message) {
  throw Error("error: " + message + "\n", message);
}

inline std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

inline be::Shape to_shape(const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 0) throw_plain("a tensor's shape cannot have a negative dimension");
  return be::Shape::of(shape);
}

inline Error to_error(const fe::Interpreter& vm, fe::ScriptError e) {
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

inline Value wrap(fe::Value v) { return Value(std::make_shared<const Value::Impl>(Value::Impl{std::move(v)})); }

}  // namespace embed
}  // namespace nn
