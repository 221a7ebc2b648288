// Tests of the parser front (grammar/NN.g4 and frontend/parser.*): the AST
// shape of every construct of SPEC §2-4, rendered as S-expressions so the
// expectations stay readable, and the wording and place of syntax errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "frontend/parser.h"

using namespace nn::frontend;

namespace {

// ---------------------------------------------------------------- AST -> S-expression
std::string sx(const Expr* e);
std::string sx(const Stmt* s);

std::string sx(const Block& b) {
  std::string out = "{";
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    if (i) out += ' ';  // appended piecewise: GCC 12's -Wrestrict misfires on `" " + string`
    out += sx(b.stmts[i].get());
  }
  return out + "}";
}

std::string sx(const Pattern& p) {
  if (!p.is_tuple) return p.name;
  std::string out = "(";
  for (size_t i = 0; i < p.items.size(); ++i) {
    if (i) out += ' ';
    out += sx(p.items[i]);
  }
  return out + ")";
}

std::string sx(const FunctionDef& f) {
  std::string out = "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (i) out += ' ';
    out += f.params[i].name;
    if (f.params[i].default_value) {
      out += '=';
      out += sx(f.params[i].default_value.get());
    }
  }
  return out + ") " + sx(*f.body);
}

template <typename Items>
std::string items(const char* head, const Items& list) {
  std::string out = std::string("(") + head;
  for (const auto& item : list) {
    out += ' ';
    out += sx(item.get());
  }
  return out + ")";
}

std::string slice_part(const ExprPtr& e) { return e ? sx(e.get()) : "_"; }

std::string sx(const Expr* e) {
  switch (e->kind) {
    case ExprKind::Int: return std::to_string(static_cast<const IntLit*>(e)->value);
    case ExprKind::Float: {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%gf", static_cast<const FloatLit*>(e)->value);
      return buffer;
    }
    case ExprKind::Bool: return static_cast<const BoolLit*>(e)->value ? "true" : "false";
    case ExprKind::None: return "none";
    case ExprKind::Str: {
      std::string out = "\"";
      for (char c : static_cast<const StrLit*>(e)->value) out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : std::string(1, c);
      return out + "\"";
    }
    case ExprKind::Name: return static_cast<const NameExpr*>(e)->name;
    case ExprKind::List: return items("list", static_cast<const ListExpr*>(e)->items);
    case ExprKind::Tuple: return items("tuple", static_cast<const TupleExpr*>(e)->items);
    case ExprKind::Record: {
      std::string out = "(record";
      for (const auto& f : static_cast<const RecordExpr*>(e)->fields) out += " " + f.name + ":" + sx(f.value.get());
      return out + ")";
    }
    case ExprKind::Unary: return "(neg " + sx(static_cast<const UnaryExpr*>(e)->operand.get()) + ")";
    case ExprKind::Not: return "(not " + sx(static_cast<const NotExpr*>(e)->operand.get()) + ")";
    case ExprKind::Binary: {
      auto* b = static_cast<const BinaryExpr*>(e);
      return std::string("(") + binop_symbol(b->op) + " " + sx(b->lhs.get()) + " " + sx(b->rhs.get()) + ")";
    }
    case ExprKind::Logical: {
      auto* l = static_cast<const LogicalExpr*>(e);
      return std::string("(") + (l->is_and ? "and " : "or ") + sx(l->lhs.get()) + " " + sx(l->rhs.get()) + ")";
    }
    case ExprKind::Range: {
      auto* r = static_cast<const RangeExpr*>(e);
      return "(.. " + sx(r->lo.get()) + " " + sx(r->hi.get()) + ")";
    }
    case ExprKind::Call: {
      auto* c = static_cast<const CallExpr*>(e);
      std::string out = "(call " + sx(c->callee.get());
      for (const auto& a : c->args) out += " " + (a.keyword.empty() ? "" : a.keyword + "=") + sx(a.value.get());
      return out + ")";
    }
    case ExprKind::Index: {
      auto* x = static_cast<const IndexExpr*>(e);
      std::string out = "(index " + sx(x->target.get());
      for (const auto& item : x->items) {
        if (item.is_slice)
          out += " (slice " + slice_part(item.start) + " " + slice_part(item.stop) + " " + slice_part(item.step) + ")";
        else
          out += " " + sx(item.index.get());
      }
      return out + ")";
    }
    case ExprKind::Field: {
      auto* f = static_cast<const FieldExpr*>(e);
      return "(. " + sx(f->target.get()) + " " + f->name + ")";
    }
    case ExprKind::Lambda: return "(fn " + sx(*static_cast<const LambdaExpr*>(e)->def) + ")";
  }
  return "?";
}

std::string sx(const Stmt* s) {
  switch (s->kind) {
    case StmtKind::Let: {
      auto* l = static_cast<const LetStmt*>(s);
      return "(let " + sx(l->pattern) + " " + sx(l->value.get()) + ")";
    }
    case StmtKind::Assign: {
      auto* a = static_cast<const AssignStmt*>(s);
      static const char* ops[] = {"=", "+=", "-=", "*=", "/="};
      return std::string("(") + ops[int(a->op)] + " " + sx(a->target.get()) + " " + sx(a->value.get()) + ")";
    }
    case StmtKind::ExprStmt: return sx(static_cast<const ExprStmt*>(s)->expr.get());
    case StmtKind::FnDecl: {
      auto& def = *static_cast<const FnDeclStmt*>(s)->def;
      return std::string("(") + (def.is_graph ? "graph " : "fn ") + def.name + " " + sx(def) + ")";
    }
    case StmtKind::GraphBlock: return "(graph " + sx(*static_cast<const GraphBlockStmt*>(s)->body) + ")";
    case StmtKind::If: {
      auto* i = static_cast<const IfStmt*>(s);
      return "(if " + sx(i->cond.get()) + " " + sx(*i->then_block) + (i->else_block ? " " + sx(*i->else_block) : "") +
             ")";
    }
    case StmtKind::For: {
      auto* f = static_cast<const ForStmt*>(s);
      return "(for " + sx(f->var) + " " + sx(f->iterable.get()) + " " + sx(*f->body) + ")";
    }
    case StmtKind::While: {
      auto* w = static_cast<const WhileStmt*>(s);
      return "(while " + sx(w->cond.get()) + " " + sx(*w->body) + ")";
    }
    case StmtKind::Break: return "(break)";
    case StmtKind::Continue: return "(continue)";
    case StmtKind::Return: {
      auto* r = static_cast<const ReturnStmt*>(s);
      return r->value ? "(return " + sx(r->value.get()) + ")" : "(return)";
    }
    case StmtKind::Import: {
      auto* i = static_cast<const ImportStmt*>(s);
      return "(import \"" + i->path + "\" " + i->alias + ")";
    }
  }
  return "?";
}

// ---------------------------------------------------------------- helpers
struct Parsed {
  SourceManager sources;
  std::unique_ptr<Program> program;
  uint32_t file = 0;
};

std::unique_ptr<Parsed> parse(const std::string& text) {
  auto p = std::make_unique<Parsed>();
  p->file = p->sources.add("t.nn", text);
  p->program = parse_program(p->sources, p->file);
  return p;
}

// The whole program as S-expressions, statements separated by " ; ".
std::string tree(const std::string& text) {
  auto p = parse(text);
  std::string out;
  for (size_t i = 0; i < p->program->stmts.size(); ++i) out += (i ? " ; " : "") + sx(p->program->stmts[i].get());
  return out;
}

// Every diagnostic as "line:col message"; empty when the text parses.
std::vector<std::string> errors(const std::string& text, OpenEnd open_end = OpenEnd::unclosed_bracket) {
  SourceManager sources;
  uint32_t file = sources.add("t.nn", text);
  try {
    parse_program(sources, file, open_end);
  } catch (const ScriptError& e) {
    std::vector<std::string> out;
    for (const Diagnostic& d : e.diagnostics()) {
      LineCol lc = sources.file(file).line_col(d.span.begin);
      out.push_back(std::to_string(lc.line) + ":" + std::to_string(lc.col) + " " + d.message);
    }
    return out;
  }
  return {};
}

std::string first_error(const std::string& text) {
  auto all = errors(text);
  return all.empty() ? "(no error)" : all.front();
}

// The source text a span covers.
std::string text_of(const Parsed& p, const Span& s) {
  return p.sources.file(p.file).text().substr(s.begin, s.end - s.begin);
}

}  // namespace

// ---------------------------------------------------------------- expressions

TEST_CASE("parser: literals") {
  CHECK(tree("42") == "42");
  CHECK(tree("3.5; 1e-3; .5; 2e10") == "3.5f ; 0.001f ; 0.5f ; 2e+10f");
  CHECK(tree("true; false; none") == "true ; false ; none");
  CHECK(tree(R"("a\nb\t\"q\" \\")") == R"("a\nb\t"q" \")");
  CHECK(tree("9223372036854775807") == "9223372036854775807");
  CHECK(tree("-9223372036854775808") == "-9223372036854775808");
  // Past f64's range: too small rounds to 0, too large is an error, judged
  // by the value, not by an `e-` in the text.
  CHECK(tree("1e-400; 0." + std::string(400, '0') + "1") == "0f ; 0f");
  CHECK(first_error("1" + std::string(400, '0') + "e-1") == "1:1 float literal too large");
  CHECK(first_error("1e400") == "1:1 float literal too large");
  CHECK(tree("\"héllo\"") == "\"héllo\"");
}

TEST_CASE("parser: precedence and associativity") {
  CHECK(tree("1 + 2 * 3") == "(+ 1 (* 2 3))");
  CHECK(tree("1 - 2 - 3") == "(- (- 1 2) 3)");
  CHECK(tree("a / b % c @ d") == "(@ (% (/ a b) c) d)");
  CHECK(tree("2 ** 3 ** 2") == "(** 2 (** 3 2))");
  CHECK(tree("-x ** 2") == "(neg (** x 2))");
  CHECK(tree("2 ** -1") == "(** 2 (neg 1))");
  CHECK(tree("-a * b") == "(* (neg a) b)");
  CHECK(tree("- - x") == "(neg (neg x))");
  CHECK(tree("a..b+1") == "(.. a (+ b 1))");
  CHECK(tree("0..n") == "(.. 0 n)");
  CHECK(tree("0..5") == "(.. 0 5)");
  CHECK(tree("(a < b) == c") == "(== (< a b) c)");
  // Python reads a < b == c as a < b and b == c: a chain is refused, never
  // read left to right (0 < 0.5 < 1 was false).
  const std::string chain = "comparisons do not chain: `a < b < c` would compare the bool `a < b` with c; write "
                            "`a < b and b < c` (logical_and(a < b, b < c) for tensors), or put the first comparison "
                            "in brackets";
  CHECK(first_error("a < b == c") == "1:1 " + chain);
  CHECK(first_error("let y = 0 < x < 1") == "1:9 " + chain);
  CHECK(first_error("let y = 1 == 1 != 0") == "1:9 " + chain);
  CHECK(tree("a..b == c") == "(== (.. a b) c)");
  CHECK(tree("not a == b") == "(not (== a b))");
  CHECK(tree("a or b and not c") == "(or a (and b (not c)))");
  CHECK(tree("a and b or c and d") == "(or (and a b) (and c d))");
  CHECK(tree("a <= b and c >= d and e != f and g > h") ==
        "(and (and (and (<= a b) (>= c d)) (!= e f)) (> g h))");
  CHECK(tree("(1 + 2) * 3") == "(* (+ 1 2) 3)");
  CHECK(tree("-x.sum()") == "(neg (call (. x sum)))");
}

TEST_CASE("parser: calls, fields, indexing") {
  CHECK(tree("f()") == "(call f)");
  CHECK(tree("f(x, lr=0.1)") == "(call f x lr=0.1f)");
  CHECK(tree("f(x,)") == "(call f x)");
  CHECK(tree("x.sum(axis=1).mean()") == "(call (. (call (. x sum) axis=1) mean))");
  CHECK(tree("r.w.shape") == "(. (. r w) shape)");
  CHECK(tree("f(a)(b)") == "(call (call f a) b)");
  CHECK(tree("x[i]") == "(index x i)");
  CHECK(tree("x[i, j]") == "(index x i j)");
  CHECK(tree("x[a:b:s]") == "(index x (slice a b s))");
  CHECK(tree("x[:, 0]") == "(index x (slice _ _ _) 0)");
  CHECK(tree("x[::2]") == "(index x (slice _ _ 2))");
  CHECK(tree("x[1:]") == "(index x (slice 1 _ _))");
  CHECK(tree("x[:-1]") == "(index x (slice _ (neg 1) _))");
  CHECK(tree("x[0][1]") == "(index (index x 0) 1)");
  CHECK(tree("m.layers[0].w") == "(. (index (. m layers) 0) w)");
}

TEST_CASE("parser: lists, tuples, records, lambdas") {
  CHECK(tree("[]") == "(list)");
  CHECK(tree("[a, b]") == "(list a b)");
  CHECK(tree("[a, b,]") == "(list a b)");
  CHECK(tree("[[1, 2], [3, 4]]") == "(list (list 1 2) (list 3 4))");
  CHECK(tree("()") == "(tuple)");
  CHECK(tree("(a,)") == "(tuple a)");
  CHECK(tree("(a)") == "a");
  CHECK(tree("(a, b)") == "(tuple a b)");
  CHECK(tree("(a, b,)") == "(tuple a b)");
  CHECK(tree("{}") == "(record)");
  CHECK(tree("{w: x, b: y}") == "(record w:x b:y)");
  CHECK(tree("{w: x, b: y,}") == "(record w:x b:y)");
  CHECK(tree("fn(x) { x * 2 }") == "(fn (x) {(* x 2)})");
  CHECK(tree("fn() {}") == "(fn () {})");
  CHECK(tree("let g = fn(x, k=2) { x ** k }") == "(let g (fn (x k=2) {(** x k)}))");
}

// ---------------------------------------------------------------- statements

TEST_CASE("parser: let and assignment") {
  CHECK(tree("let x = 1") == "(let x 1)");
  CHECK(tree("let (a, b) = t") == "(let (a b) t)");
  CHECK(tree("let (a, (b, c)) = t") == "(let (a (b c)) t)");
  CHECK(tree("let (a,) = t") == "(let (a) t)");
  CHECK(tree("x = 2") == "(= x 2)");
  CHECK(tree("r.f = 2") == "(= (. r f) 2)");
  CHECK(tree("x[i] = v") == "(= (index x i) v)");
  CHECK(tree("x += 1; x -= 1; x *= 2; x /= 2") == "(+= x 1) ; (-= x 1) ; (*= x 2) ; (/= x 2)");
}

TEST_CASE("parser: functions, graphs, control flow, imports") {
  CHECK(tree("fn f(a, b=1) { return a + b }") == "(fn f (a b=1) {(return (+ a b))})");
  CHECK(tree("graph step(x) {\n  let y = x\n  y\n}") == "(graph step (x) {(let y x) y})");
  CHECK(tree("graph { y = f(x) }") == "(graph {(= y (call f x))})");
  CHECK(tree("if c { a }") == "(if c {a})");
  CHECK(tree("if c { a } else { b }") == "(if c {a} {b})");
  CHECK(tree("if c { a } else if d { b } else { e }") == "(if c {a} {(if d {b} {e})})");
  CHECK(tree("if c {\n  a\n}\nelse {\n  b\n}") == "(if c {a} {b})");
  CHECK(tree("for v in 0..n { s += v }") == "(for v (.. 0 n) {(+= s v)})");
  CHECK(tree("for (xb, yb) in batches(x, y, 64) { }") == "(for (xb yb) (call batches x y 64) {})");
  CHECK(tree("while i < 3 { i += 1; if i == 2 { break } else { continue } }") ==
        "(while (< i 3) {(+= i 1) (if (== i 2) {(break)} {(continue)})})");
  CHECK(tree("fn f() { return }") == "(fn f () {(return)})");
  CHECK(tree("fn f() {\n  return\n}") == "(fn f () {(return)})");
  CHECK(tree("import \"layers\"") == "(import \"layers\" layers)");
  CHECK(tree("import \"a/b\"") == "(import \"a/b\" b)");
  CHECK(tree("import \"a/b.nn\" as c") == "(import \"a/b\" c)");
}

TEST_CASE("parser: newlines, separators and comments") {
  CHECK(tree("a\nb") == "a ; b");
  CHECK(tree("a; b;; c;") == "a ; b ; c");
  CHECK(tree("\n\n  # only a comment\n\na # trailing\n\n\nb\n") == "a ; b");
  CHECK(tree("") == "");
  CHECK(tree("f(1,\n  2,\n  lr=3\n)") == "(call f 1 2 lr=3)");
  CHECK(tree("let xs = [\n  1,\n  2\n]") == "(let xs (list 1 2))");
  CHECK(tree("let r = {\n  w: 1,\n  b: 2\n}") == "(let r (record w:1 b:2))");
  CHECK(tree("let r = {\n  w: 1,\n  b: 2,\n}") == "(let r (record w:1 b:2))");
  CHECK(tree("let y = a +\n  b *\n  c") == "(let y (+ a (* b c)))");
  CHECK(tree("let ok = a and\n  b") == "(let ok (and a b))");
  CHECK(tree("let y = (a\n  + b)") == "(let y (+ a b))");
  CHECK(tree("let z =\n  3") == "(let z 3)");
  CHECK(tree("map(xs, fn(x) {\n  let y = x * 2\n  y + 1\n})") ==
        "(call map xs (fn (x) {(let y (* x 2)) (+ y 1)}))");
  CHECK(tree("f(fn(x) { x }, 2)") == "(call f (fn (x) {x}) 2)");
  CHECK(tree("x = 1\r\ny = 2\r\n") == "(= x 1) ; (= y 2)");
}

TEST_CASE("parser: more statement shapes") {
  CHECK(tree("x[i] += 1") == "(+= (index x i) 1)");
  CHECK(tree("r.w -= lr * g") == "(-= (. r w) (* lr g))");
  CHECK(tree("for (i, (a, b)) in pairs { }") == "(for (i (a b)) pairs {})");
  CHECK(tree("if c { a; b }") == "(if c {a b})");
  CHECK(tree("fn f() { return 1 }") == "(fn f () {(return 1)})");
  CHECK(tree("f(1, # one\n  2)  # done") == "(call f 1 2)");
  CHECK(tree("if a {\n  x\n} else if b {\n  y\n}\nelse {\n  z\n}") == "(if a {x} {(if b {y} {z})})");
  CHECK(tree("let f = fn(x) {\n  fn(y) { x + y }\n}") == "(let f (fn (x) {(fn (y) {(+ x y)})}))");
  CHECK(tree("{w: {a: 1}, b: [1, 2]}") == "(record w:(record a:1) b:(list 1 2))");
  CHECK(tree("f(g(x)[0].y, k=[1,\n  2])") == "(call f (. (index (call g x) 0) y) k=(list 1 2))");
  CHECK(tree("graph train_step(xb, yb) {\n  minimize(loss, opt)\n  return loss\n}") ==
        "(graph train_step (xb yb) {(call minimize loss opt) (return loss)})");
}

TEST_CASE("parser: the first script of SPEC §1") {
  const char* script = R"(# digits.nn: train a small classifier on the digits shipped with nn
let (x, y) = load_digits()              # x: f32[1797, 64] in 0..1, y: i64[1797]
let (xtr, ytr, xte, yte) = split(x, y, 0.8, seed=0)

let model = Sequential(Linear(64, 128), relu, Linear(128, 10))
let opt = sgd(params(model), lr=0.1, momentum=0.9)

graph train_step(xb, yb) {             # traced on the first call, replayed after
  let loss = softmax_cross_entropy(model(xb), yb)
  minimize(loss, opt)                  # backward part + optimizer part, in the IR
  return loss
}

let loss = none
for epoch in 0..20 {
  for (xb, yb) in batches(xtr, ytr, 64, shuffle=true) {
    loss = train_step(xb, yb)
  }
  print("epoch", epoch, "loss", loss)
}
print("test accuracy", accuracy(model(xte), yte))
dot(train_step, "train_step.svg")      # the optimized graph, drawn by Graphviz
)";
  auto p = parse(script);
  REQUIRE(p->program->stmts.size() == 9);
  CHECK(sx(p->program->stmts[4].get()) ==
        "(graph train_step (xb yb) {(let loss (call softmax_cross_entropy (call model xb) yb)) "
        "(call minimize loss opt) (return loss)})");
  CHECK(sx(p->program->stmts[6].get()) ==
        "(for epoch (.. 0 20) {(for (xb yb) (call batches xtr ytr 64 shuffle=true) {(= loss (call train_step xb yb))}) "
        "(call print \"epoch\" epoch \"loss\" loss)})");
}

TEST_CASE("parser: spans") {
  auto p = parse("let y = a + f(b, k=2)\nfn g(x) { x }");
  REQUIRE(p->program->stmts.size() == 2);
  auto* let = static_cast<const LetStmt*>(p->program->stmts[0].get());
  CHECK(text_of(*p, let->span) == "let y = a + f(b, k=2)");
  CHECK(text_of(*p, let->pattern.span) == "y");
  auto* sum = static_cast<const BinaryExpr*>(let->value.get());
  CHECK(text_of(*p, sum->span) == "a + f(b, k=2)");
  CHECK(text_of(*p, sum->op_span) == "+");
  auto* call = static_cast<const CallExpr*>(sum->rhs.get());
  CHECK(text_of(*p, call->span) == "f(b, k=2)");
  CHECK(text_of(*p, call->args[1].keyword_span) == "k");
  auto* fn = static_cast<const FnDeclStmt*>(p->program->stmts[1].get());
  CHECK(text_of(*p, fn->def->span) == "fn g(x) { x }");
  CHECK(text_of(*p, fn->def->name_span) == "g");
  CHECK(text_of(*p, fn->def->params[0].span) == "x");
  CHECK(text_of(*p, fn->def->body->span) == "{ x }");
  CHECK(fn->span.file == p->file);
  CHECK(p->program->file == p->file);

  // Spans are bytes even after non-ASCII text.
  auto q = parse("let s = \"é€\" + x");
  auto* add = static_cast<const BinaryExpr*>(static_cast<const LetStmt*>(q->program->stmts[0].get())->value.get());
  CHECK(text_of(*q, add->lhs->span) == "\"é€\"");
  CHECK(text_of(*q, add->rhs->span) == "x");

  auto r = parse("x[1:2, ::3]");
  auto* index = static_cast<const IndexExpr*>(static_cast<const ExprStmt*>(r->program->stmts[0].get())->expr.get());
  CHECK(text_of(*r, index->items[0].span) == "1:2");
  CHECK(text_of(*r, index->items[1].span) == "::3");
}

// ---------------------------------------------------------------- syntax errors

TEST_CASE("parser errors: brackets") {
  CHECK(first_error("fn f() {\n  let x = 1\n") == "2:12 expected `}` to close the block opened at 1:8");
  CHECK(first_error("let x = f(1, 2") == "1:15 expected `)` to close the parenthesis opened at 1:10");
  CHECK(first_error("let x = [1, 2") == "1:14 expected `]` to close the bracket opened at 1:9");
  CHECK(first_error("let x = 1)") == "1:10 unexpected `)`");
  CHECK(first_error("f(1]") == "1:4 expected `)` to close the parenthesis opened at 1:2, found `]`");
  CHECK(first_error("}") == "1:1 unexpected `}`");
}

TEST_CASE("parser errors: records and notes") {
  CHECK(first_error("let r = {a: 1,\n  b: 2\nprint(r)") == "3:9 expected `}` to close the record opened at 1:9");
  CHECK(first_error("if x {\n  f(1, 2]\n}") == "2:9 expected `)` to close the parenthesis opened at 2:4, found `]`");

  SourceManager sources;
  uint32_t file = sources.add("t.nn", "let y = a\n  + b\n");
  try {
    parse_program(sources, file);
    FAIL("no error");
  } catch (const ScriptError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    CHECK(e.diagnostics()[0].message == "unexpected `+`");
    REQUIRE(e.diagnostics()[0].notes.size() == 1);
    CHECK(e.diagnostics()[0].notes[0].starts_with("help: a line break ends the statement"));
    CHECK(render(e.diagnostics()[0], sources).starts_with("error: unexpected `+`\n --> t.nn:2:3\n"));
  }
}

TEST_CASE("parser errors: tokens") {
  CHECK(first_error("let x = 1 $ 2") == "1:11 unexpected character `$`");
  CHECK(first_error("let s = \"abc\nlet t = 1") ==
        "1:9 unterminated string: a string must end with `\"` on the line where it starts");
  CHECK(first_error("let s = \"a\\qb\"") ==
        "1:11 unknown escape `\\q` in a string (the escapes are \\n, \\t, \\\" and \\\\)");
  CHECK(first_error("let n = 99999999999999999999") == "1:9 integer literal too large");
  CHECK(first_error("let x = 1\xff") == "1:10 this file is not valid UTF-8 text");
  CHECK(first_error("let x = é") == "1:9 unexpected character `é`");
}

TEST_CASE("parser errors: grammar") {
  CHECK(first_error("let x = 1 +\nlet y = 2") == "1:12 expected an expression after `+`, found end of line");
  CHECK(first_error("let x = 1 +") == "1:12 expected an expression after `+`, found end of file");
  CHECK(first_error("let x = * 2") == "1:9 expected an expression after `=`, found `*`");
  CHECK(first_error("let x 3") == "1:7 expected `=` after the name in `let`");
  CHECK(first_error("let 3 = x") == "1:5 expected a name after `let`, found `3`");
  CHECK(first_error("f(1 2)") == "1:5 expected `,` or `)` after `1`, found `2`");
  CHECK(first_error("if x { a } else b") == "1:17 expected `if` or `{` after `else`, found `b`");
  CHECK(first_error("if x == 1 then { }") == "1:11 expected `{` after the condition of `if`, found `then`");
  CHECK(first_error("for x of xs { }") == "1:7 expected `in` after the loop variable of `for`, found `of`");
  CHECK(first_error("import layers") ==
        "1:8 expected a path in quotes after `import`, as in `import \"layers\"`, found `layers`");
  CHECK(first_error("else { }") == "1:1 unexpected `else`: it can only follow the `}` of an `if`");
  CHECK(first_error("f(1) = 2") == "1:1 cannot assign to this expression");
  CHECK(first_error("1 = x") == "1:1 cannot assign to this expression");
  CHECK(first_error("f(a=1, b)") == "1:8 keyword arguments must come after positional ones");
  CHECK(first_error("fn f(a, a) { }") == "1:9 duplicate parameter `a`");
  CHECK(first_error("let r = {a: 1, a: 2}") == "1:16 duplicate field `a` in this record");
}

TEST_CASE("parser errors: several in one file, capped") {
  auto all = errors("let a = 1 +\nlet b = 2\nlet c = * 3\nlet d 4\n");
  REQUIRE(all.size() == 3);
  CHECK(all[0] == "1:12 expected an expression after `+`, found end of line");
  CHECK(all[1] == "3:9 expected an expression after `=`, found `*`");
  CHECK(all[2] == "4:7 expected `=` after the name in `let`");

  // Recovery skips to the end of the bad statement, lambda bodies included,
  // and goes on inside and after blocks.
  auto nested = errors("fn f() {\n  let = 1\n  g(fn(x) { x 3 })\n  let z = 2 +\n}\nlet w = * 1\nif { print(1) }\n");
  REQUIRE(nested.size() == 5);
  CHECK(nested[0] == "2:7 expected a name after `let`, found `=`");
  CHECK(nested[1] == "3:15 unexpected `3`");
  CHECK(nested[2] == "4:14 expected an expression after `+`, found end of line");
  CHECK(nested[3] == "6:9 expected an expression after `=`, found `*`");
  CHECK(nested[4] == "7:11 expected `:` after the field name, found `(`");
  CHECK(errors("let f = fn x { x }\nlet y = 2 +") ==
        std::vector<std::string>{"1:12 expected `(` after `fn`, found `x`",
                                 "2:12 expected an expression after `+`, found end of file"});
  // A bad character and a grammar error on other lines are both reported.
  CHECK(errors("let a = 1 $\nlet b 2") ==
        std::vector<std::string>{"1:11 unexpected character `$`", "2:7 expected `=` after the name in `let`"});

  std::string many;
  for (int i = 0; i < 30; ++i) many += "let = 1\n";
  CHECK(errors(many).size() == 10);
}

TEST_CASE("parser errors: never ANTLR's words, never a crash") {
  // Random token soup: every input either parses or gives our diagnostics.
  static const char* pieces[] = {
      "let ", "fn ", "graph ", "if ", "else ", "for ", "in ", "while ", "return ", "import ", "as ", "not ",
      "and ", "or ", "x", "f", "1", "2.5", "\"s\"", "(", ")", "[", "]", "{", "}", ",", ";", ":", "..", ".",
      "**", "+", "-", "*", "/", "@", "==", "<", "=", "+=", "\n", " ", "$", "\"open", "é", "true", "none"};
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return uint32_t(state >> 33);
  };
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    int length = 1 + int(next() % 24);
    for (int k = 0; k < length; ++k) text += pieces[next() % (sizeof pieces / sizeof *pieces)];
    std::vector<std::string> all = errors(text);
    if (all.empty()) ++parsed;
    CHECK(all.size() <= 10);
    for (const std::string& e : all) {
      INFO("input: " << text << "\nerror: " << e);
      CHECK(e.find("mismatched") == std::string::npos);
      CHECK(e.find("extraneous") == std::string::npos);
      CHECK(e.find("expecting") == std::string::npos);
      CHECK(e.find("viable") == std::string::npos);
      CHECK(e.find("missing '") == std::string::npos);
      CHECK(e.find("<EOF>") == std::string::npos);
      CHECK(e.find("token recognition") == std::string::npos);
    }
    Completeness c = check_complete(text);
    CHECK((c == Completeness::complete) == all.empty());
  }
  CHECK(parsed > 0);
}

TEST_CASE("parser errors: nesting depth") {
  const std::string deep =
      "expression nested too deeply (more than 400 levels; each bracket and each operator of a chain such as "
      "a + b + c counts as one; split a long chain with names)";
  CHECK(first_error(std::string(100000, '(')) == "1:401 " + deep);
  std::string chain = "let x = 1";
  for (int i = 0; i < 100000; ++i) chain += "+1";
  CHECK(first_error(chain).ends_with(deep));
  std::string minus;
  for (int i = 0; i < 100000; ++i) minus += "- ";
  CHECK(first_error(minus + "x").ends_with(deep));
  std::string brackets = "let x = ";
  for (int i = 0; i < 100000; ++i) brackets += "[";
  CHECK(first_error(brackets).ends_with(deep));
  std::string pows = "x";
  for (int i = 0; i < 100000; ++i) pows += " ** x";
  CHECK(first_error(pows).ends_with(deep));
  std::string blocks;
  for (int i = 0; i < 100000; ++i) blocks += "if x {";
  CHECK(first_error(blocks).ends_with(deep));
  // An else-if chain nests though blank lines or comments stand before its
  // `else`s (the count restarted there, and 100,000 links took minutes).
  for (const char* gap : {"\n\n", "\n# note\n"}) {
    std::string chain = "if c {1}";
    for (int i = 0; i < 500; ++i) chain += std::string(gap) + "else if c {1}";
    CHECK(first_error(chain).ends_with(deep));
  }

  // Just within the limit parses.
  CHECK(tree(std::string(399, '(') + "1" + std::string(399, ')')) == "1");
  std::string negs;
  for (int i = 0; i < 399; ++i) negs += "-";
  CHECK(errors(negs + "x").empty());
  // Long but flat input is not deep: many items, many statements.
  std::string list = "let xs = [";
  for (int i = 0; i < 5000; ++i) list += "-1, ";
  CHECK(errors(list + "]").empty());
  std::string statements;
  for (int i = 0; i < 2000; ++i) statements += "x = x + 1 - 2 * 3\n";
  CHECK(errors(statements).empty());
}

TEST_CASE("parser: a 5000-line file parses quickly") {
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    text += "fn f" + std::to_string(i) + "(x, lr=0.1) {\n";
    text += "  let (a, b) = (x[0, 1:3], x.sum(axis=1))\n";
    text += "  if a > 0 and not b { return [a, b] } else { a += 1 }\n";
    text += "  for i in 0..10 { x = x * 2 ** -i }\n";
    text += "}\n";
  }
  // The best of two runs (the first also warms ANTLR's shared DFA cache).
  double seconds = 1e9;
  for (int run = 0; run < 2; ++run) {
    auto start = std::chrono::steady_clock::now();
    auto p = parse(text);
    seconds = std::min(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    CHECK(p->program->stmts.size() == 1000);
  }
  // Well under a second optimized; an unoptimized build gets some slack, and
  // a sanitized one is not timed (this is a guard against blow-ups, such as
  // quadratic lookahead, not a benchmark).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  MESSAGE("5000 lines parsed in " << seconds << " s (sanitized build: not checked)");
#elif defined(NDEBUG)
  CHECK(seconds < 1.0);
#else
  CHECK(seconds < 3.0);
#endif
}

TEST_CASE("parser: check_complete for the REPL") {
  CHECK(check_complete("let x = 1") == Completeness::complete);
  CHECK(check_complete("") == Completeness::complete);
  CHECK(check_complete("# just a comment") == Completeness::complete);
  CHECK(check_complete("fn f(x) {") == Completeness::incomplete);
  CHECK(check_complete("fn f(x) {\n  let y = x\n") == Completeness::incomplete);
  CHECK(check_complete("fn f(x) {\n  x\n}") == Completeness::complete);
  CHECK(check_complete("f(1,") == Completeness::incomplete);
  CHECK(check_complete("let xs = [1, 2") == Completeness::incomplete);
  CHECK(check_complete("let y = x +") == Completeness::incomplete);
  CHECK(check_complete("let y = x and") == Completeness::incomplete);
  CHECK(check_complete("let y =") == Completeness::incomplete);
  CHECK(check_complete("x = 1;") == Completeness::complete);
  CHECK(check_complete("let x = )") == Completeness::error);
  CHECK(check_complete("let x 1") == Completeness::error);
  CHECK(check_complete("let s = \"abc") == Completeness::error);
  CHECK(check_complete("f(1]") == Completeness::error);
  CHECK(check_complete("f(a=1, b)") == Completeness::error);
}

TEST_CASE("parser: check_complete reports a syntax error inside open brackets at once") {
  // More lines could close the bracket, but nothing can mend what is wrong
  // before the end.
  for (const char* text : {"let a = [1 2", "(1 2", "{x: 1 y: 2", "f(1 2", "let r = {a: 1,\n  b: 2\nprint(r)",
                           "fn f(x) {\n  let y x", "f(g(1 2), ", "let x 1 +", "[1, 2 3 +", "if x {\n  1 2"})
    CHECK_MESSAGE(check_complete(text) == Completeness::error, text);
  // An error only at the end says the input stops early: more may come.
  for (const char* text : {"let a = [1, 2", "let a = [1,", "(1 +", "{x: 1,", "{x: 1, y:", "f(1, 2", "f(",
                           "fn f(x) {\n  let y = x", "fn f(x) {\n  if x {\n    1\n  }", "let r = {a: 1,\n  b: 2",
                           "if x {\n  1\n} else {", "[1, 2,\n 3", "let y = x +\n  2 *", "x = [\n"})
    CHECK_MESSAGE(check_complete(text) == Completeness::incomplete, text);
}

TEST_CASE("parser: a REPL entry with open brackets reports its syntax error, a file the open bracket") {
  const OpenEnd repl = OpenEnd::error_before_end;
  CHECK(first_error("let a = [1 2") == "1:13 expected `]` to close the bracket opened at 1:9");
  auto e = errors("let a = [1 2", repl);
  REQUIRE(e.size() == 1);
  CHECK(e[0] == "1:12 expected `,` or `]` after `1`, found `2`");
  e = errors("f(1 2", repl);
  REQUIRE(e.size() == 1);
  CHECK(e[0] == "1:5 expected `,` or `)` after `1`, found `2`");
  e = errors("{x: 1 y: 2", repl);
  REQUIRE(!e.empty());
  CHECK(e[0].rfind("1:7 ", 0) == 0);
  e = errors("fn f() {\n  let x 1", repl);
  REQUIRE(e.size() == 1);
  CHECK(e[0] == "2:9 expected `=` after the name in `let`");
  // With no error before the end, the open bracket as for a file.
  CHECK(errors("let x = f(1, 2", repl) == std::vector<std::string>{"1:15 expected `)` to close the parenthesis opened at 1:10"});
}

TEST_CASE("rest parameters") {
  nn::frontend::SourceManager sources;
  uint32_t id = sources.add("r.nn", "fn f(a, *rest) { rest }\nfn g(*xs) { xs }\n");
  auto prog = nn::frontend::parse_program(sources, id);
  REQUIRE(prog->stmts.size() == 2);
  auto& f = static_cast<nn::frontend::FnDeclStmt&>(*prog->stmts[0]).def;
  REQUIRE(f->params.size() == 2);
  CHECK_FALSE(f->params[0].is_rest);
  CHECK(f->params[1].is_rest);
  CHECK(f->params[1].name == "rest");
  auto bad = [&](const std::string& code) {
    uint32_t b = sources.add("b.nn", code);
    try {
      nn::frontend::parse_program(sources, b);
    } catch (const nn::frontend::ScriptError& e) {
      return e.diagnostics().front().message;
    }
    return std::string();
  };
  CHECK(bad("fn f(*a, b) { }") == "the rest parameter `*a` must be the last parameter");
  CHECK(bad("fn f(*a=1) { }") == "the rest parameter `*a` takes no default");
}
