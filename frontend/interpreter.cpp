// The interpreter: construction, running programs, statements, guards.
#include "frontend/interpreter.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "backend/cuda_backend.h"
#include "backend/error.h"
#include "backend/interrupt.h"
#include "backend/ops.h"
#include "frontend/format.h"
#include "frontend/parser.h"
#include "frontend/stack_guard.h"
#include "frontend/utf8_text.h"

namespace nn::frontend {

namespace {
std::atomic<uint64_t> g_next_interpreter_id{1};
constexpr size_t kLoopCollectFloor = 64;
}  // namespace

Interpreter::Interpreter(InterpreterOptions opts)
    : id_(g_next_interpreter_id.fetch_add(1, std::memory_order_relaxed)),
      alive_(std::make_shared<const uint64_t>(id_)),
      opts_(std::move(opts)),
      rng_(opts_.seed),
      account_(opts_.max_memory_bytes ? backend::make_ref<backend::MemoryAccount>(opts_.max_memory_bytes)
                                       : backend::Ref<backend::MemoryAccount>()) {
  // Its generator, thread count and device are its own, installed on the
  // calling thread while it runs (run_scope): interpreters are independent.
  if (opts_.threads > 0) backend::set_num_threads(opts_.threads);
  threads_ = opts_.threads > 0 ? opts_.threads : backend::num_threads();
  device_ = backend::find_device(opts_.device);
  if (!device_)
    throw backend::Error("device `" + opts_.device + "` is not available: " +
                         backend::device_unavailable_reason(opts_.device));
  if (opts_.precision == "bf16" || opts_.precision == "f16") backend::parse_dtype(opts_.precision, autocast_);
  else if (opts_.precision == "tf32") backend::set_gpu_tf32(true);
  else if (opts_.precision != "f32")
    throw backend::Error("precision `" + opts_.precision + "` is not one of f32, tf32, bf16, f16");
  auto scope = run_scope();
  if (const char* p = std::getenv("NN_PATH")) {
    std::stringstream ss(p);
    for (std::string part; std::getline(ss, part, ':');)
      if (!part.empty()) opts_.search_paths.push_back(part);
  }
  // NN_LOG=retrace says why graphs are traced again; NN_VERIFY_IR=1 checks
  // every graph compiled (always on in debug builds).
  const char* log = std::getenv("NN_LOG");
  explain_retrace_ = opts_.explain || (log && std::string_view(log).find("retrace") != std::string_view::npos);
#ifndef NDEBUG
  verify_graphs_ = true;
#endif
  if (const char* v = std::getenv("NN_VERIFY_IR")) verify_graphs_ = verify_graphs_ || std::string_view(v) == "1";
  prelude_ = std::make_shared<Env>();
  install_builtins();
  globals_ = std::make_shared<Env>(prelude_);
  load_stdlib_prelude();
}

Interpreter::~Interpreter() {
  // Break the cycles of closures stored in the scopes they capture; the
  // values are destroyed while their scope is still held, outside its vectors.
  std::vector<EnvPtr> live;
  for (auto& w : closure_scopes_)
    if (auto e = w.lock()) live.push_back(std::move(e));
  live.push_back(globals_);
  live.push_back(prelude_);
  for (auto& e : live) e->take_values();
  live.clear();
  modules_.clear();
  // Compiled graphs' guards hold the lists and records their traces read.
  graphs_.clear();
  block_graphs_.clear();
  // Lists and records in cycles of their own (`r.a = r`), and what the
  // scopes above no longer hold.
  collect_cycles();
}

void Interpreter::track_closure_scope(const EnvPtr& env) {
  if (!closure_scopes_.empty() && closure_scopes_.back().lock() == env) return;
  closure_scopes_.push_back(env);
  ++tracked_since_collect_;
  if (closure_scopes_.size() >= closure_scopes_pruned_at_) {
    std::erase_if(closure_scopes_, [](const std::weak_ptr<Env>& w) { return w.expired(); });
    closure_scopes_pruned_at_ = std::max<size_t>(64, closure_scopes_.size() * 2);
  }
}

FunctionPtr Interpreter::make_closure(const std::shared_ptr<FunctionDef>& def, const EnvPtr& env) {
  auto f = std::make_shared<Function>();
  f->kind = Function::Kind::Closure;
  f->def = def;
  f->env = env;
  f->owner = id_;
  f->owner_alive = alive_;
  track_closure_scope(env);
  return f;
}

std::ostream& Interpreter::out() { return opts_.out ? *opts_.out : std::cout; }
std::ostream& Interpreter::log() { return opts_.log ? *opts_.log : std::cerr; }

std::string Interpreter::render(const ScriptError& e) const {
  std::string s;
  for (const auto& d : e.diagnostics()) s += frontend::render(d, sources_);
  return s;
}

void Interpreter::set_global(const std::string& name, Value v) { globals_->define(intern(name), std::move(v)); }

Value* Interpreter::find_global(const std::string& name) { return globals_->find(intern(name)); }

std::vector<std::string> Interpreter::global_names() const {
  std::vector<std::string> names;
  for (Env* e = globals_.get(); e; e = e->parent.get())
    for (Symbol s : e->names) names.push_back(symbol_name(s));
  return names;
}

namespace {
std::shared_ptr<Function> builtin_function(std::shared_ptr<Builtin> b) {
  for (auto& p : b->params) p.sym = intern(p.name);
  auto f = std::make_shared<Function>();
  f->kind = Function::Kind::Builtin;
  f->builtin = std::move(b);
  return f;
}
}  // namespace

void Interpreter::define_builtin(std::shared_ptr<Builtin> b) {
  Symbol name = intern(b->name);
  prelude_->define(name, Value(FunctionPtr(builtin_function(std::move(b)))));
}

void Interpreter::define_host_function(std::shared_ptr<Builtin> b) {
  Symbol name = intern(b->name);
  std::shared_ptr<Function> f = builtin_function(std::move(b));
  f->owner = id_;
  f->owner_alive = alive_;
  prelude_->define(name, Value(FunctionPtr(std::move(f))));
}

// ---------------------------------------------------------------- running

namespace {
// The file's text, or the diagnostic saying why there is none.
std::string source_text(const std::string& path) {
  std::string text, why;
  if (!read_source_file(path, text, why))
    throw ScriptError(Diagnostic{"cannot read file `" + path + "`: " + why, {}, {}});
  return text;
}
}  // namespace

void request_interrupt() noexcept { backend::request_interrupt(); }
void clear_interrupt() noexcept { backend::clear_interrupt(); }

void Interpreter::begin_host_run(double time_limit_s) {
  stop_.store(false, std::memory_order_relaxed);
  time_limit_s_ = time_limit_s;
  // Past about 31 years, no limit: the deadline would overflow the clock.
  deadline_on_ = time_limit_s > 0 && time_limit_s < 1e9;
  deadline_tick_ = 0;
  if (deadline_on_)
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(time_limit_s));
}

// Ctrl-C (process-wide), the host's interrupt() (this interpreter's), the
// time limit (read from the clock every 64 statements: it costs ~20 ns).
void Interpreter::check_stop(Span span) {
  if (backend::take_interrupt()) fail(span, "interrupted");
  if (stop_.load(std::memory_order_relaxed) && stop_.exchange(false)) fail(span, "interrupted");
  if (deadline_on_ && (deadline_tick_++ & 63) == 0 && std::chrono::steady_clock::now() >= deadline_) {
    deadline_on_ = false;  // the host's catch may run more code
    std::ostringstream limit;
    limit << time_limit_s_;
    fail(span, "time limit exceeded: the run took more than " + limit.str() + " s (Options::time_limit)");
  }
}

void Interpreter::check_stack(Span span) {
  if (stack_nearly_full()) fail(span, "recursion too deep (the stack is nearly full)");
}

std::unique_ptr<Program> Interpreter::parse(uint32_t file_id, OpenEnd open_end) {
  return parse_program(sources_, file_id, open_end);
}

Value Interpreter::run_program(std::unique_ptr<Program> prog, const EnvPtr& globals) {
  RunDepth depth(runs_);
  check_names(*prog, globals);
  Program* p = prog.get();
  programs_.push_back(std::move(prog));
  if (globals != globals_) module_scopes_.push_back(globals);
  Value last;
  Flow flow = exec_top(p->stmts, globals, &last);
  (void)flow;  // break/continue/return at top level are rejected by check_names
  return last;
}

Value Interpreter::run_file(const std::string& path) {
  auto scope = run_scope();
  if (!opts_.allow_files) throw ScriptError(Diagnostic{"file access is not allowed: " + path, {}, {}});
  uint32_t id = sources_.add(path, source_text(path));
  return run_program(parse(id), globals_);
}

// Code given as text (eval, -e, REPL lines) is freed once run: its syntax
// tree at the next top-level run_code (a diagnostic of the last one may
// still be rendered until then), its text too unless a closure made in it
// holds it. Code with a graph stays: graph blocks are cached by statement.
Value Interpreter::run_code(const std::string& name, const std::string& code, OpenEnd open_end) {
  auto scope = run_scope();
  RunDepth depth(runs_);
  if (code_depth_ == 0) release_finished_code();
  uint32_t id = sources_.add(name, code);
  bool keep = code.find("graph") != std::string::npos;
  ++code_depth_;
  std::unique_ptr<Program> prog;
  auto finish = [&] {
    --code_depth_;
    finished_code_.push_back(FinishedCode{std::move(prog), id, keep});
  };
  try {
    prog = parse(id, open_end);
    check_names(*prog, globals_);
    Value last;
    exec_top(prog->stmts, globals_, &last);
    finish();
    return last;
  } catch (...) {
    finish();
    throw;
  }
}

void Interpreter::release_finished_code() {
  for (auto& c : finished_code_) {
    if (!c.keep) {
      c.program.reset();
      sources_.release(c.file);
    } else if (c.program) {
      programs_.push_back(std::move(c.program));
    }
  }
  finished_code_.clear();
}

void Interpreter::check_file(const std::string& path) {
  auto scope = run_scope();
  uint32_t id = sources_.add(path, source_text(path));
  auto prog = parse(id);
  std::vector<Diagnostic> found;
  // The script itself heads the chain: a module importing it back is a cycle.
  std::error_code ec;
  std::vector<std::string> chain{std::filesystem::weakly_canonical(path, ec).string()};
  checked_modules_.insert(chain[0]);
  check_program(*prog, globals_, chain, found);
  if (!found.empty()) throw ScriptError(std::move(found));
  programs_.push_back(std::move(prog));
}

// ---------------------------------------------------------------- statements

Interpreter::Flow Interpreter::exec_stmts(const std::vector<StmtPtr>& stmts, const EnvPtr& env, Value* last,
                                          bool top) {
  for (const auto& s : stmts) {
    Flow f;
    try {
      f = exec(*s, env, last);
    } catch (const backend::OutOfMemory& e) {  // a host value past the cap (tensors' are caught at their op)
      fail(s->span, e.what());
    } catch (const std::bad_alloc&) {  // a host string or list the machine cannot hold
      fail(s->span, "out of memory on cpu");
    } catch (const std::length_error&) {  // one longer than a vector or string can be
      fail(s->span, "out of memory on cpu: a value longer than the host can hold");
    }
    if (f != Flow::Normal) return f;
    if (top) maybe_collect(1);
  }
  return Flow::Normal;
}

// A program's top level: after each statement, nothing of the evaluator
// holds a value, so cycles can be collected there (maybe_collect: at the
// outermost run only, so not while an import or a host function's eval
// runs inside a statement). The floor is 1: a script's statements are few,
// and a collection costs in proportion to what the tracked scopes reach,
// which collect_after_ amortizes.
Interpreter::Flow Interpreter::exec_top(const std::vector<StmtPtr>& stmts, const EnvPtr& env, Value* last) {
  return exec_stmts(stmts, env, last, /*top=*/true);
}

Interpreter::Flow Interpreter::exec_block(const Block& b, const EnvPtr& env, Value* last) {
  auto scope = new_scope(env);
  ScopeEnd end(scope);
  return exec_stmts(b.stmts, scope, last);
}

Interpreter::Flow Interpreter::exec(const Stmt& s, const EnvPtr& env, Value* last) {
  check_interrupt(s.span);
  if (last) *last = Value();
  switch (s.kind) {
    case StmtKind::ExprStmt: {
      Value v = eval(*static_cast<const ExprStmt&>(s).expr, env);
      if (last) *last = std::move(v);
      return Flow::Normal;
    }
    case StmtKind::Let: {
      auto& l = static_cast<const LetStmt&>(s);
      bind_pattern(l.pattern, eval(*l.value, env), env, l.value->span);
      return Flow::Normal;
    }
    case StmtKind::Assign:
      exec_assign(static_cast<const AssignStmt&>(s), env);
      return Flow::Normal;
    case StmtKind::FnDecl: {
      auto& d = static_cast<const FnDeclStmt&>(s);
      env->define(intern(d.def->name), Value(make_closure(d.def, env)));
      return Flow::Normal;
    }
    case StmtKind::GraphBlock:
      return exec_graph_block(static_cast<const GraphBlockStmt&>(s), env);
    case StmtKind::If: {
      auto& i = static_cast<const IfStmt&>(s);
      if (truthy(eval(*i.cond, env), i.cond->span, "`if`")) return exec_block(*i.then_block, env, last);
      if (i.else_block) return exec_block(*i.else_block, env, last);
      return Flow::Normal;
    }
    case StmtKind::For:
      return exec_for(static_cast<const ForStmt&>(s), env, last);
    case StmtKind::While: {
      auto& w = static_cast<const WhileStmt&>(s);
      Value result;
      while (truthy(eval(*w.cond, env), w.cond->span, "`while`")) {
        check_interrupt(w.span);
        Flow f = exec_block(*w.body, env, &result);
        maybe_collect(kLoopCollectFloor);  // see exec_for
        if (f == Flow::Break) break;
        if (f == Flow::Return) {
          if (last) *last = std::move(result);
          return f;
        }
      }
      return Flow::Normal;
    }
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
    case StmtKind::Return: {
      auto& r = static_cast<const ReturnStmt&>(s);
      Value v = r.value ? eval(*r.value, env) : Value();
      if (last) *last = std::move(v);
      return Flow::Return;
    }
    case StmtKind::Import:
      exec_import(static_cast<const ImportStmt&>(s), env);
      return Flow::Normal;
  }
  return Flow::Normal;
}

void Interpreter::bind_pattern(const Pattern& p, Value v, const EnvPtr& env, Span value_span) {
  if (!p.is_tuple) {
    env->define(intern(p.name), std::move(v));
    return;
  }
  const std::vector<Value>* items = nullptr;
  if (v.is_tuple()) items = &v.as_tuple()->items;
  else if (v.is_list()) items = &v.as_list()->items;
  if (!items) fail(value_span, "cannot destructure " + a_type_name(v) + " into " + std::to_string(p.items.size()) + " names; a tuple or list is needed");
  if (items->size() != p.items.size())
    fail(value_span, "cannot destructure " + std::to_string(items->size()) + " values into " +
                         std::to_string(p.items.size()) + " names");
  std::vector<Value> copy = *items;
  for (size_t i = 0; i < p.items.size(); ++i) bind_pattern(p.items[i], std::move(copy[i]), env, value_span);
}

namespace {
// One step of a for loop's iteration over any iterable value.
struct ForCursor {
  const Value& seq;
  int64_t i = 0;
  std::optional<Value> next(Interpreter& vm, Span span) {
    switch (seq.kind()) {
      case Value::Kind::Range: {
        auto r = seq.as_range();
        if (i >= r.size()) return std::nullopt;
        return Value(r.at(i++));
      }
      case Value::Kind::List: {
        auto& items = seq.as_list()->items;  // re-read each step: the body may append
        if (size_t(i) >= items.size()) return std::nullopt;
        return items[size_t(i++)];
      }
      case Value::Kind::Tuple: {
        auto& items = seq.as_tuple()->items;
        if (size_t(i) >= items.size()) return std::nullopt;
        return items[size_t(i++)];
      }
      case Value::Kind::Str: {  // i: the next character's byte offset
        auto& s = seq.as_str();
        if (size_t(i) >= s.size()) return std::nullopt;
        const size_t n = utf8_char_length(s, size_t(i));
        std::string c = s.substr(size_t(i), n);
        i += int64_t(n);
        return Value(std::move(c));
      }
      case Value::Kind::Tensor: {
        auto& t = seq.as_tensor();
        if (t.ndim() == 0) fail(span, "cannot iterate over a 0-d tensor " + t.type().str());
        if (i >= t.shape()[0]) return std::nullopt;
        backend::IndexItem item;
        item.kind = backend::IndexItem::index;
        item.i = i++;
        return Value(backend::index(t, {item}));
      }
      case Value::Kind::Iterator: return seq.as_iterator()->next();
      default: fail(span, "cannot iterate over " + a_type_name(seq));
    }
    (void)vm;
  }
};
}  // namespace

Interpreter::Flow Interpreter::exec_for(const ForStmt& s, const EnvPtr& env, Value* last) {
  Value seq = eval(*s.iterable, env);
  Value result;
  ForCursor cursor{seq};
  while (true) {
    std::optional<Value> item;
    try {
      item = cursor.next(*this, s.iterable->span);
    } catch (const backend::Error& e) {
      fail(s.iterable->span, e.what());
    }
    if (!item) break;
    check_interrupt(s.span);
    Flow f;
    {
      auto scope = new_scope(env);
      ScopeEnd end(scope);
      bind_pattern(s.var, std::move(*item), scope, s.iterable->span);
      f = exec_stmts(s.body->stmts, scope, &result);
    }
    // The end of a turn is a safe point, so that a long loop does not grow
    // without bound, at a program's top level or inside functions it calls:
    // the evaluator up the stack holds every value it is in the middle of
    // (an operand, a callee, an argument, an iterated sequence) by a counted
    // reference, which the collector sees as held from outside. Not taken
    // (maybe_collect and collect_if_safe check) inside an `if` used as a
    // value, a built-in calling back (value_and_grad's function, a host's
    // function), a nested run (an import, a host's eval), a trace or an
    // eager graph run. The floor of 64 keeps the collector's cost
    // negligible in loops that make a closure each turn.
    maybe_collect(kLoopCollectFloor);
    if (f == Flow::Break) break;
    if (f == Flow::Return) {
      if (last) *last = std::move(result);
      return f;
    }
  }
  return Flow::Normal;
}

}  // namespace nn::frontend
