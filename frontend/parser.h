// The parser front's entry points: source text -> AST (frontend/ast.h), and
// the REPL's question "is this input finished?".
//
// The pipeline: check UTF-8; lex (reporting bad characters and unterminated
// strings); check bracket matching and nesting depth (nesting_check.h); drop
// the newlines that do not end statements (token_filter.h); parse with the
// ANTLR parser generated from grammar/NN.g4 (syntax_errors.h words the
// errors); build the AST (ast_builder.h).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "frontend/ast.h"
#include "frontend/diagnostic.h"
#include "frontend/source.h"

namespace nn::frontend {

// What a text whose brackets are still open at its end reports: the bracket
// left open (where it was opened: a file), or for a REPL entry (which
// check_complete ended because of an error) the syntax errors before the
// end when there are any, the bracket otherwise.
enum class OpenEnd : uint8_t { unclosed_bracket, error_before_end };

// Parses one source already added to `sources`; throws ScriptError holding
// every syntax diagnostic found (at most 10, in source order).
std::unique_ptr<Program> parse_program(const SourceManager& sources, uint32_t file_id,
                                       OpenEnd open_end = OpenEnd::unclosed_bracket);
// Parses the bytes [begin, end) of such a source alone (one declaration of
// the stdlib's prelude, frontend/prelude.cpp); its spans still point into
// the whole file (only the rule of one syntax error per line counts lines
// from `begin`).
std::unique_ptr<Program> parse_program_part(const SourceManager& sources, uint32_t file_id, uint32_t begin,
                                            uint32_t end);

// SPEC §2: a keyword (`let`, `fn`, ... `none`), and a name a script can
// write: `[A-Za-z_][A-Za-z0-9_]*` and not a keyword.
bool is_keyword(std::string_view word);
bool is_identifier(std::string_view word);

// For the REPL: is this text a complete input, an incomplete one (an open
// bracket or block, a trailing binary operator or `,`), or a real error?
// A syntax error before the end of the text is real at once, brackets open
// or not: no more input could mend it.
enum class Completeness { complete, incomplete, error };
Completeness check_complete(const std::string& text);

}  // namespace nn::frontend
