// The AST of nn: our own tree (not ANTLR's), every node with its source span.
// Built from the parse tree by ast_builder.cpp; walked by the interpreter and
// the name checker.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <mutex>

#include "backend/tensor.h"
#include "frontend/source.h"
#include "frontend/symbol.h"

namespace nn::frontend {

struct Expr;
struct Stmt;
struct Block;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

// ---------------------------------------------------------------- expressions
enum class ExprKind : uint8_t {
  Int, Float, Bool, None, Str,
  Name,
  List,     // [a, b, ...]: a tensor when every leaf is a number/bool, else a list
  Tuple,    // (a, b), (a,), ()
  Record,   // {w: x, b: y}
  Unary,    // -x
  Not,      // not x
  Binary,   // + - * / % @ ** and comparisons
  Logical,  // and, or (short-circuit)
  Range,    // a..b
  Call,     // f(x, k=v)
  Index,    // x[i, a:b:s]
  Field,    // x.name
  Lambda,   // fn(x) { ... }
  If,       // if c { a } else { b }: the value of the branch taken
};

enum class BinOp : uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, MatMul, Pow, Eq, Ne, Lt, Le, Gt, Ge };
const char* binop_symbol(BinOp op);  // "+", "@", "=="

struct Expr {
  ExprKind kind;
  Span span;
  explicit Expr(ExprKind k, Span s) : kind(k), span(s) {}
  virtual ~Expr() = default;
};

// A syntax tree is read-only once built (the stdlib's is shared by every
// interpreter, on any thread): names are interned and parameters bound as it
// is built; only a number literal's tensor is made later, once.
struct IntLit : Expr {
  int64_t value;
  // The literal as a weak 0-d tensor, made once when first used with a tensor.
  mutable std::once_flag made;
  mutable backend::Tensor as_tensor;
  IntLit(int64_t v, Span s) : Expr(ExprKind::Int, s), value(v) {}
};
struct FloatLit : Expr {
  double value;
  mutable std::once_flag made;
  mutable backend::Tensor as_tensor;
  FloatLit(double v, Span s) : Expr(ExprKind::Float, s), value(v) {}
};
struct BoolLit : Expr {
  bool value;
  BoolLit(bool v, Span s) : Expr(ExprKind::Bool, s), value(v) {}
};
struct NoneLit : Expr {
  explicit NoneLit(Span s) : Expr(ExprKind::None, s) {}
};
struct StrLit : Expr {
  std::string value;  // escapes already decoded
  StrLit(std::string v, Span s) : Expr(ExprKind::Str, s), value(std::move(v)) {}
};
struct NameExpr : Expr {
  std::string name;
  Symbol sym;  // the name interned
  NameExpr(std::string n, Span s) : Expr(ExprKind::Name, s), name(std::move(n)), sym(intern(name)) {}
};
struct ListExpr : Expr {
  std::vector<ExprPtr> items;
  explicit ListExpr(Span s) : Expr(ExprKind::List, s) {}
};
struct TupleExpr : Expr {
  std::vector<ExprPtr> items;
  explicit TupleExpr(Span s) : Expr(ExprKind::Tuple, s) {}
};
struct RecordExpr : Expr {
  struct Field {
    std::string name;
    Span name_span;
    ExprPtr value;
  };
  std::vector<Field> fields;
  explicit RecordExpr(Span s) : Expr(ExprKind::Record, s) {}
};
struct UnaryExpr : Expr {  // only negation: unary minus
  ExprPtr operand;
  UnaryExpr(ExprPtr e, Span s) : Expr(ExprKind::Unary, s), operand(std::move(e)) {}
};
struct NotExpr : Expr {
  ExprPtr operand;
  NotExpr(ExprPtr e, Span s) : Expr(ExprKind::Not, s), operand(std::move(e)) {}
};
struct BinaryExpr : Expr {
  BinOp op;
  ExprPtr lhs, rhs;
  Span op_span;  // the operator token
  BinaryExpr(BinOp o, ExprPtr l, ExprPtr r, Span s, Span ops)
      : Expr(ExprKind::Binary, s), op(o), lhs(std::move(l)), rhs(std::move(r)), op_span(ops) {}
};
struct LogicalExpr : Expr {
  bool is_and;
  ExprPtr lhs, rhs;
  LogicalExpr(bool a, ExprPtr l, ExprPtr r, Span s)
      : Expr(ExprKind::Logical, s), is_and(a), lhs(std::move(l)), rhs(std::move(r)) {}
};
struct RangeExpr : Expr {
  ExprPtr lo, hi;
  RangeExpr(ExprPtr l, ExprPtr h, Span s) : Expr(ExprKind::Range, s), lo(std::move(l)), hi(std::move(h)) {}
};
struct Arg {
  std::string keyword;  // empty for positional
  Span keyword_span;
  ExprPtr value;
};
struct CallExpr : Expr {
  ExprPtr callee;
  std::vector<Arg> args;  // positional first, then keywords (the builder checks the order)
  CallExpr(ExprPtr c, Span s) : Expr(ExprKind::Call, s), callee(std::move(c)) {}
};
struct IndexItemExpr {
  bool is_slice = false;
  ExprPtr index;              // !is_slice
  ExprPtr start, stop, step;  // is_slice; each may be null
  Span span;
};
struct IndexExpr : Expr {
  ExprPtr target;
  std::vector<IndexItemExpr> items;
  IndexExpr(ExprPtr t, Span s) : Expr(ExprKind::Index, s), target(std::move(t)) {}
};
struct FieldExpr : Expr {
  ExprPtr target;
  std::string name;
  Symbol sym;  // the name interned
  Span name_span;
  FieldExpr(ExprPtr t, std::string n, Span s, Span ns)
      : Expr(ExprKind::Field, s), target(std::move(t)), name(std::move(n)), sym(intern(name)), name_span(ns) {}
};

// ---------------------------------------------------------------- functions
struct Param {
  std::string name;
  Span span;
  ExprPtr default_value;  // null when required
  bool is_rest = false;   // `*name`: the extra positional arguments, as a list
};
struct FunctionParameters;  // frontend/bind_args.h
struct FunctionDef {
  std::string name;  // empty for a lambda
  std::vector<Param> params;
  // The parameters as argument binding sees them (parameters_of).
  std::shared_ptr<const FunctionParameters> parameters;
  std::unique_ptr<Block> body;
  bool is_graph = false;
  Span span;       // the whole definition
  Span name_span;  // the name (or the `fn` keyword of a lambda)
  // The source text the spans point into: a closure outliving the program
  // (an eval) keeps its text.
  std::shared_ptr<const void> source;
};
struct LambdaExpr : Expr {
  std::shared_ptr<FunctionDef> def;
  LambdaExpr(std::shared_ptr<FunctionDef> d, Span s) : Expr(ExprKind::Lambda, s), def(std::move(d)) {}
};

// ---------------------------------------------------------------- statements
// A binding pattern: a name, or a tuple of patterns (`let (a, (b, c)) = ...`).
struct Pattern {
  std::string name;                // when items is empty
  std::vector<Pattern> items;      // a tuple pattern when non-empty
  bool is_tuple = false;
  Span span;
};

enum class StmtKind : uint8_t {
  Let, Assign, ExprStmt, FnDecl, GraphBlock, If, For, While, Break, Continue, Return, Import,
};
enum class AssignOp : uint8_t { Set, Add, Sub, Mul, Div };

struct Stmt {
  StmtKind kind;
  Span span;
  Stmt(StmtKind k, Span s) : kind(k), span(s) {}
  virtual ~Stmt() = default;
};

struct Block {
  std::vector<StmtPtr> stmts;
  Span span;  // from `{` to `}`
};

// `if c { a } else { b }` as a value (SPEC §13): the value of the last
// statement of the branch taken, an expression (the name check sees to
// it); `else if` is an else block holding one expression statement.
struct IfExpr : Expr {
  ExprPtr cond;
  std::unique_ptr<Block> then_block, else_block;
  IfExpr(ExprPtr c, std::unique_ptr<Block> t, std::unique_ptr<Block> e, Span s)
      : Expr(ExprKind::If, s), cond(std::move(c)), then_block(std::move(t)), else_block(std::move(e)) {}
};

struct LetStmt : Stmt {
  Pattern pattern;
  ExprPtr value;
  LetStmt(Pattern p, ExprPtr v, Span s) : Stmt(StmtKind::Let, s), pattern(std::move(p)), value(std::move(v)) {}
};
// target is a NameExpr, FieldExpr or IndexExpr (the builder rejects others).
struct AssignStmt : Stmt {
  AssignOp op;
  ExprPtr target, value;
  Span op_span;
  AssignStmt(AssignOp o, ExprPtr t, ExprPtr v, Span s, Span ops)
      : Stmt(StmtKind::Assign, s), op(o), target(std::move(t)), value(std::move(v)), op_span(ops) {}
};
struct ExprStmt : Stmt {
  ExprPtr expr;
  ExprStmt(ExprPtr e, Span s) : Stmt(StmtKind::ExprStmt, s), expr(std::move(e)) {}
};
// `fn name(...) {...}` and `graph name(...) {...}`.
struct FnDeclStmt : Stmt {
  std::shared_ptr<FunctionDef> def;
  FnDeclStmt(std::shared_ptr<FunctionDef> d, Span s) : Stmt(StmtKind::FnDecl, s), def(std::move(d)) {}
};
// `graph {...}`.
struct GraphBlockStmt : Stmt {
  std::unique_ptr<Block> body;
  GraphBlockStmt(std::unique_ptr<Block> b, Span s) : Stmt(StmtKind::GraphBlock, s), body(std::move(b)) {}
};
struct IfStmt : Stmt {
  ExprPtr cond;
  std::unique_ptr<Block> then_block;
  std::unique_ptr<Block> else_block;  // `else if` is an else block holding one IfStmt
  IfStmt(ExprPtr c, std::unique_ptr<Block> t, std::unique_ptr<Block> e, Span s)
      : Stmt(StmtKind::If, s), cond(std::move(c)), then_block(std::move(t)), else_block(std::move(e)) {}
};
struct ForStmt : Stmt {
  Pattern var;
  ExprPtr iterable;
  std::unique_ptr<Block> body;
  ForStmt(Pattern v, ExprPtr it, std::unique_ptr<Block> b, Span s)
      : Stmt(StmtKind::For, s), var(std::move(v)), iterable(std::move(it)), body(std::move(b)) {}
};
struct WhileStmt : Stmt {
  ExprPtr cond;
  std::unique_ptr<Block> body;
  WhileStmt(ExprPtr c, std::unique_ptr<Block> b, Span s)
      : Stmt(StmtKind::While, s), cond(std::move(c)), body(std::move(b)) {}
};
struct BreakStmt : Stmt {
  explicit BreakStmt(Span s) : Stmt(StmtKind::Break, s) {}
};
struct ContinueStmt : Stmt {
  explicit ContinueStmt(Span s) : Stmt(StmtKind::Continue, s) {}
};
struct ReturnStmt : Stmt {
  ExprPtr value;  // may be null
  ReturnStmt(ExprPtr v, Span s) : Stmt(StmtKind::Return, s), value(std::move(v)) {}
};
struct ImportStmt : Stmt {
  std::string path;   // as written, without ".nn"
  std::string alias;  // the bound name: `as` name, else the path's last component
  ImportStmt(std::string p, std::string a, Span s)
      : Stmt(StmtKind::Import, s), path(std::move(p)), alias(std::move(a)) {}
};

// A parsed file, -e string or REPL entry.
struct Program {
  uint32_t file = 0;
  std::vector<StmtPtr> stmts;
};

}  // namespace nn::frontend
