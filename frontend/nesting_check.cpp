// Bracket matching and the nesting-depth limit (see nesting_check.h).
//
// The depth of a position is an upper bound on how deep the parse tree (and
// so the AST, and every recursive walk of it) is there:
//   - each open bracket is one level;
//   - within one bracket level, every operator token since the last `,` or
//     statement end is one more level: a prefix `-` or `not`, a right-
//     associative `**` and an `else if` nest, and a chain of left-associative
//     operators, `.` fields and postfix calls/indexes builds a left-deep tree;
//   - the operators counted in the enclosing levels when a bracket opened
//     still count inside it (`- - (- - (...))` nests all the way down).
#include "frontend/nesting_check.h"

#include <string>

#include "NNLexer.h"
#include "frontend/token_filter.h"

namespace nn::frontend {

using grammar::NNLexer;

namespace {

bool is_open(size_t type) {
  return type == NNLexer::LPAREN || type == NNLexer::LBRACKET || type == NNLexer::LBRACE;
}
bool is_close(size_t type) {
  return type == NNLexer::RPAREN || type == NNLexer::RBRACKET || type == NNLexer::RBRACE;
}
size_t closer_of(size_t open) {
  return open == NNLexer::LPAREN ? NNLexer::RPAREN : open == NNLexer::LBRACKET ? NNLexer::RBRACKET : NNLexer::RBRACE;
}
const char* closer_text(size_t open) {
  return open == NNLexer::LPAREN ? ")" : open == NNLexer::LBRACKET ? "]" : "}";
}
// A `{` right after an operand (`if x {`, `fn f() {`) or after `else` or
// `graph` opens a block; anywhere else (`= {`, `f({`) a record.
bool opens_block(size_t prev_type) {
  switch (prev_type) {
    case NNLexer::NAME: case NNLexer::INT: case NNLexer::FLOAT: case NNLexer::STRING:
    case NNLexer::TRUE: case NNLexer::FALSE: case NNLexer::NONE:
    case NNLexer::RPAREN: case NNLexer::RBRACKET: case NNLexer::RBRACE:
    case NNLexer::ELSE: case NNLexer::GRAPH:
      return true;
    default:
      return false;
  }
}

// Tokens that add a level to the tree they are in (see the top of the file).
bool is_nesting_operator(size_t type) {
  switch (type) {
    case NNLexer::PLUS: case NNLexer::MINUS: case NNLexer::STAR: case NNLexer::SLASH: case NNLexer::FLOORDIV:
    case NNLexer::PERCENT: case NNLexer::AT: case NNLexer::POW:
    case NNLexer::EQ: case NNLexer::NE: case NNLexer::LT: case NNLexer::LE:
    case NNLexer::GT: case NNLexer::GE: case NNLexer::DOTDOT:
    case NNLexer::AND: case NNLexer::OR: case NNLexer::NOT: case NNLexer::ELSE: case NNLexer::DOT:
      return true;
    default:
      return false;
  }
}

// Tokens that end an operand, so that a `(` or `[` right after them is a
// postfix call or index on it.
bool ends_operand(size_t type) {
  switch (type) {
    case NNLexer::NAME: case NNLexer::INT: case NNLexer::FLOAT: case NNLexer::STRING:
    case NNLexer::TRUE: case NNLexer::FALSE: case NNLexer::NONE:
    case NNLexer::RPAREN: case NNLexer::RBRACKET: case NNLexer::RBRACE:
      return true;
    default:
      return false;
  }
}

struct OpenBracket {
  size_t type;
  const antlr4::Token* token;
  size_t operators_before;  // the enclosing level's count when it opened
  bool is_block;            // for `{`: a block, not a record
  const char* name() const {
    return type == NNLexer::LPAREN ? "parenthesis" : type == NNLexer::LBRACKET ? "bracket" : is_block ? "block" : "record";
  }
};

std::string where(const SourceFile& file, const Span& span) {
  LineCol lc = file.line_col(span.begin);
  return std::to_string(lc.line) + ":" + std::to_string(lc.col);
}

}  // namespace

NestingResult check_nesting(const std::vector<const antlr4::Token*>& tokens, const TokenSpans& spans,
                            const SourceFile& file) {
  NestingResult result;
  std::vector<OpenBracket> open;
  size_t operators = 0;            // in the current level, since the last `,` or statement end
  size_t enclosing_operators = 0;  // the sum of operators_before over `open`
  size_t prev_type = 0;            // 0: no token yet
  const antlr4::Token* last_significant = nullptr;

  auto fail = [&](const std::string& message, const Span& span) {
    result.diagnostics.push_back(Diagnostic{message, span, {}});
  };

  for (size_t i = 0; i < tokens.size(); ++i) {
    const antlr4::Token* token = tokens[i];
    size_t type = token->getType();
    if (type == antlr4::Token::EOF) break;

    if (is_open(type)) {
      if (type != NNLexer::LBRACE && ends_operand(prev_type)) ++operators;  // a call or index
      open.push_back({type, token, operators, type == NNLexer::LBRACE && opens_block(prev_type)});
      enclosing_operators += operators;
      operators = 0;
    } else if (is_close(type)) {
      if (open.empty()) {
        fail("unexpected " + describe_token(token), spans.span(token));
        return result;
      }
      const OpenBracket& innermost = open.back();
      if (closer_of(innermost.type) != type) {
        fail(std::string("expected `") + closer_text(innermost.type) + "` to close the " +
                 innermost.name() + " opened at " + where(file, spans.span(innermost.token)) + ", found " + describe_token(token),
             spans.span(token));
        return result;
      }
      operators = innermost.operators_before;
      enclosing_operators -= operators;
      open.pop_back();
    } else if (type == NNLexer::COMMA) {
      operators = 0;  // the previous item's tree is complete
    } else if (type == NNLexer::NEWLINE || type == NNLexer::SEMI) {
      // A statement ends (so its count restarts) unless the newline is one
      // the token filter drops, or an `else` follows on a later line (blank
      // lines and comments between: the filter joins those too).
      bool in_block = open.empty() || open.back().type == NNLexer::LBRACE;
      size_t next = i + 1;
      while (next < tokens.size() && tokens[next]->getType() == NNLexer::NEWLINE) ++next;
      bool next_is_else = next < tokens.size() && tokens[next]->getType() == NNLexer::ELSE;
      if (in_block && !is_continuation_token(prev_type) && !next_is_else) operators = 0;
    } else if (is_nesting_operator(type)) {
      ++operators;
    }

    if (open.size() + enclosing_operators + operators > kMaxNesting) {
      fail("expression nested too deeply (more than " + std::to_string(kMaxNesting) +
               " levels; each bracket and each operator of a chain such as a + b + c counts as one; "
               "split a long chain with names)",
           spans.span(token));
      return result;
    }
    if (type != NNLexer::NEWLINE) last_significant = token;
    prev_type = type;
  }

  if (!open.empty()) {
    // Report the innermost: it is the one the next `}` would have closed.
    const OpenBracket& innermost = open.back();
    fail(std::string("expected `") + closer_text(innermost.type) + "` to close the " + innermost.name() +
             " opened at " + where(file, spans.span(innermost.token)),
         spans.after(last_significant));
    result.open_at_end = true;
  }
  return result;
}

}  // namespace nn::frontend
