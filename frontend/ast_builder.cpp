// Parse tree -> AST (see ast_builder.h). Walks ANTLR's tree directly (a
// dynamic_cast per labelled alternative) rather than through the generated
// visitor, whose antlrcpp::Any results cannot hold our move-only nodes.
// Recursion here is bounded by the nesting check that ran before parsing.
#include "frontend/ast_builder.h"
#include "frontend/bind_args.h"
#include "frontend/parser.h"
#include "frontend/stack_guard.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>

namespace nn::frontend {

using P = grammar::NNParser;

namespace {

size_t utf8_length(unsigned char lead) {
  return lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : 4;
}

class Builder {
 public:
  Builder(const TokenSpans& spans, SyntaxDiagnostics& sink, std::shared_ptr<const void> source)
      : spans_(spans), sink_(sink), source_(std::move(source)) {}

  std::unique_ptr<Program> program(P::ProgramContext* ctx) {
    auto program = std::make_unique<Program>();
    program->file = spans_.file();
    stmt_lines(ctx->stmtLine(), program->stmts);
    return program;
  }

 private:
  // ------------------------------------------------------------ helpers
  Span span(antlr4::Token* token) const { return spans_.span(token); }
  Span span(antlr4::tree::TerminalNode* node) const { return spans_.span(node->getSymbol()); }
  Span span(antlr4::ParserRuleContext* ctx) const { return spans_.span(ctx->getStart(), ctx->getStop()); }

  void error(std::string message, Span where, antlr4::Token* at) {
    sink_.add(Diagnostic{std::move(message), where, {}}, at->getLine());
  }
  void error(std::string message, antlr4::ParserRuleContext* at) { error(std::move(message), span(at), at->getStart()); }

  // ------------------------------------------------------------ statements
  void stmt_lines(const std::vector<P::StmtLineContext*>& lines, std::vector<StmtPtr>& out) {
    for (P::StmtLineContext* line : lines)
      if (P::StmtContext* s = line->stmt()) out.push_back(stmt(s));
  }

  std::unique_ptr<Block> block(P::BlockContext* ctx) {
    auto result = std::make_unique<Block>();
    result->span = span(ctx);
    stmt_lines(ctx->stmtLine(), result->stmts);
    return result;
  }

  StmtPtr stmt(P::StmtContext* ctx) {
    if (stack_nearly_full()) throw StackExhausted{};
    if (auto* c = ctx->exprStmt()) return expr_stmt(c);
    if (auto* c = ctx->letStmt()) return std::make_unique<LetStmt>(pattern(c->pattern()), expr(c->expr()), span(c));
    if (auto* c = ctx->fnDecl()) {
      bool is_graph = c->kind->getType() == P::GRAPH;
      auto def = function(c->NAME()->getText(), span(c->NAME()), c->params(), c->block(), is_graph, span(c));
      return std::make_unique<FnDeclStmt>(std::move(def), span(c));
    }
    if (auto* c = ctx->graphBlock()) return std::make_unique<GraphBlockStmt>(block(c->block()), span(c));
    if (auto* c = ctx->forStmt())
      return std::make_unique<ForStmt>(pattern(c->pattern()), expr(c->expr()), block(c->block()), span(c));
    if (auto* c = ctx->whileStmt()) return std::make_unique<WhileStmt>(expr(c->expr()), block(c->block()), span(c));
    if (auto* c = ctx->breakStmt()) return std::make_unique<BreakStmt>(span(c));
    if (auto* c = ctx->continueStmt()) return std::make_unique<ContinueStmt>(span(c));
    if (auto* c = ctx->returnStmt())
      return std::make_unique<ReturnStmt>(c->expr() ? expr(c->expr()) : nullptr, span(c));
    return import_stmt(ctx->importStmt());
  }

  StmtPtr expr_stmt(P::ExprStmtContext* ctx) {
    if (P::IfExprContext* c = lone_if(ctx)) return if_stmt(c);
    if (!ctx->assignOp()) return std::make_unique<ExprStmt>(expr(ctx->expr(0)), span(ctx));
    ExprPtr target = expr(ctx->expr(0));
    if (target->kind != ExprKind::Name && target->kind != ExprKind::Field && target->kind != ExprKind::Index)
      error("cannot assign to this expression", ctx->expr(0));
    antlr4::Token* op_token = ctx->assignOp()->getStart();
    AssignOp op = AssignOp::Set;
    switch (op_token->getType()) {
      case P::PLUS_ASSIGN: op = AssignOp::Add; break;
      case P::MINUS_ASSIGN: op = AssignOp::Sub; break;
      case P::STAR_ASSIGN: op = AssignOp::Mul; break;
      case P::SLASH_ASSIGN: op = AssignOp::Div; break;
      default: break;
    }
    return std::make_unique<AssignStmt>(op, std::move(target), expr(ctx->expr(1)), span(ctx), span(op_token));
  }

  // An `if` standing alone as a statement. `else if` becomes an else block
  // holding just the inner `if`.
  StmtPtr if_stmt(P::IfExprContext* ctx) {
    std::unique_ptr<Block> else_block;
    if (P::IfExprContext* inner = ctx->ifExpr()) {
      else_block = std::make_unique<Block>();
      else_block->span = span(inner);
      else_block->stmts.push_back(if_stmt(inner));
    } else if (ctx->block().size() > 1) {
      else_block = block(ctx->block(1));
    }
    return std::make_unique<IfStmt>(expr(ctx->expr()), block(ctx->block(0)), std::move(else_block), span(ctx));
  }

  // The `if` of an expression statement that is nothing else, or null.
  static P::IfExprContext* lone_if(P::ExprStmtContext* ctx) {
    if (ctx->assignOp()) return nullptr;
    auto* e = dynamic_cast<P::PrimaryExprContext*>(ctx->expr(0));
    auto* v = e ? dynamic_cast<P::IfValueContext*>(e->primary()) : nullptr;
    return v ? v->ifExpr() : nullptr;
  }

  StmtPtr import_stmt(P::ImportStmtContext* ctx) {
    antlr4::Token* path_token = ctx->STRING()->getSymbol();
    std::string path = string_value(path_token);
    if (path.size() > 3 && path.ends_with(".nn")) path.resize(path.size() - 3);
    std::string alias;
    if (ctx->NAME()) {
      alias = ctx->NAME()->getText();
    } else {
      size_t slash = path.find_last_of('/');
      alias = slash == std::string::npos ? path : path.substr(slash + 1);
      if (path.empty()) {
        error("the path of an import is empty", span(path_token), path_token);
      } else if (!is_identifier(alias)) {
        error("`" + alias + "` is not a name that can be bound; add `as name` to the import", span(path_token),
              path_token);
      }
    }
    return std::make_unique<ImportStmt>(std::move(path), std::move(alias), span(ctx));
  }

  // `(a)` binds like `a`; `(a,)` and `(a, b)` are tuple patterns.
  Pattern pattern(P::PatternContext* ctx) {
    std::set<std::string> seen;
    return pattern(ctx, seen);
  }
  Pattern pattern(P::PatternContext* ctx, std::set<std::string>& seen) {
    std::vector<P::PatternContext*> items = ctx->pattern();
    if (!ctx->NAME() && items.size() == 1 && !ctx->trailing) return pattern(items[0], seen);
    Pattern result;
    result.span = span(ctx);
    if (ctx->NAME()) {
      result.name = ctx->NAME()->getText();
      if (!seen.insert(result.name).second) error("`" + result.name + "` is bound twice in this pattern", ctx);
      return result;
    }
    result.is_tuple = true;
    for (P::PatternContext* item : items) result.items.push_back(pattern(item, seen));
    return result;
  }

  std::shared_ptr<FunctionDef> function(std::string name, Span name_span, P::ParamsContext* params,
                                        P::BlockContext* body, bool is_graph, Span whole) {
    auto def = std::make_shared<FunctionDef>();
    def->name = std::move(name);
    def->name_span = name_span;
    def->is_graph = is_graph;
    def->span = whole;
    if (params) {
      std::set<std::string> seen;
      bool seen_default = false;
      auto all = params->param();
      for (P::ParamContext* p : all) {
        Param param;
        param.name = p->NAME()->getText();
        param.span = span(p->NAME());
        param.is_rest = p->star != nullptr;
        if (!seen.insert(param.name).second) error("duplicate parameter `" + param.name + "`", param.span, p->getStart());
        if (param.is_rest) {
          if (p->expr()) error("the rest parameter `*" + param.name + "` takes no default", param.span, p->getStart());
          if (p != all.back())
            error("the rest parameter `*" + param.name + "` must be the last parameter", param.span, p->getStart());
        } else if (p->expr()) {
          param.default_value = expr(p->expr());
          seen_default = true;
        } else if (seen_default) {
          error("parameter `" + param.name + "` needs a default value: it follows one that has a default",
                param.span, p->getStart());
        }
        def->params.push_back(std::move(param));
      }
    }
    def->body = block(body);
    def->parameters = make_parameters(*def);
    def->source = source_;
    return def;
  }

  // ------------------------------------------------------------ expressions
  ExprPtr expr(P::ExprContext* ctx) {
    if (stack_nearly_full()) throw StackExhausted{};
    if (auto* c = dynamic_cast<P::PrimaryExprContext*>(ctx)) return primary(c->primary());
    if (auto* c = dynamic_cast<P::CallExprContext*>(ctx)) return call(c);
    if (auto* c = dynamic_cast<P::FieldExprContext*>(ctx)) {
      return std::make_unique<FieldExpr>(expr(c->expr()), c->NAME()->getText(), span(c), span(c->NAME()));
    }
    if (auto* c = dynamic_cast<P::IndexExprContext*>(ctx)) return index(c);
    if (auto* c = dynamic_cast<P::AddExprContext*>(ctx))
      return binary(c->op->getType() == P::PLUS ? BinOp::Add : BinOp::Sub, c, c->expr(0), c->expr(1), c->op);
    if (auto* c = dynamic_cast<P::MulExprContext*>(ctx)) {
      BinOp op = c->op->getType() == P::STAR    ? BinOp::Mul
                 : c->op->getType() == P::SLASH ? BinOp::Div
                 : c->op->getType() == P::FLOORDIV ? BinOp::FloorDiv
                 : c->op->getType() == P::PERCENT ? BinOp::Mod
                                                  : BinOp::MatMul;
      return binary(op, c, c->expr(0), c->expr(1), c->op);
    }
    if (auto* c = dynamic_cast<P::PowExprContext*>(ctx))
      return binary(BinOp::Pow, c, c->expr(0), c->expr(1), c->POW()->getSymbol());
    if (auto* c = dynamic_cast<P::CmpExprContext*>(ctx)) {
      BinOp op = BinOp::Eq;
      switch (c->op->getType()) {
        case P::NE: op = BinOp::Ne; break;
        case P::LT: op = BinOp::Lt; break;
        case P::LE: op = BinOp::Le; break;
        case P::GT: op = BinOp::Gt; break;
        case P::GE: op = BinOp::Ge; break;
        default: break;
      }
      // Python reads 0 < x < 1 as 0 < x and x < 1; a left-to-right reading
      // would compare the bool 0 < x with 1, silently. So a chain is refused.
      if (dynamic_cast<P::CmpExprContext*>(c->expr(0)))
        error("comparisons do not chain: `a < b < c` would compare the bool `a < b` with c; write "
              "`a < b and b < c` (logical_and(a < b, b < c) for tensors), or put the first comparison in brackets",
              span(c), c->op);
      return binary(op, c, c->expr(0), c->expr(1), c->op);
    }
    if (auto* c = dynamic_cast<P::NegExprContext*>(ctx)) return negation(c);
    if (auto* c = dynamic_cast<P::NotExprContext*>(ctx)) return std::make_unique<NotExpr>(expr(c->expr()), span(c));
    if (auto* c = dynamic_cast<P::RangeExprContext*>(ctx))
      return std::make_unique<RangeExpr>(expr(c->expr(0)), expr(c->expr(1)), span(c));
    if (auto* c = dynamic_cast<P::AndExprContext*>(ctx))
      return std::make_unique<LogicalExpr>(true, expr(c->expr(0)), expr(c->expr(1)), span(c));
    auto* c = dynamic_cast<P::OrExprContext*>(ctx);
    return std::make_unique<LogicalExpr>(false, expr(c->expr(0)), expr(c->expr(1)), span(c));
  }

  ExprPtr binary(BinOp op, P::ExprContext* whole, P::ExprContext* lhs, P::ExprContext* rhs, antlr4::Token* op_token) {
    ExprPtr left = expr(lhs);
    ExprPtr right = expr(rhs);
    return std::make_unique<BinaryExpr>(op, std::move(left), std::move(right), span(whole), span(op_token));
  }

  // `-9223372036854775808` is the one integer whose digits alone overflow.
  ExprPtr negation(P::NegExprContext* ctx) {
    if (auto* operand = dynamic_cast<P::PrimaryExprContext*>(ctx->expr())) {
      if (auto* literal = dynamic_cast<P::IntLitContext*>(operand->primary());
          literal && literal->getText() == "9223372036854775808")
        return std::make_unique<IntLit>(std::numeric_limits<int64_t>::min(), span(ctx));
    }
    return std::make_unique<UnaryExpr>(expr(ctx->expr()), span(ctx));
  }

  ExprPtr call(P::CallExprContext* ctx) {
    auto result = std::make_unique<CallExpr>(expr(ctx->expr()), span(ctx));
    if (P::ArgsContext* args = ctx->args()) {
      std::set<std::string> keywords;
      bool reported_order = false;
      for (P::ArgContext* a : args->arg()) {
        Arg arg;
        if (a->NAME()) {
          arg.keyword = a->NAME()->getText();
          arg.keyword_span = span(a->NAME());
          if (!keywords.insert(arg.keyword).second)
            error("keyword argument `" + arg.keyword + "` is given twice", arg.keyword_span, a->getStart());
        } else if (!keywords.empty() && !reported_order) {
          error("keyword arguments must come after positional ones", a);
          reported_order = true;
        }
        arg.value = expr(a->expr());
        result->args.push_back(std::move(arg));
      }
    }
    return result;
  }

  ExprPtr index(P::IndexExprContext* ctx) {
    auto result = std::make_unique<IndexExpr>(expr(ctx->expr()), span(ctx));
    for (P::IndexItemContext* i : ctx->indexItem()) {
      IndexItemExpr item;
      item.span = span(i);
      if (P::SliceTailContext* tail = i->sliceTail()) {
        item.is_slice = true;
        if (i->expr()) item.start = expr(i->expr());
        if (tail->hi) item.stop = expr(tail->hi);
        if (tail->step) item.step = expr(tail->step);
      } else {
        item.index = expr(i->expr());
      }
      result->items.push_back(std::move(item));
    }
    return result;
  }

  ExprPtr primary(P::PrimaryContext* ctx) {
    if (auto* c = dynamic_cast<P::NameRefContext*>(ctx)) return std::make_unique<NameExpr>(c->getText(), span(c));
    if (auto* c = dynamic_cast<P::IntLitContext*>(ctx)) return int_literal(c->INT()->getSymbol());
    if (auto* c = dynamic_cast<P::FloatLitContext*>(ctx)) return float_literal(c->FLOAT()->getSymbol());
    if (auto* c = dynamic_cast<P::StringLitContext*>(ctx))
      return std::make_unique<StrLit>(string_value(c->STRING()->getSymbol()), span(c));
    if (auto* c = dynamic_cast<P::BoolLitContext*>(ctx)) return std::make_unique<BoolLit>(c->TRUE() != nullptr, span(c));
    if (auto* c = dynamic_cast<P::NoneLitContext*>(ctx)) return std::make_unique<NoneLit>(span(c));
    if (auto* c = dynamic_cast<P::ListLitContext*>(ctx)) {
      auto list = std::make_unique<ListExpr>(span(c));
      for (P::ExprContext* e : c->expr()) list->items.push_back(expr(e));
      return list;
    }
    if (auto* c = dynamic_cast<P::ParenOrTupleContext*>(ctx)) {
      std::vector<P::ExprContext*> items = c->expr();
      if (items.size() == 1 && !c->trailing) return expr(items[0]);  // just parentheses
      auto tuple = std::make_unique<TupleExpr>(span(c));
      for (P::ExprContext* e : items) tuple->items.push_back(expr(e));
      return tuple;
    }
    if (auto* c = dynamic_cast<P::RecordLitContext*>(ctx)) return record(c);
    if (auto* c = dynamic_cast<P::IfValueContext*>(ctx)) return if_expr(c->ifExpr());
    auto* c = dynamic_cast<P::LambdaContext*>(ctx);
    auto def = function("", span(c->FN()), c->params(), c->block(), false, span(c));
    return std::make_unique<LambdaExpr>(std::move(def), span(c));
  }

  // An `if` used as a value; `else if` becomes an else block holding the
  // inner `if` as its value.
  ExprPtr if_expr(P::IfExprContext* ctx) {
    std::unique_ptr<Block> else_block;
    if (ctx->block().size() == 1 && !ctx->ifExpr()) {
      error("an `if` used as a value needs an `else`: `if c { a } else { b }`", ctx);
      else_block = std::make_unique<Block>();
      else_block->span = span(ctx);
    } else if (P::IfExprContext* inner = ctx->ifExpr()) {
      else_block = std::make_unique<Block>();
      else_block->span = span(inner);
      ExprPtr value = if_expr(inner);
      const Span at = value->span;
      else_block->stmts.push_back(std::make_unique<ExprStmt>(std::move(value), at));
    } else {
      else_block = block(ctx->block(1));
    }
    return std::make_unique<IfExpr>(expr(ctx->expr()), block(ctx->block(0)), std::move(else_block), span(ctx));
  }

  ExprPtr record(P::RecordLitContext* ctx) {
    auto result = std::make_unique<RecordExpr>(span(ctx));
    std::set<std::string> names;
    for (P::FieldContext* f : ctx->field()) {
      RecordExpr::Field field;
      field.name = f->NAME()->getText();
      field.name_span = span(f->NAME());
      if (!names.insert(field.name).second)
        error("duplicate field `" + field.name + "` in this record", field.name_span, f->getStart());
      field.value = expr(f->expr());
      result->fields.push_back(std::move(field));
    }
    return result;
  }

  // ------------------------------------------------------------ literals
  ExprPtr int_literal(antlr4::Token* token) {
    std::string text = token->getText();
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      error("integer literal too large", span(token), token);
      value = 0;
    }
    return std::make_unique<IntLit>(value, span(token));
  }

  ExprPtr float_literal(antlr4::Token* token) {
    std::string text = token->getText();
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // Too small rounds to zero, as everywhere; too large is a mistake.
      // strtod tells which (HUGE_VAL past the range, 0 or a subnormal below
      // it) where the text cannot: 1000...0e-1 is large, 0.000...01 tiny.
      bool tiny = std::fabs(std::strtod(text.c_str(), nullptr)) < 1.0;
      if (!tiny) error("float literal too large", span(token), token);
      value = 0;
    } else if (ec != std::errc() || end != text.data() + text.size()) {
      error("malformed number `" + text + "`", span(token), token);
    }
    return std::make_unique<FloatLit>(value, span(token));
  }

  // The value of a string token, escapes decoded.
  std::string string_value(antlr4::Token* token) {
    std::string text = token->getText();
    Span where = span(token);
    std::string out;
    out.reserve(text.size());
    size_t end = text.size() >= 2 && text.back() == '"' ? text.size() - 1 : text.size();
    for (size_t i = 1; i < end; ++i) {
      if (text[i] != '\\' || i + 1 >= end) {
        out += text[i];
        continue;
      }
      char next = text[++i];
      switch (next) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        default: {
          size_t length = utf8_length(static_cast<unsigned char>(next));
          Span escape{where.file, uint32_t(where.begin + i - 1), uint32_t(where.begin + i + length)};
          error("unknown escape `\\" + text.substr(i, length) + "` in a string (the escapes are \\n, \\t, \\\" and \\\\)",
                escape, token);
          out += text.substr(i, length);
          i += length - 1;
        }
      }
    }
    return out;
  }

  const TokenSpans& spans_;
  SyntaxDiagnostics& sink_;
  std::shared_ptr<const void> source_;
};

}  // namespace

std::unique_ptr<Program> build_ast(P::ProgramContext* tree, const TokenSpans& spans, SyntaxDiagnostics& sink,
                                   std::shared_ptr<const void> source) {
  return Builder(spans, sink, std::move(source)).program(tree);
}

}  // namespace nn::frontend
