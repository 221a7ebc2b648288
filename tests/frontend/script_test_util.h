// Helpers shared by the frontend tests that run nn code through an
// Interpreter: the printed value of a piece of code (run), and the message of
// the first diagnostic it raises (script_error, with its notes:
// script_error_notes).
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "frontend/format.h"
#include "frontend/interpreter.h"

namespace nntest {

// The value of `code`, printed as nn prints it.
inline std::string run(nn::frontend::Interpreter& vm, const std::string& code) {
  return nn::frontend::to_str(vm.run_code("t.nn", code));
}

// The message of the first diagnostic `code` raises, "" when it runs cleanly.
inline std::string script_error(nn::frontend::Interpreter& vm, const std::string& code) {
  try {
    vm.run_code("t.nn", code);
  } catch (const nn::frontend::ScriptError& e) {
    return e.diagnostics().front().message;
  }
  return "";
}

// The message and notes of the first diagnostic, one per line.
inline std::string script_error_notes(nn::frontend::Interpreter& vm, const std::string& code) {
  try {
    vm.run_code("t.nn", code);
  } catch (const nn::frontend::ScriptError& e) {
    const auto& d = e.diagnostics().front();
    std::string s = d.message;
    for (const std::string& n : d.notes) s += "\n" + n;
    return s;
  }
  return "";
}

}  // namespace nntest
