// Parse tree (ANTLR's, from grammar/NN.g4) -> our AST (frontend/ast.h).
#pragma once
#include <memory>

#include "NNParser.h"
#include "frontend/ast.h"
#include "frontend/syntax_errors.h"

namespace nn::frontend {

// Builds the AST of a tree that parsed without syntax errors. Problems only
// visible here (bad literals and escapes, invalid assignment targets,
// argument and parameter order, duplicate names) go to `sink`; the program
// returned is meaningful only when `sink` stayed empty. Its functions hold
// `source`, the text their spans point into.
std::unique_ptr<Program> build_ast(grammar::NNParser::ProgramContext* tree, const TokenSpans& spans,
                                   SyntaxDiagnostics& sink, std::shared_ptr<const void> source);

}  // namespace nn::frontend
