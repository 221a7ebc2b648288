// Syntax diagnostics of the parser front: token spans in bytes, a collector
// that keeps the first error of each line (at most 10), and our own ANTLR
// error strategy and lexer listener, so that no message of ANTLR's own
// ("mismatched input ... expecting {...}") ever reaches a user.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <antlr4-runtime.h>

#include "frontend/diagnostic.h"
#include "frontend/source.h"

namespace nn::frontend {

// Byte offset of the first byte of `text` that is not valid UTF-8, or
// std::string::npos. ANTLR's input stream throws on invalid UTF-8, so the
// parser front checks first.
size_t first_invalid_utf8(const std::string& text);

// Spans of tokens. ANTLR indexes characters in code points; spans are byte
// offsets into the UTF-8 text, so this keeps a code point -> byte table
// (none at all for pure ASCII text, where the two agree).
class TokenSpans {
 public:
  // `text` must be valid UTF-8; it starts `base` bytes into the file (a
  // part of a file parsed alone).
  TokenSpans(uint32_t file, const std::string& text, uint32_t base = 0);
  uint32_t file() const { return file_; }
  uint32_t byte_offset(size_t code_point) const;
  Span span(const antlr4::Token* token) const;
  Span span(const antlr4::Token* first, const antlr4::Token* last) const;
  // An empty span at the end of `token`: "after this token".
  Span after(const antlr4::Token* token) const;

 private:
  uint32_t file_;
  uint32_t base_;                      // bytes of the file before the text
  uint32_t size_;                      // bytes
  std::vector<uint32_t> byte_of_cp_;   // empty when the text is ASCII
};

// Collects syntax diagnostics. Only the first diagnostic of a line is kept
// (later ones on that line are nearly always echoes of the first), and at
// most kMaxReported in all; any() still tells whether anything was wrong.
class SyntaxDiagnostics {
 public:
  static constexpr size_t kMaxReported = 10;
  void add(Diagnostic diagnostic, size_t line);
  bool any() const { return any_; }
  // The kept diagnostics, in source order.
  std::vector<Diagnostic> take();

 private:
  std::vector<Diagnostic> diagnostics_;
  std::vector<size_t> lines_;
  bool any_ = false;
};

// How a message names a token: "`+`", "`\"abc\"`", "end of line", "end of file".
std::string describe_token(const antlr4::Token* token);

// Should the lexer ever report an error (its catch-all rules make that
// impossible in practice), it becomes an `unexpected character` diagnostic.
class LexerErrorListener : public antlr4::BaseErrorListener {
 public:
  LexerErrorListener(const TokenSpans& spans, SyntaxDiagnostics& sink) : spans_(spans), sink_(sink) {}
  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* offending, size_t line,
                   size_t column, const std::string& message, std::exception_ptr error) override;

 private:
  const TokenSpans& spans_;
  SyntaxDiagnostics& sink_;
};

// ANTLR's default recovery (single-token insertion and deletion) with our
// own wording: every report names what was expected in words, after which
// token, and what was found instead. Where more than a token is wrong, the
// parser skips to the end of the statement (a NEWLINE, `;` or `}`) rather
// than to ANTLR's follow sets: the next line is then parsed afresh, which
// gives one error per bad statement instead of a cascade.
class SyntaxErrorStrategy : public antlr4::DefaultErrorStrategy {
 public:
  SyntaxErrorStrategy(const TokenSpans& spans, SyntaxDiagnostics& sink) : spans_(spans), sink_(sink) {}

 protected:
  void reportNoViableAlternative(antlr4::Parser* parser, const antlr4::NoViableAltException& e) override;
  void reportInputMismatch(antlr4::Parser* parser, const antlr4::InputMismatchException& e) override;
  void reportFailedPredicate(antlr4::Parser* parser, const antlr4::FailedPredicateException& e) override;
  void reportUnwantedToken(antlr4::Parser* parser) override;
  void reportMissingToken(antlr4::Parser* parser) override;
  void sync(antlr4::Parser* parser) override;
  antlr4::Token* singleTokenDeletion(antlr4::Parser* parser) override;
  bool singleTokenInsertion(antlr4::Parser* parser) override;
  antlr4::misc::IntervalSet getErrorRecoverySet(antlr4::Parser* parser) override;
  void consumeUntil(antlr4::Parser* parser, const antlr4::misc::IntervalSet& set) override;

 private:
  // Reports that `found` is not what the parser could take at this point;
  // `expected` lists what it could have taken, or is empty when unknown.
  void report(antlr4::Parser* parser, antlr4::Token* found, const antlr4::misc::IntervalSet& expected);

  const TokenSpans& spans_;
  SyntaxDiagnostics& sink_;
};

}  // namespace nn::frontend
