// The parser front's pipeline (see parser.h): UTF-8 check, lexing, nesting
// check, newline filter, ANTLR parse (SLL first, full LL on failure), AST.
#include "frontend/parser.h"

#include <optional>

#include "NNLexer.h"
#include "NNParser.h"
#include "frontend/ast_builder.h"
#include "frontend/nesting_check.h"
#include "frontend/stack_guard.h"
#include "frontend/syntax_errors.h"
#include "frontend/token_filter.h"

namespace nn::frontend {

using grammar::NNLexer;
using grammar::NNParser;

namespace {

// One run of the front over one text. Holds everything ANTLR's objects point
// into: tokens read their text from the input stream, the parse tree lives
// in the parser.
class Front {
 public:
  // `text` is the file's, or the part of it that starts `base` bytes in.
  Front(const std::string& text, uint32_t file_id, const SourceFile& file, uint32_t base = 0)
      : text_(text), file_(file), spans_(file_id, valid_utf8(text) ? text : std::string(), base) {}

  // Lexes and checks nesting; false when that already failed (then there is
  // no point in parsing, and deep input must not reach the parser).
  bool prepare();
  // Parses the prepared tokens; null when there were syntax errors.
  NNParser::ProgramContext* parse();
  // For input that stops early (brackets open at its end, or a last token
  // that continues the statement): parses it all the same and gives the
  // syntax errors found before its end. Those are real: no more input can
  // mend them. (Errors at the end only say that the input stops early.)
  // Used instead of parse(); the diagnostics of prepare() stay.
  std::vector<Diagnostic> errors_before_end();

  SyntaxDiagnostics& diagnostics() { return sink_; }
  const TokenSpans& spans() const { return spans_; }
  bool open_at_end() const { return open_at_end_; }
  // Whether the UTF-8 check or the lexer found something wrong.
  bool lexing_failed() const { return lexing_failed_; }
  // The type of the last token that is not a NEWLINE (0 when none).
  size_t last_token_type() const { return last_token_type_; }

 private:
  static bool valid_utf8(const std::string& text) { return first_invalid_utf8(text) == std::string::npos; }
  void lex();

  const std::string& text_;
  const SourceFile& file_;
  TokenSpans spans_;
  SyntaxDiagnostics sink_;
  bool open_at_end_ = false;
  bool lexing_failed_ = false;
  size_t last_token_type_ = 0;
  uint32_t last_token_end_ = 0;  // byte offset where the last token that is not a NEWLINE ends

  std::optional<antlr4::ANTLRInputStream> input_;
  std::optional<NNLexer> lexer_;
  std::vector<std::unique_ptr<antlr4::Token>> tokens_;
  std::optional<TokenListSource> list_;
  std::optional<TokenFilter> filter_;
  std::optional<antlr4::CommonTokenStream> stream_;
  std::optional<NNParser> parser_;
};

// Notes for characters that other languages use where nn has a word.
std::vector<std::string> hint_for(const std::string& character) {
  if (character == "!") return {"help: nn writes `not x` for negation (and `!=` for \"not equal\")"};
  if (character == "&") return {"help: nn writes `and` (on tensors: `logical_and`)"};
  if (character == "|") return {"help: nn writes `or` (on tensors: `logical_or`)"};
  if (character == "'") return {"help: strings are written in double quotes: \"...\""};
  return {};
}

// Lexes the whole input. A bad character is reported and left out; an
// unterminated string is reported and passed on as a string, so that the
// parser does not pile further errors on either.
void Front::lex() {
  input_.emplace(text_);
  lexer_.emplace(&*input_);
  LexerErrorListener listener(spans_, sink_);
  lexer_->removeErrorListeners();
  lexer_->addErrorListener(&listener);
  for (;;) {
    std::unique_ptr<antlr4::Token> token = lexer_->nextToken();
    size_t type = token->getType();
    if (type == NNLexer::BAD_CHAR) {
      std::string what = describe_token(token.get());  // `$`, or "the character U+0000"
      if (what.starts_with("the character ")) what.erase(0, 14);
      sink_.add(Diagnostic{"unexpected character " + what, spans_.span(token.get()), hint_for(token->getText())},
                token->getLine());
      continue;
    }
    if (type == NNLexer::UNTERMINATED_STRING) {
      sink_.add(Diagnostic{"unterminated string: a string must end with `\"` on the line where it starts",
                           spans_.span(token.get()), {}},
                token->getLine());
      static_cast<antlr4::CommonToken*>(token.get())->setType(NNLexer::STRING);
    }
    if (type != NNLexer::NEWLINE && type != antlr4::Token::EOF) {
      last_token_type_ = token->getType();
      last_token_end_ = spans_.span(token.get()).end;
    }
    tokens_.push_back(std::move(token));
    if (type == antlr4::Token::EOF) break;
  }
  lexer_->removeErrorListeners();  // `listener` dies here
}

bool Front::prepare() {
  if (size_t bad = first_invalid_utf8(text_); bad != std::string::npos) {
    Span span{spans_.file(), uint32_t(bad), uint32_t(bad + 1)};
    sink_.add(Diagnostic{"this file is not valid UTF-8 text", span, {}}, file_.line_col(uint32_t(bad)).line);
    lexing_failed_ = true;
    return false;
  }
  lex();
  lexing_failed_ = sink_.any();
  std::vector<const antlr4::Token*> view;
  view.reserve(tokens_.size());
  for (const auto& token : tokens_) view.push_back(token.get());
  NestingResult nesting = check_nesting(view, spans_, file_);
  for (Diagnostic& d : nesting.diagnostics) {
    size_t line = file_.line_col(d.span.begin).line;
    sink_.add(std::move(d), line);
  }
  open_at_end_ = nesting.open_at_end;
  return nesting.diagnostics.empty();
}

// Stops the parser, as each rule begins, when the stack is nearly full.
struct StackListener : antlr4::tree::ParseTreeListener {
  void enterEveryRule(antlr4::ParserRuleContext*) override {
    if (stack_nearly_full()) throw StackExhausted{};
  }
  void visitTerminal(antlr4::tree::TerminalNode*) override {}
  void visitErrorNode(antlr4::tree::ErrorNode*) override {}
  void exitEveryRule(antlr4::ParserRuleContext*) override {}
};

NNParser::ProgramContext* Front::parse() {
  static StackListener stack_listener;  // holds no state
  list_.emplace(std::move(tokens_));
  filter_.emplace(*list_);
  stream_.emplace(&*filter_);
  parser_.emplace(&*stream_);
  parser_->removeErrorListeners();
  parser_->addParseListener(&stack_listener);

  // Nearly every input parses in SLL mode, which is faster; only when it
  // fails is the input parsed again with full LL and our error reporting
  // (SLL can fail where LL would succeed, never the other way).
  auto* simulator = parser_->getInterpreter<antlr4::atn::ParserATNSimulator>();
  simulator->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  parser_->setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  try {
    return parser_->program();
  } catch (const antlr4::ParseCancellationException&) {
  }
  parser_->reset();
  simulator->setPredictionMode(antlr4::atn::PredictionMode::LL);
  parser_->setErrorHandler(std::make_shared<SyntaxErrorStrategy>(spans_, sink_));
  NNParser::ProgramContext* tree = parser_->program();
  if (parser_->getNumberOfSyntaxErrors() > 0 || sink_.any()) return nullptr;
  return tree;
}

std::vector<Diagnostic> Front::errors_before_end() {
  SyntaxDiagnostics kept;
  std::swap(kept, sink_);
  parse();
  std::swap(kept, sink_);
  // A report at a token of the input begins before that token's end (at it,
  // or right after the token before it); one about the end begins at or
  // after the last token's end.
  std::vector<Diagnostic> before;
  for (Diagnostic& d : kept.take())
    if (d.span.begin < last_token_end_) before.push_back(std::move(d));
  return before;
}

}  // namespace

bool is_keyword(std::string_view word) {
  static constexpr std::string_view keywords[] = {
      "let", "fn", "graph", "return", "if", "else", "for", "in", "while", "break",
      "continue", "import", "as", "and", "or", "not", "true", "false", "none"};
  for (std::string_view k : keywords)
    if (word == k) return true;
  return false;
}

bool is_identifier(std::string_view word) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (word.empty() || !letter(word[0])) return false;
  for (char c : word)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  return !is_keyword(word);
}

namespace {
std::unique_ptr<Program> parse_text(const SourceManager& sources, uint32_t file_id, const std::string& text,
                                    uint32_t base, OpenEnd open_end = OpenEnd::unclosed_bracket) {
  const SourceFile& file = sources.file(file_id);
  // The nesting check bounds how deep parsing goes, not the stack a thread
  // has for it: a host's thread may have a small one, and a host function
  // that evaluates code for the code it runs nests parses in one another.
  const auto too_deep = [&] {
    return ScriptError(
        Diagnostic{"the code nests too deeply for the stack this thread has left", Span{file_id, base, base}, {}});
  };
  if (stack_nearly_full()) throw too_deep();
  Front front(text, file_id, file, base);
  NNParser::ProgramContext* tree = nullptr;
  try {
    if (front.prepare()) {
      tree = front.parse();
    } else if (open_end == OpenEnd::error_before_end && front.open_at_end() && !front.lexing_failed()) {
      // A REPL entry ends where a line made it wrong: that error, not the
      // brackets it leaves open (the user was still typing).
      std::vector<Diagnostic> errors = front.errors_before_end();
      if (!errors.empty()) throw ScriptError(std::move(errors));
    }
  } catch (const antlr4::RuntimeException&) {
    // Not expected: our strategy recovers from every syntax error. Should
    // ANTLR still give up, say so in words rather than let its text out.
    front.diagnostics().add(Diagnostic{"could not parse this file", Span{file_id, base, base}, {}}, 1);
  } catch (const StackExhausted&) {
    throw too_deep();
  }
  if (front.diagnostics().any()) throw ScriptError(front.diagnostics().take());
  std::unique_ptr<Program> program;
  try {
    program = build_ast(tree, front.spans(), front.diagnostics(), sources.share(file_id));
  } catch (const StackExhausted&) {
    throw too_deep();
  }
  if (front.diagnostics().any()) throw ScriptError(front.diagnostics().take());
  program->file = file_id;
  return program;
}
}  // namespace

std::unique_ptr<Program> parse_program(const SourceManager& sources, uint32_t file_id, OpenEnd open_end) {
  return parse_text(sources, file_id, sources.file(file_id).text(), 0, open_end);
}

std::unique_ptr<Program> parse_program_part(const SourceManager& sources, uint32_t file_id, uint32_t begin,
                                            uint32_t end) {
  return parse_text(sources, file_id, sources.file(file_id).text().substr(begin, end - begin), begin);
}

Completeness check_complete(const std::string& text) {
  SourceFile file("<input>", text);
  Front front(text, 0, file);
  try {
    bool prepared = front.prepare();
    if (front.lexing_failed()) return Completeness::error;  // bad characters, unterminated strings
    if (!prepared && !front.open_at_end()) return Completeness::error;
    // Open brackets, or a line ending in a binary operator or `,`: the input
    // goes on on the next line, unless what came so far is wrong already.
    size_t last = front.last_token_type();
    bool continues = last != 0 && last != NNLexer::SEMI && is_continuation_token(last);
    if (!prepared || continues)
      return front.errors_before_end().empty() ? Completeness::incomplete : Completeness::error;
    NNParser::ProgramContext* tree = front.parse();
    if (!tree) return Completeness::error;
    build_ast(tree, front.spans(), front.diagnostics(), nullptr);
    return front.diagnostics().any() ? Completeness::error : Completeness::complete;
  } catch (const antlr4::RuntimeException&) {
    return Completeness::error;
  } catch (const StackExhausted&) {
    return Completeness::complete;  // the parse that runs it says so
  }
}

}  // namespace nn::frontend
