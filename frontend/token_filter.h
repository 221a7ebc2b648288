// The token filter between the lexer and the parser: it implements the
// newline rules of SPEC §2, so that the grammar only sees the NEWLINE tokens
// that end a statement. Also a token source over an already-lexed token list.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include <antlr4-runtime.h>

namespace nn::frontend {

// A token after which a line break does not end the statement: a binary
// operator (`+ - * / % @ ** == != < <= > >= .. and or`), `not`, an
// assignment operator, `,`, `:`, `{` or `;`.
bool is_continuation_token(size_t type);

// Hands out the tokens of a list, in order, then EOF forever after.
class TokenListSource : public antlr4::TokenSource {
 public:
  explicit TokenListSource(std::vector<std::unique_ptr<antlr4::Token>> tokens);
  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return line_; }
  size_t getCharPositionInLine() override { return column_; }
  antlr4::CharStream* getInputStream() override { return input_; }
  std::string getSourceName() override;
  antlr4::TokenFactory<antlr4::CommonToken>* getTokenFactory() override;

 private:
  std::vector<std::unique_ptr<antlr4::Token>> tokens_;
  size_t next_ = 0;
  size_t line_ = 1, column_ = 0;
  antlr4::CharStream* input_ = nullptr;
  std::unique_ptr<antlr4::Token> eof_template_;  // copied when the list runs out
};

// Drops the NEWLINE tokens that do not end a statement (SPEC §2):
//  - inside `( )` or `[ ]` (the innermost open bracket decides, so a block
//    `{ }` inside parentheses, such as a lambda body, has statements again);
//  - after a continuation token (see is_continuation_token);
//  - after another NEWLINE (runs collapse to one), or before any token was
//    passed on (leading blank lines).
// And adds an (empty) NEWLINE before a `}` or the end of the input where a
// NEWLINE there would end a statement, so that every statement the parser
// sees ends with a NEWLINE or `;`. Every other token passes through unchanged.
class TokenFilter : public antlr4::TokenSource {
 public:
  explicit TokenFilter(antlr4::TokenSource& inner) : inner_(inner) {}
  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return inner_.getLine(); }
  size_t getCharPositionInLine() override { return inner_.getCharPositionInLine(); }
  antlr4::CharStream* getInputStream() override { return inner_.getInputStream(); }
  std::string getSourceName() override { return inner_.getSourceName(); }
  antlr4::TokenFactory<antlr4::CommonToken>* getTokenFactory() override { return inner_.getTokenFactory(); }

 private:
  bool newline_ends_statement() const;
  void track_brackets(size_t type);
  std::unique_ptr<antlr4::Token> pass_on(std::unique_ptr<antlr4::Token> token);

  antlr4::TokenSource& inner_;
  std::vector<size_t> open_brackets_;  // token types of `(`, `[`, `{` still open
  size_t last_kept_ = 0;               // type of the last token passed on; 0 = none yet
  std::unique_ptr<antlr4::Token> pending_;  // held back behind an added NEWLINE
};

}  // namespace nn::frontend
