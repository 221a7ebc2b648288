// Diagnostics: what a user sees for every error they can cause (SPEC §11).
// A ScriptError carries one or more diagnostics up to whoever prints them.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/source.h"

namespace nn::frontend {

struct Diagnostic {
  std::string message;  // "matmul shapes do not fit: ..."
  Span span;
  // Lines printed after the snippet: "in fn f, called at a.nn:3:5", "help: ...".
  std::vector<std::string> notes;
  std::string severity = "error";
};

// Renders a diagnostic as SPEC §11 shows: header, location, source line,
// carets under the span, notes.
std::string render(const Diagnostic& d, const SourceManager& sources);

class ScriptError : public std::runtime_error {
 public:
  explicit ScriptError(Diagnostic d) : std::runtime_error(d.message) { diags_.push_back(std::move(d)); }
  explicit ScriptError(std::vector<Diagnostic> ds)
      : std::runtime_error(ds.empty() ? "error" : ds[0].message), diags_(std::move(ds)) {}
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  std::vector<Diagnostic>& diagnostics() { return diags_; }
  Diagnostic& first() { return diags_.front(); }

 private:
  std::vector<Diagnostic> diags_;
};

[[noreturn]] inline void fail(const Span& span, std::string message) {
  throw ScriptError(Diagnostic{std::move(message), span, {}});
}

// "did you mean `value`?" — the closest candidate by edit distance, or "".
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace nn::frontend
