// The name checker (`nn check`, and before every run): resolves every name
// statically and reports unknown names (with the closest known one),
// assignments to undeclared names, and `return`/`break`/`continue` outside
// their place, all in one pass so a file shows every such error at once.
//
// Scoping follows the interpreter: `let`, `fn`, `import` and loop variables
// declare in the current block, visible to the statements after them. Inside
// a function body, names that enclosing blocks declare anywhere count as
// known, since the body runs later, when they exist (mutual recursion).
#include <unordered_set>

#include "frontend/habits.h"
#include "frontend/interpreter.h"

namespace nn::frontend {
namespace {

struct Scope {
  std::unordered_set<Symbol> now;  // declared so far
  std::unordered_set<Symbol> all;  // declared anywhere in the block
};

class NameChecker {
 public:
  NameChecker(const EnvPtr& globals) {
    // Names that exist already: the prelude, and globals of an earlier run.
    scopes_.emplace_back();
    for (Env* e = globals.get(); e; e = e->parent.get()) {
      bool prelude = !e->parent;
      for (Symbol s : e->names) {
        scopes_.back().now.insert(s);
        scopes_.back().all.insert(s);
        if (prelude) builtins_.insert(s);
      }
    }
  }

  void program(const Program& p) {
    push(p.stmts);
    stmts(p.stmts);
    // Top-level names stay declared for later runs in the same interpreter
    // (the REPL); the scope is simply dropped here.
  }

  std::vector<Diagnostic> diagnostics;

 private:
  std::vector<Scope> scopes_;
  std::unordered_set<Symbol> builtins_;
  size_t function_scope_ = 0;  // index of the innermost function's scope
  int loop_depth_ = 0;
  bool loop_outside_function_ = false;  // a loop around the innermost function
  bool in_function_ = false;
  bool in_graph_block_ = false;

  void error(Span span, std::string msg, std::string note = "") {
    if (diagnostics.size() >= 20) return;
    Diagnostic d{std::move(msg), span, {}};
    if (!note.empty()) d.notes.push_back(std::move(note));
    diagnostics.push_back(std::move(d));
  }

  static void collect(const Pattern& p, std::unordered_set<Symbol>& out) {
    if (!p.is_tuple) out.insert(intern(p.name));
    for (auto& q : p.items) collect(q, out);
  }

  void push(const std::vector<StmtPtr>& body) {
    Scope s;
    for (auto& st : body) {
      if (st->kind == StmtKind::Let) collect(static_cast<const LetStmt&>(*st).pattern, s.all);
      else if (st->kind == StmtKind::FnDecl) s.all.insert(intern(static_cast<const FnDeclStmt&>(*st).def->name));
      else if (st->kind == StmtKind::Import) s.all.insert(intern(static_cast<const ImportStmt&>(*st).alias));
    }
    scopes_.push_back(std::move(s));
  }
  void pop() { scopes_.pop_back(); }

  void declare(Symbol s) {
    scopes_.back().now.insert(s);
    scopes_.back().all.insert(s);
  }
  void declare(const Pattern& p) {
    if (!p.is_tuple) declare(intern(p.name));
    for (auto& q : p.items) declare(q);
  }

  bool known(Symbol s) const {
    for (size_t i = scopes_.size(); i-- > 0;) {
      const Scope& sc = scopes_[i];
      if (i >= function_scope_ ? sc.now.count(s) : sc.all.count(s)) return true;
    }
    return false;
  }

  std::vector<std::string> visible_names() const {
    std::vector<std::string> names;
    for (auto& sc : scopes_)
      for (Symbol s : sc.all) names.push_back(symbol_name(s));
    return names;
  }

  void unknown(const std::string& name, Span span) {
    if (std::string habit = habit_hint(name); !habit.empty()) return error(span, "unknown name `" + name + "`", habit);
    std::string hint = closest_name(name, visible_names());
    error(span, "unknown name `" + name + "`", hint.empty() ? "" : "help: did you mean `" + hint + "`?");
  }

  // Whether a branch of an `if` used as a value gives one: its last
  // statement is an expression, or an `if` whose branches both do.
  static bool ends_in_value(const Block& b) {
    if (b.stmts.empty()) return false;
    const Stmt& last = *b.stmts.back();
    if (last.kind == StmtKind::ExprStmt) return true;
    if (last.kind != StmtKind::If) return false;
    auto& i = static_cast<const IfStmt&>(last);
    return i.else_block && ends_in_value(*i.then_block) && ends_in_value(*i.else_block);
  }

  void block(const Block& b) {
    push(b.stmts);
    stmts(b.stmts);
    pop();
  }

  void stmts(const std::vector<StmtPtr>& list) {
    for (auto& s : list) stmt(*s);
  }

  void function(const FunctionDef& def) {
    for (auto& p : def.params)
      if (p.default_value) expr(*p.default_value);
    size_t saved_scope = function_scope_;
    int saved_loops = loop_depth_;
    bool saved_fn = in_function_, saved_graph = in_graph_block_, saved_outside = loop_outside_function_;
    loop_outside_function_ = loop_depth_ > 0;
    Scope params;
    for (auto& p : def.params) {
      params.now.insert(intern(p.name));
      params.all.insert(intern(p.name));
    }
    scopes_.push_back(std::move(params));
    function_scope_ = scopes_.size() - 1;
    loop_depth_ = 0;
    in_function_ = true;
    in_graph_block_ = false;
    block(*def.body);
    scopes_.pop_back();
    function_scope_ = saved_scope;
    loop_depth_ = saved_loops;
    loop_outside_function_ = saved_outside;
    in_function_ = saved_fn;
    in_graph_block_ = saved_graph;
  }

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Let: {
        auto& l = static_cast<const LetStmt&>(s);
        expr(*l.value);
        declare(l.pattern);
        break;
      }
      case StmtKind::Assign: {
        auto& a = static_cast<const AssignStmt&>(s);
        expr(*a.value);
        if (a.target->kind == ExprKind::Name) {
          auto& n = static_cast<const NameExpr&>(*a.target);
          Symbol sym = intern(n.name);
          if (!known(sym)) {
            std::string hint = closest_name(n.name, visible_names());
            error(n.span, "assignment to undeclared name `" + n.name + "`",
                  hint.empty() ? "help: declare it first with `let " + n.name + " = ...`"
                               : "help: did you mean `" + hint + "`? A new name is declared with `let " + n.name + " = ...`");
          } else if (builtins_.count(sym) && !shadowed(sym)) {
            error(n.span, "cannot assign to the built-in `" + n.name + "`; declare a new name with `let`");
          }
        } else {
          expr(*a.target);
        }
        break;
      }
      case StmtKind::ExprStmt: expr(*static_cast<const ExprStmt&>(s).expr); break;
      case StmtKind::FnDecl: {
        auto& f = static_cast<const FnDeclStmt&>(s);
        declare(intern(f.def->name));  // visible in its own body: recursion
        function(*f.def);
        break;
      }
      case StmtKind::GraphBlock: {
        bool saved = in_graph_block_;
        int saved_loops = loop_depth_;
        in_graph_block_ = true;
        loop_depth_ = 0;
        block(*static_cast<const GraphBlockStmt&>(s).body);
        in_graph_block_ = saved;
        loop_depth_ = saved_loops;
        break;
      }
      case StmtKind::If: {
        auto& i = static_cast<const IfStmt&>(s);
        expr(*i.cond);
        block(*i.then_block);
        if (i.else_block) block(*i.else_block);
        break;
      }
      case StmtKind::For: {
        auto& f = static_cast<const ForStmt&>(s);
        expr(*f.iterable);
        Scope loop;
        collect(f.var, loop.now);
        collect(f.var, loop.all);
        scopes_.push_back(std::move(loop));
        ++loop_depth_;
        block(*f.body);
        --loop_depth_;
        scopes_.pop_back();
        break;
      }
      case StmtKind::While: {
        auto& w = static_cast<const WhileStmt&>(s);
        expr(*w.cond);
        ++loop_depth_;
        block(*w.body);
        --loop_depth_;
        break;
      }
      case StmtKind::Break:
      case StmtKind::Continue:
        if (loop_depth_ == 0) {
          const char* word = s.kind == StmtKind::Break ? "break" : "continue";
          error(s.span, std::string("`") + word + "` outside a loop" +
                            (in_graph_block_ ? " (a graph block cannot be left with it)" : ""),
                loop_outside_function_ ? std::string("note: the loop is outside the function this `") + word +
                                             "` is in (a `fn() { ... }` given to no_grad or another call); "
                                             "return a value and `" + word + "` after the call"
                                       : "");
        }
        break;
      case StmtKind::Return: {
        auto& r = static_cast<const ReturnStmt&>(s);
        if (!in_function_) error(s.span, "`return` outside a function");
        else if (in_graph_block_) error(s.span, "`return` cannot leave a graph block");
        if (r.value) expr(*r.value);
        break;
      }
      case StmtKind::Import: declare(intern(static_cast<const ImportStmt&>(s).alias)); break;
    }
  }

  // True when a user scope (not the prelude's) declares the symbol.
  bool shadowed(Symbol s) const {
    for (size_t i = scopes_.size(); i-- > 1;)
      if (scopes_[i].all.count(s)) return true;
    return false;
  }

  void expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: {
        auto& n = static_cast<const NameExpr&>(e);
        if (!known(intern(n.name))) unknown(n.name, n.span);
        break;
      }
      case ExprKind::List:
        for (auto& i : static_cast<const ListExpr&>(e).items) expr(*i);
        break;
      case ExprKind::Tuple:
        for (auto& i : static_cast<const TupleExpr&>(e).items) expr(*i);
        break;
      case ExprKind::Record:
        for (auto& f : static_cast<const RecordExpr&>(e).fields) expr(*f.value);
        break;
      case ExprKind::Unary: expr(*static_cast<const UnaryExpr&>(e).operand); break;
      case ExprKind::Not: expr(*static_cast<const NotExpr&>(e).operand); break;
      case ExprKind::Binary: {
        auto& b = static_cast<const BinaryExpr&>(e);
        expr(*b.lhs);
        expr(*b.rhs);
        break;
      }
      case ExprKind::Logical: {
        auto& b = static_cast<const LogicalExpr&>(e);
        expr(*b.lhs);
        expr(*b.rhs);
        break;
      }
      case ExprKind::Range: {
        auto& r = static_cast<const RangeExpr&>(e);
        expr(*r.lo);
        expr(*r.hi);
        break;
      }
      case ExprKind::Call: {
        auto& c = static_cast<const CallExpr&>(e);
        // `x.f(...)` may name a function in scope (method sugar) or a field:
        // only the target is checked.
        expr(*c.callee);
        for (auto& a : c.args) expr(*a.value);
        break;
      }
      case ExprKind::Index: {
        auto& ix = static_cast<const IndexExpr&>(e);
        expr(*ix.target);
        for (auto& it : ix.items) {
          for (auto* p : {&it.index, &it.start, &it.stop, &it.step})
            if (*p) expr(**p);
        }
        break;
      }
      case ExprKind::Field: expr(*static_cast<const FieldExpr&>(e).target); break;
      case ExprKind::Lambda: function(*static_cast<const LambdaExpr&>(e).def); break;
      case ExprKind::If: {
        auto& i = static_cast<const IfExpr&>(e);
        expr(*i.cond);
        for (const Block* b : {i.then_block.get(), i.else_block.get()}) {
          block(*b);
          if (!ends_in_value(*b))
            error(b->span, "an `if` used as a value needs each branch to end in an expression",
                  "the branch's last line gives its value: `let y = if c { a } else { b }`");
        }
        break;
      }
      default: break;
    }
  }
};

}  // namespace

void Interpreter::check_names(const Program& prog, const EnvPtr& globals) {
  NameChecker checker(globals);
  checker.program(prog);
  if (!checker.diagnostics.empty()) throw ScriptError(std::move(checker.diagnostics));
}

}  // namespace nn::frontend
