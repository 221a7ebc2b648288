// Syntax diagnostics: spans in bytes, the per-line collector, and the wording
// of every parse error (see syntax_errors.h).
#include "frontend/syntax_errors.h"

#include <algorithm>
#include <cstdio>

#include "NNParser.h"
#include "frontend/token_filter.h"

namespace nn::frontend {

using grammar::NNParser;

// ---------------------------------------------------------------- UTF-8 and spans

namespace {
// Length of the UTF-8 sequence starting at text[i], or 0 when it is invalid
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t utf8_sequence_length(const std::string& text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length;
  uint32_t code_point;
  if ((lead & 0xE0) == 0xC0) { length = 2; code_point = lead & 0x1F; }
  else if ((lead & 0xF0) == 0xE0) { length = 3; code_point = lead & 0x0F; }
  else if ((lead & 0xF8) == 0xF0) { length = 4; code_point = lead & 0x07; }
  else return 0;
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code_point < kSmallest[length] || code_point > 0x10FFFF) return 0;
  if (code_point >= 0xD800 && code_point <= 0xDFFF) return 0;
  return length;
}
}  // namespace

size_t first_invalid_utf8(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    size_t length = utf8_sequence_length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::string::npos;
}

TokenSpans::TokenSpans(uint32_t file, const std::string& text, uint32_t base)
    : file_(file), base_(base), size_(uint32_t(text.size())) {
  bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) return;
  byte_of_cp_.reserve(text.size() + 1);
  for (size_t i = 0; i < text.size();) {
    byte_of_cp_.push_back(uint32_t(i));
    size_t length = utf8_sequence_length(text, i);
    i += length == 0 ? 1 : length;
  }
  byte_of_cp_.push_back(size_);
}

uint32_t TokenSpans::byte_offset(size_t code_point) const {
  if (byte_of_cp_.empty()) return base_ + uint32_t(std::min<size_t>(code_point, size_));
  return base_ + (code_point < byte_of_cp_.size() ? byte_of_cp_[code_point] : size_);
}

Span TokenSpans::span(const antlr4::Token* token) const { return span(token, token); }

Span TokenSpans::span(const antlr4::Token* first, const antlr4::Token* last) const {
  uint32_t begin = byte_offset(first->getStartIndex());
  // EOF has stop = start - 1 (and both may be INVALID_INDEX): an empty span.
  size_t stop = last->getStopIndex();
  uint32_t end = (stop == INVALID_INDEX || last->getType() == antlr4::Token::EOF)
                     ? byte_offset(last->getStartIndex())
                     : byte_offset(stop + 1);
  return {file_, begin, std::max(begin, end)};
}

Span TokenSpans::after(const antlr4::Token* token) const {
  Span s = span(token);
  return {file_, s.end, s.end};
}

// ---------------------------------------------------------------- the collector

void SyntaxDiagnostics::add(Diagnostic diagnostic, size_t line) {
  any_ = true;
  if (diagnostics_.size() >= kMaxReported) return;
  if (std::find(lines_.begin(), lines_.end(), line) != lines_.end()) return;
  lines_.push_back(line);
  diagnostics_.push_back(std::move(diagnostic));
}

std::vector<Diagnostic> SyntaxDiagnostics::take() {
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.span.begin < b.span.begin; });
  lines_.clear();
  return std::move(diagnostics_);
}

// ---------------------------------------------------------------- wording

std::string describe_token(const antlr4::Token* token) {
  if (token->getType() == antlr4::Token::EOF) return "end of file";
  if (token->getType() == NNParser::NEWLINE) return "end of line";
  std::string text = token->getText();
  if (text.size() == 1 && (static_cast<unsigned char>(text[0]) < 0x20 || text[0] == 0x7F)) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", unsigned(static_cast<unsigned char>(text[0])));
    return std::string("the character ") + code;
  }
  if (text.size() > 24) {
    size_t cut = 20;  // do not cut a UTF-8 sequence in half
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return "`" + text + "`";
}

namespace {

// How an expected token is named in a list: "`)`", "a name".
std::string describe_expected(size_t type, const antlr4::dfa::Vocabulary& vocabulary) {
  switch (type) {
    case NNParser::NAME: return "a name";
    case NNParser::INT: case NNParser::FLOAT: return "a number";
    case NNParser::STRING: return "a string";
    case NNParser::NEWLINE: return "end of line";
    case antlr4::Token::EOF: return "end of file";
    default: break;
  }
  std::string literal = vocabulary.getLiteralName(type);  // "'+'"
  // Appends rather than `"`" + ...`: GCC 12 warns falsely (-Wrestrict) on the latter.
  std::string out = "`";
  out += literal.size() >= 2 ? literal.substr(1, literal.size() - 2) : vocabulary.getDisplayName(type);
  out += '`';
  return out;
}

bool is_binary_operator(size_t type) {
  return is_continuation_token(type) && type != NNParser::NOT && type != NNParser::COMMA &&
         type != NNParser::COLON && type != NNParser::LBRACE && type != NNParser::SEMI;
}

// "`,` or `)`" for a short list of tokens the parser could take, leaving out
// the ones that would only continue the expression before it (operators,
// postfix brackets) and statement ends; "" when that leaves nothing or too
// much to say in a few words.
std::string expected_list(const antlr4::misc::IntervalSet& expected, const antlr4::dfa::Vocabulary& vocabulary) {
  std::vector<std::string> names;
  std::vector<ssize_t> types = expected.toList();
  // After a complete expression, anything that would continue it is
  // possible: operators, calls, indexes, fields. Those go without saying.
  bool after_expression = std::any_of(types.begin(), types.end(), [](ssize_t t) { return is_binary_operator(size_t(t)); });
  for (ssize_t type : types) {
    size_t t = size_t(type);
    bool continues = is_binary_operator(t) || t == NNParser::LPAREN || t == NNParser::LBRACKET || t == NNParser::DOT;
    if ((after_expression && continues) || t == NNParser::NEWLINE || t == NNParser::SEMI || t == antlr4::Token::EOF)
      continue;
    names.push_back(describe_expected(t, vocabulary));
  }
  if (names.empty() || names.size() > 3) return "";
  // "`,` or `)`" reads better than "`)` or `,`".
  std::stable_partition(names.begin(), names.end(), [](const std::string& n) { return n == "`,`"; });
  std::string out = names[0];
  for (size_t i = 1; i < names.size(); ++i) out += (i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

// The rule of the innermost statement being parsed (RuleIfExpr, ...), or
// the current rule when there is none.
size_t statement_rule(antlr4::ParserRuleContext* ctx) {
  for (antlr4::ParserRuleContext* c = ctx; c; c = dynamic_cast<antlr4::ParserRuleContext*>(c->parent)) {
    switch (c->getRuleIndex()) {
      case NNParser::RuleLetStmt: case NNParser::RuleFnDecl: case NNParser::RuleGraphBlock:
      case NNParser::RuleIfExpr: case NNParser::RuleForStmt: case NNParser::RuleWhileStmt:
      case NNParser::RuleReturnStmt: case NNParser::RuleImportStmt: case NNParser::RuleExprStmt:
        return c->getRuleIndex();
      default:
        break;
    }
  }
  return ctx ? ctx->getRuleIndex() : size_t(-1);
}

antlr4::misc::IntervalSet statement_ends() {
  antlr4::misc::IntervalSet ends;
  ends.add(NNParser::NEWLINE);
  ends.add(NNParser::SEMI);
  ends.add(NNParser::RBRACE);
  ends.add(antlr4::Token::EOF);
  return ends;
}

// "`{` after the condition of `if`": how to name the `{` that `rule` needs.
std::string block_phrase(size_t rule) {
  switch (rule) {
    case NNParser::RuleIfExpr: return "`{` after the condition of `if`";
    case NNParser::RuleWhileStmt: return "`{` after the condition of `while`";
    case NNParser::RuleForStmt: return "`{` to start the body of `for`";
    case NNParser::RuleFnDecl: case NNParser::RulePrimary: return "`{` to start the body of the function";
    case NNParser::RuleGraphBlock: return "`{` after `graph`";
    default: return "";
  }
}

// After an item of a call, list, tuple, record or parameter list, ANTLR
// knows only the closing bracket (the loop over `, item` is behind it);
// a user should hear that a `,` would do too.
antlr4::misc::IntervalSet with_comma(const antlr4::misc::IntervalSet& expected, size_t rule, size_t prev_type) {
  bool closer_only = expected.size() == 1 && (expected.contains(size_t(NNParser::RPAREN)) ||
                                              expected.contains(size_t(NNParser::RBRACKET)) ||
                                              expected.contains(size_t(NNParser::RBRACE)));
  bool in_list = rule == NNParser::RuleExpr || rule == NNParser::RulePrimary || rule == NNParser::RuleFnDecl ||
                 rule == NNParser::RulePattern;
  bool after_item = prev_type != NNParser::LPAREN && prev_type != NNParser::LBRACKET &&
                    prev_type != NNParser::LBRACE && prev_type != NNParser::COMMA;
  if (!closer_only || !in_list || !after_item) return expected;
  antlr4::misc::IntervalSet more = expected;
  more.add(NNParser::COMMA);
  return more;
}

// The token before `token` in the parser's (filtered) stream, or null.
antlr4::Token* token_before(antlr4::Parser* parser, antlr4::Token* token) {
  size_t index = token->getTokenIndex();
  if (index == 0 || index == INVALID_INDEX) return nullptr;
  return parser->getTokenStream()->get(index - 1);
}

// Everything the wording of one error depends on.
struct Situation {
  const antlr4::misc::IntervalSet& expected;
  size_t rule;        // the rule being parsed (NNParser::RuleExpr, ...)
  size_t statement;   // the innermost statement rule around it
  size_t owner;       // for a missing `{`: the rule the block belongs to
  size_t prev_type;   // the token before the offending one; 0 when none
  size_t found_type;  // the offending token
  std::string found;  // "`x`", "end of line"
  std::string after;  // " after `+`", or "" at the start of a statement

  bool expects(size_t type) const { return expected.contains(type); }
  std::string here(const std::string& what) const { return "expected " + what + ", found " + found; }
  std::string after_prev(const std::string& what) const { return here(what + after); }
};

// The message for a syntax error; may add notes. A decision table, from the
// most specific situations to the most general.
std::string wording(const Situation& s, const antlr4::dfa::Vocabulary& vocabulary, std::vector<std::string>& notes) {
  using P = NNParser;
  bool statement_start =
      s.rule == P::RuleProgram || s.rule == P::RuleBlock || s.rule == P::RuleStmtLine || s.rule == P::RuleStmt;
  if (s.found_type == P::ELSE && !s.expects(P::ELSE)) return "unexpected `else`: it can only follow the `}` of an `if`";
  if (statement_start && s.expects(P::INT)) {
    // Where a statement could start, "expected an expression" says too little.
    if (s.prev_type == P::NEWLINE && is_binary_operator(s.found_type))
      notes.push_back("help: a line break ends the statement before it; to go on, end the previous line with the "
                      "operator, or put the expression in parentheses");
    return "unexpected " + s.found;
  }
  if (s.rule == P::RuleLetStmt && s.expects(P::ASSIGN))
    return std::string("expected `=` after the ") + (s.prev_type == P::RPAREN ? "pattern" : "name") + " in `let`";
  if ((s.rule == P::RuleLetStmt || s.rule == P::RuleForStmt) && s.expects(P::NAME) && !s.expects(P::INT))
    return s.after_prev(s.rule == P::RuleLetStmt ? "a name" : "a loop variable");
  if (s.rule == P::RulePattern && s.expects(P::NAME)) {
    if (s.prev_type == P::LET) return s.after_prev("a name");
    if (s.prev_type == P::FOR) return s.after_prev("a loop variable");
    return s.here("a name in the pattern");
  }
  if (s.rule == P::RuleForStmt && s.expects(P::IN)) return s.here("`in` after the loop variable of `for`");
  if (s.expects(P::LBRACE) && !s.expects(P::INT) && !s.expects(P::IF) && !block_phrase(s.owner).empty())
    return s.here(block_phrase(s.owner));
  if (s.rule == P::RuleIfExpr && s.expects(P::IF)) return s.here("`if` or `{` after `else`");
  if (s.rule == P::RuleFnDecl && s.expects(P::NAME) && s.prev_type != P::LPAREN && s.prev_type != P::COMMA)
    return s.after_prev("a name");
  if (s.rule == P::RuleFnDecl && s.expects(P::LPAREN)) return s.here("`(` after the function name");
  if ((s.rule == P::RuleField || s.rule == P::RulePrimary) && s.expects(P::NAME) && s.expects(P::RBRACE))
    return s.after_prev("a field name");
  bool in_parameters = s.rule == P::RuleFnDecl || s.rule == P::RuleParams || s.rule == P::RuleParam ||
                       s.rule == P::RulePrimary;  // a lambda's parameters
  if (in_parameters && s.expects(P::NAME) && !s.expects(P::INT)) return s.after_prev("a parameter name");
  if (s.rule == P::RuleImportStmt && s.expects(P::STRING))
    return s.here("a path in quotes after `import`, as in `import \"layers\"`");
  if (s.rule == P::RuleImportStmt && s.expects(P::NAME)) return s.after_prev("a name");
  if (s.rule == P::RuleField && s.expects(P::COLON)) return s.here("`:` after the field name");
  if (s.rule == P::RuleExpr && s.prev_type == P::DOT && s.expects(P::NAME)) return s.after_prev("a field name");
  // Every expression can start with a number: an operand is missing.
  if (s.expects(P::INT)) return s.after_prev("an expression");
  std::string list = expected_list(with_comma(s.expected, s.rule, s.prev_type), vocabulary);
  if (!list.empty()) return s.after_prev(list);
  return "unexpected " + s.found;
}

}  // namespace

void SyntaxErrorStrategy::report(antlr4::Parser* parser, antlr4::Token* found,
                                 const antlr4::misc::IntervalSet& expected) {
  antlr4::Token* prev = token_before(parser, found);
  antlr4::ParserRuleContext* ctx = parser->getContext();
  size_t rule = ctx ? ctx->getRuleIndex() : size_t(-1);
  size_t prev_type = prev ? prev->getType() : 0;
  // What a missing `{` would have opened: inside rule `block` its parent
  // tells; inside an expression (the condition of an `if`), the statement.
  auto* parent = ctx ? dynamic_cast<antlr4::ParserRuleContext*>(ctx->parent) : nullptr;
  size_t statement = statement_rule(ctx);
  size_t owner = rule == NNParser::RuleBlock && parent ? parent->getRuleIndex() : statement;

  // A line break after an operator or `,` does not end the statement (the
  // token filter dropped it), so "x = 1 +" followed by a new line finds the
  // next line's first token; the user's mistake is the end of the line.
  bool at_line_end = found->getType() == NNParser::NEWLINE;
  if (prev && is_continuation_token(prev_type) && found->getLine() > prev->getLine() &&
      found->getType() != NNParser::RPAREN && found->getType() != NNParser::RBRACKET)
    at_line_end = true;
  std::string found_text = found->getType() == antlr4::Token::EOF ? "end of file"
                           : at_line_end                           ? "end of line"
                                                                   : describe_token(found);
  bool prev_ends_statement = prev_type == NNParser::NEWLINE || prev_type == NNParser::SEMI;
  std::string after = prev && !prev_ends_statement ? " after `" + prev->getText() + "`" : "";

  Situation situation{expected, rule, statement, owner, prev_type, found->getType(), found_text, after};
  std::vector<std::string> notes;
  std::string message = wording(situation, parser->getVocabulary(), notes);

  // Point after the last good token when the problem is an end (of line or
  // file): the caret then sits where something is missing.
  bool point_after = prev && !prev_ends_statement && (at_line_end || found->getType() == antlr4::Token::EOF);
  Span span = point_after ? spans_.after(prev) : spans_.span(found);
  size_t line = point_after ? prev->getLine() : found->getLine();
  sink_.add(Diagnostic{message, span, std::move(notes)}, line);
}

void SyntaxErrorStrategy::reportNoViableAlternative(antlr4::Parser* parser, const antlr4::NoViableAltException& e) {
  antlr4::Token* found = e.getOffendingToken();
  antlr4::Token* start = e.getStartToken();
  if (start && found && start->getTokenIndex() != found->getTokenIndex()) {
    // The decision looked beyond its first token, so the expected set (which
    // is about the first token) does not apply; say what the start allows.
    antlr4::misc::IntervalSet after;
    switch (start->getType()) {
      case NNParser::FN: after.add(NNParser::NAME); after.add(NNParser::LPAREN); break;
      case NNParser::GRAPH: after.add(NNParser::NAME); after.add(NNParser::LBRACE); break;
      default: break;
    }
    report(parser, found, after);
    return;
  }
  report(parser, found, parser->getExpectedTokens());
}

void SyntaxErrorStrategy::reportInputMismatch(antlr4::Parser* parser, const antlr4::InputMismatchException& e) {
  report(parser, e.getOffendingToken(), e.getExpectedTokens());
}

void SyntaxErrorStrategy::reportFailedPredicate(antlr4::Parser* parser, const antlr4::FailedPredicateException& e) {
  // The grammar has no semantic predicates; precedence predicates cannot
  // fail at a token that starts nothing else. Say what is there.
  report(parser, e.getOffendingToken(), {});
}

void SyntaxErrorStrategy::reportUnwantedToken(antlr4::Parser* parser) {
  if (inErrorRecoveryMode(parser)) return;
  beginErrorCondition(parser);
  // ANTLR will drop this one token and go on. Name what the parser wanted.
  report(parser, parser->getCurrentToken(), getExpectedTokens(parser));
}

void SyntaxErrorStrategy::reportMissingToken(antlr4::Parser* parser) {
  if (inErrorRecoveryMode(parser)) return;
  beginErrorCondition(parser);
  report(parser, parser->getCurrentToken(), getExpectedTokens(parser));
}

void SyntaxErrorStrategy::sync(antlr4::Parser* parser) {
  // At the statement loops of a block or the program, a token that cannot
  // start a statement is reported and its line skipped; the loop goes on.
  // (ANTLR's own sync gives up the whole loop there.)
  antlr4::ParserRuleContext* ctx = parser->getContext();
  bool statement_loop = ctx && (ctx->getRuleIndex() == NNParser::RuleProgram || ctx->getRuleIndex() == NNParser::RuleBlock);
  if (!statement_loop) {
    DefaultErrorStrategy::sync(parser);
    return;
  }
  if (inErrorRecoveryMode(parser)) return;
  antlr4::atn::ATNState* state = parser->getATN().states[parser->getState()];
  antlr4::misc::IntervalSet next = parser->getATN().nextTokens(state);
  size_t la = parser->getTokenStream()->LA(1);
  if (next.contains(la) || next.contains(antlr4::Token::EPSILON)) return;
  report(parser, parser->getCurrentToken(), next);
  beginErrorCondition(parser);
  consumeUntil(parser, statement_ends());
}

antlr4::Token* SyntaxErrorStrategy::singleTokenDeletion(antlr4::Parser* parser) {
  // The first token of a new line (reached because a line ended in an
  // operator) most likely starts the next statement: dropping it would
  // make the rest of its line look like a continuation and add errors.
  antlr4::Token* current = parser->getCurrentToken();
  antlr4::Token* prev = token_before(parser, current);
  if (prev && current->getLine() > prev->getLine()) return nullptr;
  return DefaultErrorStrategy::singleTokenDeletion(parser);
}

bool SyntaxErrorStrategy::singleTokenInsertion(antlr4::Parser* parser) {
  // Never make up an opening bracket: the brackets in the input are known
  // to match, so a made-up `{` would swallow the rest of the file as a block.
  antlr4::misc::IntervalSet expected = getExpectedTokens(parser);
  if (expected.contains(size_t(NNParser::LBRACE)) || expected.contains(size_t(NNParser::LPAREN)) ||
      expected.contains(size_t(NNParser::LBRACKET)))
    return false;
  return DefaultErrorStrategy::singleTokenInsertion(parser);
}

antlr4::misc::IntervalSet SyntaxErrorStrategy::getErrorRecoverySet(antlr4::Parser* /*parser*/) {
  return statement_ends();
}

void SyntaxErrorStrategy::consumeUntil(antlr4::Parser* parser, const antlr4::misc::IntervalSet& set) {
  // Skip whole bracketed groups: a `}` or NEWLINE inside a `{...}` that is
  // skipped (a lambda body) is not the end of the statement being skipped.
  size_t depth = 0;
  for (size_t type = parser->getTokenStream()->LA(1); type != antlr4::Token::EOF;
       type = parser->getTokenStream()->LA(1)) {
    bool opens = type == NNParser::LPAREN || type == NNParser::LBRACKET || type == NNParser::LBRACE;
    bool closes = type == NNParser::RPAREN || type == NNParser::RBRACKET || type == NNParser::RBRACE;
    if (depth == 0 && set.contains(type)) return;
    if (opens) ++depth;
    if (closes && depth > 0) --depth;
    parser->consume();
  }
}

void LexerErrorListener::syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* /*offending*/, size_t line,
                                     size_t /*column*/, const std::string& /*message*/, std::exception_ptr /*error*/) {
  // A lexer reports before it makes a token; its input stream is where the
  // bad character starts.
  auto* lexer = dynamic_cast<antlr4::Lexer*>(recognizer);
  if (!lexer) return;
  size_t start = lexer->tokenStartCharIndex;
  uint32_t begin = spans_.byte_offset(start), end = spans_.byte_offset(lexer->getInputStream()->index() + 1);
  std::string text = lexer->getInputStream()->getText(antlr4::misc::Interval(start, start));
  sink_.add(Diagnostic{"unexpected character `" + text + "`", {spans_.file(), begin, std::max(begin, end)}, {}}, line);
}

}  // namespace nn::frontend
