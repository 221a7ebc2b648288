// The interactive REPL (SPEC §10): line editing with libedit, `nn> ` and
// `... ` prompts, history in ~/.nn_history, Tab completion, `:` commands,
// Ctrl-C to stop a running computation. Used when stdin is a terminal.
#pragma once
#include <string>
#include <vector>

#include "frontend/interpreter.h"

namespace nn::repl {

// Runs the REPL on stdin/stdout until Ctrl-D, :quit or exit(code); returns
// the exit code. Every exception is handled inside.
int run_repl(const frontend::InterpreterOptions& options);

// The history file's format: one entry a line, a multi-line entry with its
// newlines written as `\n` and backslashes as `\\`.
std::string encode_history_entry(const std::string& entry);
std::string decode_history_entry(const std::string& line);

// Completions of `word` (the text before the cursor back to the last
// character that is not a letter, digit, `_` or `.`): keywords, built-ins
// and session names, or after `name.` (or `a.b.`) the record's fields. Each
// is the whole word completed, sorted, without duplicates.
std::vector<std::string> completions(frontend::Interpreter& interp, const std::string& word);

}  // namespace nn::repl
