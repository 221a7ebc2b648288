// The newline rules of SPEC §2, applied to the token stream (see
// token_filter.h), and a token source over a lexed token list.
#include "frontend/token_filter.h"

#include "NNLexer.h"

namespace nn::frontend {

using grammar::NNLexer;

bool is_continuation_token(size_t type) {
  switch (type) {
    case NNLexer::PLUS: case NNLexer::MINUS: case NNLexer::STAR: case NNLexer::SLASH: case NNLexer::FLOORDIV:
    case NNLexer::PERCENT: case NNLexer::AT: case NNLexer::POW:
    case NNLexer::EQ: case NNLexer::NE: case NNLexer::LT: case NNLexer::LE:
    case NNLexer::GT: case NNLexer::GE: case NNLexer::DOTDOT:
    case NNLexer::AND: case NNLexer::OR: case NNLexer::NOT:
    case NNLexer::ASSIGN: case NNLexer::PLUS_ASSIGN: case NNLexer::MINUS_ASSIGN:
    case NNLexer::STAR_ASSIGN: case NNLexer::SLASH_ASSIGN:
    case NNLexer::COMMA: case NNLexer::COLON: case NNLexer::LBRACE: case NNLexer::SEMI:
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------- TokenListSource

TokenListSource::TokenListSource(std::vector<std::unique_ptr<antlr4::Token>> tokens)
    : tokens_(std::move(tokens)) {
  if (!tokens_.empty()) input_ = tokens_.front()->getInputStream();
  // Keep a copy of the final EOF (or make one) so that running past the end
  // keeps answering EOF, as a lexer would.
  if (!tokens_.empty() && tokens_.back()->getType() == antlr4::Token::EOF) {
    eof_template_ = std::make_unique<antlr4::CommonToken>(tokens_.back().get());
  } else {
    eof_template_ = std::make_unique<antlr4::CommonToken>(antlr4::Token::EOF, "<EOF>");
    tokens_.push_back(std::make_unique<antlr4::CommonToken>(eof_template_.get()));
  }
}

std::unique_ptr<antlr4::Token> TokenListSource::nextToken() {
  std::unique_ptr<antlr4::Token> token;
  if (next_ < tokens_.size()) {
    token = std::move(tokens_[next_++]);
  } else {
    token = std::make_unique<antlr4::CommonToken>(eof_template_.get());
  }
  line_ = token->getLine();
  column_ = token->getCharPositionInLine();
  return token;
}

std::string TokenListSource::getSourceName() {
  return input_ ? input_->getSourceName() : std::string("<tokens>");
}

antlr4::TokenFactory<antlr4::CommonToken>* TokenListSource::getTokenFactory() {
  return antlr4::CommonTokenFactory::DEFAULT.get();
}

// ---------------------------------------------------------------- TokenFilter

bool TokenFilter::newline_ends_statement() const {
  if (last_kept_ == 0 || last_kept_ == NNLexer::NEWLINE || last_kept_ == antlr4::Token::EOF) return false;
  if (!open_brackets_.empty() && open_brackets_.back() != NNLexer::LBRACE) return false;
  return !is_continuation_token(last_kept_);
}

void TokenFilter::track_brackets(size_t type) {
  switch (type) {
    case NNLexer::LPAREN: case NNLexer::LBRACKET: case NNLexer::LBRACE:
      open_brackets_.push_back(type);
      break;
    case NNLexer::RPAREN: case NNLexer::RBRACKET: case NNLexer::RBRACE:
      // Mismatches were reported by the nesting check; just stay in step.
      if (!open_brackets_.empty()) open_brackets_.pop_back();
      break;
    default:
      break;
  }
}

std::unique_ptr<antlr4::Token> TokenFilter::nextToken() {
  if (pending_) return pass_on(std::move(pending_));
  for (;;) {
    std::unique_ptr<antlr4::Token> token = inner_.nextToken();
    size_t type = token->getType();
    if (type == NNLexer::NEWLINE) {
      if (newline_ends_statement()) return pass_on(std::move(token));
      continue;
    }
    if ((type == NNLexer::RBRACE || type == antlr4::Token::EOF) && newline_ends_statement()) {
      // The statement before this `}` or the end of the input ends here: give
      // the parser the NEWLINE that ends every statement. It is empty and
      // sits where the `}` or the end is.
      auto newline = std::make_unique<antlr4::CommonToken>(token.get());
      newline->setType(NNLexer::NEWLINE);
      newline->setText("\n");
      newline->setStopIndex(newline->getStartIndex() - 1);
      pending_ = std::move(token);
      return pass_on(std::move(newline));
    }
    return pass_on(std::move(token));
  }
}

std::unique_ptr<antlr4::Token> TokenFilter::pass_on(std::unique_ptr<antlr4::Token> token) {
  track_brackets(token->getType());
  last_kept_ = token->getType();
  return token;
}

}  // namespace nn::frontend
