// A pass over the lexed tokens before parsing: matches brackets (so that an
// unclosed `{` is reported where it was opened, in words, instead of as a
// parse error at the end of the file) and rejects input nested so deeply
// that the recursive parser or a recursive walk of the AST could overflow
// the C++ stack.
#pragma once
#include <cstddef>
#include <vector>

#include <antlr4-runtime.h>

#include "frontend/diagnostic.h"
#include "frontend/source.h"
#include "frontend/syntax_errors.h"

namespace nn::frontend {

// The deepest nesting accepted. Each level costs a few C++ frames in the
// parser and in every recursive pass over the AST.
inline constexpr size_t kMaxNesting = 400;

struct NestingResult {
  // At most one: the first bracket problem, or the first place nested too deeply.
  std::vector<Diagnostic> diagnostics;
  // The only problem is brackets still open at the end of the input: more
  // input could complete it (the REPL asks for another line).
  bool open_at_end = false;
};

// `tokens` is the lexer's output (NEWLINEs included, EOF optional); `file`
// gives the line:col of opening brackets in messages.
NestingResult check_nesting(const std::vector<const antlr4::Token*>& tokens, const TokenSpans& spans,
                            const SourceFile& file);

}  // namespace nn::frontend
