// The tree-walking interpreter: runs programs statement by statement, holds
// the prelude, module globals, loaded modules and the call stack. Every tensor
// op it evaluates goes through backend::dispatch.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <iosfwd>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/interrupt.h"
#include "backend/run_context.h"
#include "frontend/ast.h"
#include "frontend/diagnostic.h"
#include "frontend/environment.h"
#include "frontend/function.h"
#include "frontend/graph_cache.h"
#include "frontend/parser.h"
#include "frontend/source.h"
#include "frontend/value.h"
#include "ir/plan.h"
#include "ir/tracer.h"

namespace nn::frontend {

struct InterpreterOptions {
  int threads = 0;                        // 0: all cores
  std::string device = "cpu";             // where creation ops and host data put tensors: cpu, cuda, cuda:N
  uint64_t seed = 0;
  std::vector<std::string> search_paths;  // NN_PATH entries are added too
  bool allow_files = true;
  size_t max_memory_bytes = 0;            // 0: the machine's memory
  // --precision (SPEC §15): f32, tf32 (TF32 matmul and convolution on
  // GPUs), or bf16 / f16 (the whole script runs under autocast).
  std::string precision = "f32";
  std::vector<std::string> args;          // `args` in scripts
  // Graph mode (SPEC §6).
  bool eager_graphs = false;              // --eager: graphs run as plain code
  bool check_graphs = false;              // --check-graph: run both and compare
  bool explain = false;                   // --explain: say why a graph is retraced
  ir::Schedule schedule = ir::Schedule::automatic;  // --schedule
  ir::MemoryMode memory = ir::MemoryMode::arena;    // --memory
  std::set<std::string> disabled_passes;  // --no-pass NAME
  std::string dump_passes_dir;            // nn ir --dump-passes DIR
  // Called with each graph once compiled (nn ir, nn dot): the graph as
  // traced, as it runs and its memory plan; may throw ExitRequest to stop
  // the script there.
  std::function<void(const ir::CompiledGraph&)> on_compiled;
  std::ostream* out = nullptr;            // print(); null: std::cout
  std::ostream* log = nullptr;            // notes (graph retraced); null: std::cerr
};

// target takes v's value (cast to its dtype): in place eagerly; inside a
// graph as a state update, written back after each run (`x -= v`, SPEC §6).
void write_whole(const backend::Tensor& target, const backend::Tensor& v);

// Ctrl-C in the REPL: a process-wide request to stop the code that runs.
// request_interrupt() is safe to call from a signal handler; the interpreter
// checks the flag at each statement and loop iteration, clears it and throws
// a ScriptError "interrupted" at the current statement. A host clears a stale
// request with clear_interrupt() before running new code.
void request_interrupt() noexcept;
void clear_interrupt() noexcept;

// The op calls that follow come from `s`: IR nodes and the autodiff tape
// record it (backend/source_loc.h).
inline void note_op_loc(Span s) { backend::set_op_loc({s.file, s.begin, s.end}); }

// While a graph is traced, the nodes made inside a function call belong to
// that call (the pictures cluster them).
class TraceScope {
 public:
  TraceScope(const std::string& name, Span call) : tracer_(ir::Tracer::active()) {
    if (tracer_) tracer_->push_scope(name, {call.file, call.begin, call.end});
  }
  ~TraceScope() {
    if (tracer_ && ir::Tracer::active() == tracer_) tracer_->pop_scope();
  }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  ir::Tracer* tracer_;
};

// Thrown by exit(code): unwinds to the host, which ends the program.
struct ExitRequest {
  int code;
};

class Interpreter;
struct PreludeSource;  // frontend/prelude.cpp
// Notes the host values a trace reads from outside `outside` into `reads`
// for its life (nested: the outer recording comes back after).
struct HostReadRecording {
  HostReadRecording(Interpreter& vm, HostReads& reads, Env* outside);
  ~HostReadRecording();
  Interpreter& vm;
  HostReads* saved_reads;
  Env* saved_outside;
};

// What a graph's code run as plain code hands back: its tensors without
// autodiff history, marked as a graph's results (SPEC §17).
Value as_graph_results(const Value& result);

// A graph's own code running, traced or as plain code, for its life: lists
// and records it makes are the graph's (Record::made_by_graph), and the
// autodiff histories its state updates lent (Interpreter::lend_history)
// are taken back at its end.
struct GraphCodeRun {
  explicit GraphCodeRun(Interpreter& vm);
  ~GraphCodeRun();
  Interpreter& vm;
  bool saved_runs;
  size_t lent_before;
};

// A graph's code run as plain code (--eager; the eager half of
// --check-graph) for its life: the graph's defining scope `outside` is what
// it captures, so that a plain assignment to a tensor there is a state
// update (Interpreter::state_update), as in the graph.
struct EagerGraphRun {
  EagerGraphRun(Interpreter& vm, Env* outside);
  ~EagerGraphRun();
  Interpreter& vm;
  bool saved_in;
  Env* saved_outside;
  GraphCodeRun code;
};

class Interpreter {
 public:
  explicit Interpreter(InterpreterOptions opts = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Run a file / a piece of code in the main module. Return the value of the
  // last expression statement (none otherwise). Throw ScriptError.
  Value run_file(const std::string& path);
  // open_end: how code whose brackets are left open is reported (the REPL
  // reports an error before the end first, frontend/parser.h).
  Value run_code(const std::string& name, const std::string& code,
                 OpenEnd open_end = OpenEnd::unclosed_bracket);
  // Parse and check names without running (nn check); throws ScriptError
  // holding every diagnostic.
  void check_file(const std::string& path);

  std::string render(const ScriptError& e) const;
  SourceManager& sources() { return sources_; }
  std::ostream& out();
  std::ostream& log();

  // The path by which the main module's globals reach t's memory ("m.w",
  // "opt.m[0]"), or "" (frontend/user_names.cpp): diagnostics name tensors
  // as the user does.
  std::string user_name(const backend::Tensor& t) const;
  // user_name of each tensor, from one walk of the globals ("" where none).
  std::vector<std::string> user_names(const std::vector<backend::Tensor>& ts) const;
  // "`m.w` (f32[2])" when the globals reach t, else "a f32[2] tensor".
  std::string describe_tensor(const backend::Tensor& t) const;

  // Globals of the main module.
  void set_global(const std::string& name, Value v);
  Value* find_global(const std::string& name);
  std::vector<std::string> global_names() const;
  // Registers a built-in in the prelude (visible to every module).
  void define_builtin(std::shared_ptr<Builtin> b);
  // Registers a host's function (nn::Interpreter::define) likewise; unlike
  // a built-in it belongs to this interpreter (it may hold the host's
  // references to it), so another one refuses to call it, as a closure.
  void define_host_function(std::shared_ptr<Builtin> b);
  // Makes `tr` the active tracer, its graph locating nodes in this
  // interpreter's sources (graph mode; save_onnx's trace).
  void start_trace(ir::Tracer& tr);

  // Calls a function value with positional and keyword arguments.
  Value call(const Value& callee, std::vector<Value> positional,
             std::vector<std::pair<Symbol, Value>> keywords = {}, Span call_span = {});

  // Every graph function and block compiled so far (:graphs, --stats).
  const std::vector<std::shared_ptr<GraphCache>>& graphs() const { return graphs_; }
  // append(list, v) while tracing: where v went, should it escape the graph.
  void note_appended(const Value& v, Span at) {
    if (v.is_tensor() && v.as_tensor().is_traced()) traced_stores_[v.as_tensor().impl()] = {v.as_tensor(), nullptr, at, false};
  }

  // Conversions shared by built-ins.
  backend::Tensor to_tensor(const Value& v, Span span);
  const InterpreterOptions& options() const { return opts_; }
  // While save_onnx traces its function (forward only, in eval mode, SPEC
  // §16), dropout and batch_norm run as in evaluation whatever training
  // flag a layer passes them (save_onnx's EvalMode, frontend/builtins/onnx.cpp).
  bool exporting() const { return exporting_ > 0; }
  void begin_export() { ++exporting_; }
  void end_export() { --exporting_; }
  // Where creation ops and host data put tensors while it runs.
  backend::Device* device() const { return device_; }

  // A closure over `env`, kept track of for cycle breaking.
  FunctionPtr make_closure(const std::shared_ptr<FunctionDef>& def, const EnvPtr& env);

  // Host control (nn::Interpreter::interrupt, Options::time_limit).
  // interrupt() may be called from any thread: the code running in this
  // interpreter stops at its next statement with "interrupted".
  // begin_host_run clears a stale request and starts the time limit
  // (seconds; 0: none) of a run the host starts; end_host_run ends it.
  void interrupt() noexcept { stop_.store(true, std::memory_order_relaxed); }
  void begin_host_run(double time_limit_s);
  void end_host_run() noexcept { deadline_on_ = false; }

  // A process-unique number naming this interpreter in diagnostics about
  // values of another one ("interpreter #2").
  uint64_t id() const { return id_; }

  // ---- evaluation (used by the statement and expression code) ----
  enum class Flow : uint8_t { Normal, Break, Continue, Return };
  Value eval(const Expr& e, const EnvPtr& env);
  Flow exec_block(const Block& b, const EnvPtr& env, Value* last);
  Flow exec(const Stmt& s, const EnvPtr& env, Value* last);

 private:
  friend class ModuleLoader;
  struct Module;

  // statements
  // top: a program's top level, where cycles may be collected after each statement (exec_top).
  Flow exec_stmts(const std::vector<StmtPtr>& stmts, const EnvPtr& env, Value* last, bool top = false);
  void exec_assign(const AssignStmt& s, const EnvPtr& env);
  Value update_in_place(const Value& old, BinOp op, const Value& v, Span span);
  Flow exec_for(const ForStmt& s, const EnvPtr& env, Value* last);
  void bind_pattern(const Pattern& p, Value v, const EnvPtr& env, Span value_span);
  void exec_import(const ImportStmt& s, const EnvPtr& env);

  // expressions
  Value eval_name(const NameExpr& e, const EnvPtr& env);
  // exact_floats: a float literal keeps its numbers' exact values (f64,
  // marked weak) for `tensor(literal, dtype)` to convert once; else f32.
  Value eval_list(const ListExpr& e, const EnvPtr& env, bool exact_floats = false);
  Value eval_record(const RecordExpr& e, const EnvPtr& env);
  Value eval_call(const CallExpr& e, const EnvPtr& env);
  Value eval_index(const IndexExpr& e, const EnvPtr& env);
  Value index_value(const IndexExpr& e, const Value& target, const EnvPtr& env);  // target[e's items]
  Value eval_field(const FieldExpr& e, const EnvPtr& env);
  Value field_of(const Value& target, Symbol name, Span span, const EnvPtr& env, bool for_call);
  Value binary(BinOp op, const Value& a, const Value& b, Span span);
  Value negate(const Value& v, Span span);
  // `construct` names what branches (`if`, `while`, `and`) for the trace error.
  bool truthy(const Value& v, Span span, const char* construct = "a condition");
  Value literal_tensor(const Expr& e);

  // calls
  Value call_closure(const Function& f, CallArgs& call);
  Value call_builtin(const Builtin& b, CallArgs& call);
  Value call_value(const Value& callee, CallArgs& call);
  void point_at_script(ScriptError& e, const FunctionDef& def, Span call_span);

  // modules
  Value run_program(std::unique_ptr<Program> prog, const EnvPtr& globals);
  std::unique_ptr<Program> parse(uint32_t file_id, OpenEnd open_end = OpenEnd::unclosed_bracket);
  void check_names(const Program& prog, const EnvPtr& globals);
  RecordPtr load_module(const std::string& path, Span span, uint32_t from_file);
  std::string find_module(const std::string& path, Span span, uint32_t from_file) const;
  // nn check: prog's names, then each module its top-level imports name,
  // parsed and checked as well (once each; `chain` is the imports being
  // checked, for cycles). Every problem goes into `found`.
  void check_program(const Program& prog, const EnvPtr& globals, std::vector<std::string>& chain,
                     std::vector<Diagnostic>& found);
  void load_stdlib_prelude();
  void make_prelude_function(Symbol name);  // frontend/prelude.cpp
  void install_builtins();

  // graph mode (frontend/graph_mode.cpp, graph_check.cpp)
  bool graph_mode_on() const;
  Value call_graph(const Function& f, std::vector<Value>& args, Span call_span);
  Flow exec_graph_block(const GraphBlockStmt& s, const EnvPtr& env);
  std::shared_ptr<GraphCache> new_graph_cache(std::string name);
  // `why`: the reason for a retrace that the signature does not show (a
  // capture guard that failed).
  CompiledGraph& add_entry(GraphCache& cache, Signature sig, Span span, const std::string& why = {});
  std::function<void(const std::string&, const ir::Graph&)> dump_passes(const std::string& graph);
  // An assignment (or an append) that stored a traced tensor (traced_stores_ below).
  struct TracedStore {
    backend::Tensor tensor;  // held, so that its address is not reused while tracing
    const AssignStmt* assign;  // null for an append
    Span at;
    bool over_tensor;  // it replaced a tensor (which an in-place update would have changed)
    backend::TensorType replaced = {};  // that tensor's type
  };
  void check_escapes(ir::Tracer& tr, Env* env, const std::vector<Symbol>& skip, Span span);
  std::string escape_hint(const TracedStore& store, const std::string& where, bool block) const;
  // What the body of one trace gives: its outputs, the variables that hold
  // them (graph blocks; not escapes) and its return value (graph functions).
  struct TracedBody {
    std::vector<backend::Tensor> outputs;
    std::vector<Symbol> assigns;
    Value result;
  };
  // Trace, rollback on error, escape check, compile: the one path of graph
  // functions and graph blocks from a new signature to a compiled entry.
  // `scope`: the names the body sees (escapes are looked for there, and
  // capture guards built from there); `why`: as add_entry's.
  CompiledGraph& trace_and_compile(GraphCache& cache, std::optional<Signature> sig, Span span, const GuardScope& scope,
                                   const std::function<TracedBody(ir::Tracer&)>& body, const std::string& why = {});
  void compile(CompiledGraph& cg, ir::Graph traced);
  CompiledGraph* holding_entry(GraphCache& cache, const GuardScope& scope,
                               const std::function<bool(const CompiledGraph&)>& fits, std::string& why);
  // `span`: the call; the run's writes (a state update) are said to happen there.
  std::vector<backend::Tensor> run_compiled(CompiledGraph& cg, std::span<const backend::Tensor> inputs, Span span);
  // --check-graph: runs the graph, then `eager` on the same state and draws,
  // and fails at `span` when their results differ; returns the graph's.
  std::vector<backend::Tensor> check_against_eager(CompiledGraph& cg, std::span<const backend::Tensor> inputs,
                                                   const std::function<std::vector<backend::Tensor>()>& eager,
                                                   Span span);
  std::vector<std::shared_ptr<GraphCache>> graphs_;
  std::unordered_map<const GraphBlockStmt*, std::shared_ptr<GraphCache>> block_graphs_;
  // While a graph is traced: the assignment that last stored each traced
  // tensor into a variable, field or list item, so that an escape error
  // points at it (frontend/assign.cpp, graph_mode.cpp).
  std::unordered_map<const backend::TensorImpl*, TracedStore> traced_stores_;
  // While a graph traces: where the host values it reads from outside are
  // noted (frontend/host_read_guard.h), and the scope that is outside.
  HostReads* host_reads_ = nullptr;
  Env* host_reads_outside_ = nullptr;
  void note_host_read(const EnvPtr& env, Symbol name, const Value& v);
  // A scope for a call's frame, a block or a loop turn, marked when a trace makes it.
  EnvPtr new_scope(const EnvPtr& parent) const {
    auto env = std::make_shared<Env>(parent);
    env->made_in_trace = host_reads_ != nullptr;
    return env;
  }
  bool outside_the_graph(const Env& env, Symbol name) const;
 public:
  // While a graph is traced: r.field is read into the fed tensor t, which
  // every later run of the graph gets the field's value in (SPEC §13).
  void note_fed(const RecordPtr& r, Symbol field, const backend::Tensor& t) {
    if (host_reads_) host_reads_->note_fed(r, field, t);
  }
  // While a graph is traced: a tensor from outside it read as a host value
  // (item, int, float, a condition), a constant of the trace from then on.
  void note_value_read(const backend::Tensor& t);
  // While a graph is traced: a record read whole (fields(r)), its fields
  // and their values a constant of the trace.
  void note_record_read(const RecordPtr& r) {
    if (host_reads_) host_reads_->note_fields(r);
  }
  // While a graph is traced: r.field = v, v a host value holding no tensor
  // the trace made, is written again on every run (a host call node), its
  // lists and records made anew: the same code run eagerly writes it on
  // every call.
  void replay_field_write(const RecordPtr& r, Symbol field, const Value& v);
  // While a graph is traced: v, returned or written outside the graph by it,
  // may not hold a closure over the graph's own scope (a diagnostic at span:
  // "<what> a function defined inside the graph ...").
  void refuse_closure_made_in_trace(const Value& v, const std::string& what, Span span) const;
  // The same for `name = v`, a name of a scope from before the trace.
  // A closure defined inside the graph is refused there (at span).
  void replay_name_write(const EnvPtr& env, Symbol name, const Value& v, Span span);
  // While a graph is traced: a value read whole (str(v), records or lists
  // compared with ==): the fields of every record in it, and the values of
  // the tensors in it, constants of the trace.
  void note_whole_read(const Value& v);
  // While a graph block is traced: the variable a tensor of the host is
  // bound from on every run ("" for none, and outside a block).
  std::string block_input(const backend::Tensor& t) const;
 private:
  // While a graph is traced: the fields of records it assigned, so that a
  // fed field set inside the graph (lost on its later runs) is refused.
  struct TracedFieldWrite {
    RecordPtr record;
    Symbol field;
    Span span;
  };
  std::vector<TracedFieldWrite> traced_field_writes_;
  void refuse_fed_fields_written(const HostReads& reads) const;
  // `captured`: whether the variable or field lives outside the graph.
  bool state_update(const Value& old, const Value& v, bool captured);
  // A state update's tensor stands for the new value for the rest of the
  // graph's code, history included (`loss = f(w); minimize(loss, opt)`, as
  // eager code reads it). The tensor's own autodiff fields, kept here, come
  // back when that code ends (GraphCodeRun).
  struct LentHistory {
    backend::Tensor tensor;
    bool requires_grad, graph_result, grad_result;
    uint32_t output_index;
    std::shared_ptr<backend::GradNode> grad_fn;
  };
  std::vector<LentHistory> lent_histories_;
  void lend_history(const backend::Tensor& target, const backend::Tensor& from);
  friend struct HostReadRecording;
  friend struct EagerGraphRun;
  friend struct GraphCodeRun;
  bool explain_retrace_ = false;
  bool in_eager_graph_ = false;  // inside a graph run as plain code (EagerGraphRun)
  int exporting_ = 0;            // save_onnx traces (nested: a count)
  bool verify_graphs_ = false;

  // guards
  void enter_call(Span call_span);
  void check_stack(Span span);
  void check_interrupt(Span span) {
    if (backend::g_interrupt.load(std::memory_order_relaxed) || stop_.load(std::memory_order_relaxed) || deadline_on_) [[unlikely]]
      check_stop(span);
  }
  void check_stop(Span span);
  std::atomic<bool> stop_{false};
  // How the backend's own diagnostics (a collective another rank did not
  // match) write this interpreter's locations; installed with run_scope().
  backend::LocText loc_text_ = [this](const backend::SourceLoc& l) {
    return sources_.location(Span{l.file, l.begin, l.end});
  };
  bool deadline_on_ = false;
  uint32_t deadline_tick_ = 0;
  double time_limit_s_ = 0;
  std::chrono::steady_clock::time_point deadline_;

  // A closure or host function of another interpreter (alive or destroyed)
  // is refused.
  [[noreturn]] void refuse_foreign(const Function& f, Span span) const;
  uint64_t id_;
  std::shared_ptr<const uint64_t> alive_;  // closures hold it weakly

  InterpreterOptions opts_;
  // This interpreter's backend state, installed by each public entry.
  backend::Generator rng_;
  backend::DType autocast_ = backend::DType::f32;  // --precision bf16 / f16
  int threads_ = 1;
  backend::Device* device_ = nullptr;
  // Its CPU tensors and host values, against max_memory_bytes (none without
  // a cap: nothing to check, nothing paid); blocks keep it alive after the
  // interpreter.
  backend::Ref<backend::MemoryAccount> account_;
  backend::RunScope run_scope() {
    return backend::RunScope({&rng_, threads_, device_, autocast_, account_.get(), &stop_, &loc_text_});
  }

  SourceManager sources_;
  EnvPtr prelude_;  // built-ins and the stdlib
  uint32_t prelude_file_ = 0;  // the stdlib's source (backend::library_entry)
  // The prelude's text and its declarations, parsed once per process.
  std::shared_ptr<PreludeSource> prelude_source_;
  std::unordered_map<Symbol, size_t> prelude_declarations_;  // name -> its index there
  EnvPtr globals_;  // the main module
  std::vector<std::unique_ptr<Program>> programs_;  // files and modules: kept
  // run_code's programs that ended, freed at the next top-level run_code.
  struct FinishedCode {
    std::unique_ptr<Program> program;
    uint32_t file = 0;
    bool keep = false;
  };
  std::vector<FinishedCode> finished_code_;
  int code_depth_ = 0;  // run_code calls running (a host function may eval)
  void release_finished_code();
  std::map<std::string, RecordPtr> modules_;        // by canonical path
  std::vector<std::string> loading_;                // import cycle detection
  std::set<std::string> checked_modules_;           // nn check: modules parsed and checked, by canonical path
  // Scopes that closures captured. A closure stored in the scope it captures
  // (any `fn` declaration) is a reference cycle; the destructor breaks them.
  void track_closure_scope(const EnvPtr& env);
  std::vector<std::weak_ptr<Env>> closure_scopes_;
  size_t closure_scopes_pruned_at_ = 64;

  // The cycle collector (frontend/cycle_collector.cpp). Cycles of scopes,
  // closures, lists and records (a closure handed back while stored in its
  // own scope, `o.step = fn ... o ...`, a record holding itself) are found
  // by trial deletion from the scopes closures captured and the lists and
  // records that were given a container, and broken at safe points.
 public:
  // `holder` (a list or record) was just given `stored`: a container
  // stored into one may close a cycle, so the holder is tracked.
  void note_stored(const Value& holder, const Value& stored) {
    if (stored.is_list() || stored.is_record() || stored.is_function() || stored.is_tuple() || stored.is_iterator())
      track_container(holder);
  }
  // Runs the collector at a safe point (see collect_cycles) when at least
  // `floor` scopes and containers, and as many as the last collection's
  // work asks (collect_after_), were tracked since the last run.
  void maybe_collect(size_t floor) {
    if (tracked_since_collect_ >= std::max(floor, collect_after_) && gc_blocked_ == 0 && runs_ == 1) [[unlikely]]
      collect_if_safe();
  }
  // Frees every cycle no one outside holds; returns how many objects
  // (scopes, functions, lists, tuples, records) were garbage. Only at a
  // point where no evaluator code holds a raw pointer into a value that
  // only cycles hold: see maybe_collect's callers.
  size_t collect_cycles();
  // While alive, collection waits (an `if` used as a value runs statements
  // inside an expression; a built-in calls back into a script).
  struct CollectBlock {
    explicit CollectBlock(Interpreter& v) : vm(v) { ++vm.gc_blocked_; }
    ~CollectBlock() { --vm.gc_blocked_; }
    CollectBlock(const CollectBlock&) = delete;
    CollectBlock& operator=(const CollectBlock&) = delete;
    Interpreter& vm;
  };

 private:
  void track_container(const Value& holder);
  void collect_if_safe();
  std::vector<std::weak_ptr<List>> tracked_lists_;
  std::vector<std::weak_ptr<Record>> tracked_records_;
  size_t tracked_since_collect_ = 0;  // scopes and containers tracked since the last collection
  size_t collect_after_ = 0;  // set by each collection from its work
  int gc_blocked_ = 0;
  int runs_ = 0;  // run_file/run_code/run_program nesting: 1 at a script's top level
  // Counts the nested runs (run_file, run_code, a module's import, a host's
  // call): the collector runs only at the outermost one's top level.
  struct RunDepth {
    int& depth;
    explicit RunDepth(int& d) : depth(d) { ++depth; }
    ~RunDepth() { --depth; }
    RunDepth(const RunDepth&) = delete;
    RunDepth& operator=(const RunDepth&) = delete;
  };
  Flow exec_top(const std::vector<StmtPtr>& stmts, const EnvPtr& env, Value* last);
  std::vector<std::weak_ptr<Env>> module_scopes_;  // roots: never walked
  int call_depth_ = 0;
  friend struct CallGuard;
};

}  // namespace nn::frontend
