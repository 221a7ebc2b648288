// The interactive REPL: see repl/repl.h and docs/repl.md.
//
// Reading: libedit's histedit API. The line is read in libedit's edit mode
// with the terminal's ISIG turned off, so Ctrl-C at the prompt arrives as a
// key (bound to clear_line) rather than a signal. While an entry runs the
// terminal is back in its normal mode: Ctrl-C raises SIGINT, whose handler
// only calls frontend::request_interrupt(); the interpreter notices at its
// next statement or loop iteration and throws "interrupted".
#include "repl/repl.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "backend/error.h"
#include "frontend/diagnostic.h"
#include "frontend/format.h"
#include "frontend/graph_cache.h"
#include "frontend/parser.h"
#include "frontend/symbol.h"
#include "frontend/value.h"
#include "frontend/graph_picture.h"
#include "ir/printer.h"
#include "repl/libedit_library.h"

namespace nn::repl {

using frontend::Completeness;
using frontend::Interpreter;
using frontend::ScriptError;
using frontend::Value;

namespace {

const char* const kKeywords[] = {"let",   "fn",     "graph",    "return", "if",  "else", "for",
                                 "in",    "while",  "break",    "continue", "import", "as", "and",
                                 "or",    "not",    "true",     "false",  "none"};

const char* const kHelp =
    "Enter nn code; an unfinished block or bracket continues on the next line (`... `).\n"
    "The value of an expression is printed. Commands:\n"
    "  :help           this text\n"
    "  :quit           leave (Ctrl-D too)\n"
    "  :reset          start a fresh session (all names forgotten)\n"
    "  :load FILE      run a file into the session\n"
    "  :type EXPR      the type of EXPR, such as f32[2, 3]\n"
    "  :time EXPR      run EXPR and print the wall time it took\n"
    "  :mem            memory in use, peak and cached\n"
    "  :graphs         the compiled graphs: traces, signatures kept, nodes, runs\n"
    "  :ir G           the IR of graph G's latest compiled signature\n"
    "  :dot G [FILE]   draw graph G (.svg, .png, .pdf, .dot or .html; default G.svg)\n"
    "Tab completes names and record fields; Ctrl-C stops a running computation\n"
    "or clears the line; history is kept in ~/.nn_history.\n";

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string readable_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string readable_seconds(double s) {
  char buf[64];
  if (s < 1e-3) std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  else if (s < 1) std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f s", s);
  return buf;
}

extern "C" void on_sigint(int) { frontend::request_interrupt(); }

class Repl {
 public:
  explicit Repl(const frontend::InterpreterOptions& options) : options_(options) {}
  ~Repl();
  int run();

  // libedit callbacks
  static char* prompt_fn(EditLine* el);
  static unsigned char complete_fn(EditLine* el, int ch);
  static unsigned char clear_line_fn(EditLine* el, int ch);

 private:
  bool start_interpreter();
  void setup_editline();
  void load_history();
  void remember(const std::string& entry);
  // Runs one complete entry (code or a command); false to leave.
  bool handle(const std::string& entry);
  bool command(const std::string& line);
  // Runs `code`, prints its diagnostics; false when it failed.
  bool run_code(const std::string& code, Value* result);
  void print_value(const Value& v);
  void print_error(const ScriptError& e);
  // :graphs, :ir G, :dot G [FILE].
  void list_graphs();
  const frontend::CompiledGraph* find_graph(const std::string& name);
  void show_ir(const std::string& arg);
  void draw(const std::string& arg);

  frontend::InterpreterOptions options_;
  std::unique_ptr<Interpreter> interp_;
  EditLine* el_ = nullptr;
  History* hist_ = nullptr;
  std::string history_path_;
  const char* prompt_ = "nn> ";
  bool line_cleared_ = false;
  bool leave_ = false;
  int exit_code_ = 0;
};

Repl::~Repl() {
  if (el_) el_end(el_);
  if (hist_) history_end(hist_);
}

char* Repl::prompt_fn(EditLine* el) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  return const_cast<char*>(static_cast<Repl*>(data)->prompt_);
}

unsigned char Repl::clear_line_fn(EditLine* el, int) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  static_cast<Repl*>(data)->line_cleared_ = true;
  return CC_NEWLINE;
}

unsigned char Repl::complete_fn(EditLine* el, int) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  Repl* self = static_cast<Repl*>(data);
  const LineInfo* li = el_line(el);
  std::string before(li->buffer, li->cursor);
  size_t start = before.size();
  while (start > 0 && is_word_char(before[start - 1])) --start;
  std::string word = before.substr(start);
  // Tab with nothing to complete indents.
  if (word.empty()) {
    el_insertstr(el, "  ");
    return CC_REFRESH;
  }
  std::vector<std::string> found;
  try {
    found = completions(*self->interp_, word);
  } catch (...) {
    return CC_REFRESH_BEEP;
  }
  if (found.empty()) return CC_REFRESH_BEEP;
  std::string common = found.front();
  for (const auto& f : found) {
    size_t n = 0;
    while (n < common.size() && n < f.size() && common[n] == f[n]) ++n;
    common.resize(n);
  }
  if (common.size() > word.size()) {
    el_insertstr(el, common.substr(word.size()).c_str());
    return CC_REFRESH;
  }
  if (found.size() == 1) return CC_REFRESH;
  // Several candidates and nothing more in common: list them (the last part only).
  size_t dot = word.rfind('.');
  std::string text = "\n";
  for (const auto& f : found) text += (dot == std::string::npos ? f : f.substr(dot + 1)) + "  ";
  text += "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return CC_REDISPLAY;
}

bool Repl::start_interpreter() {
  try {
    interp_ = std::make_unique<Interpreter>(options_);
    return true;
  } catch (const ScriptError& e) {
    for (const auto& d : e.diagnostics()) std::cerr << "error: " << d.message << "\n";
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
  }
  return false;
}

void Repl::setup_editline() {
  // libedit reads characters by the locale's encoding: in the C locale it
  // drops every byte past ASCII ("héllo" read as "hllo"). Scripts are UTF-8
  // whatever the locale, so the line editor is too. LC_CTYPE alone: numbers
  // still print with a point.
  const char* ctype = setlocale(LC_CTYPE, "");
  if (!ctype || (!std::strstr(ctype, "UTF-8") && !std::strstr(ctype, "utf8"))) setlocale(LC_CTYPE, "C.UTF-8");
  hist_ = history_init();
  HistEvent ev;
  history(hist_, &ev, H_SETSIZE, 1000);
  el_ = el_init("nn", stdin, stdout, stderr);
  el_set(el_, EL_CLIENTDATA, static_cast<void*>(this));
  el_set(el_, EL_EDITOR, "emacs");
  el_set(el_, EL_PROMPT, &Repl::prompt_fn);
  el_set(el_, EL_HIST, history, hist_);
  el_set(el_, EL_ADDFN, "nn-complete", "Complete names and record fields", &Repl::complete_fn);
  el_set(el_, EL_BIND, "^I", "nn-complete", nullptr);
  // Ctrl-C at the prompt is a key that clears the line, not a signal.
  el_set(el_, EL_SETTY, "-d", "-isig", nullptr);
  el_set(el_, EL_ADDFN, "nn-clear-line", "Discard the entry being typed", &Repl::clear_line_fn);
  el_set(el_, EL_BIND, "^C", "nn-clear-line", nullptr);
  el_source(el_, nullptr);  // ~/.editrc, when there is one
}

void Repl::load_history() {
  const char* home = std::getenv("HOME");
  if (!home || !*home) return;
  history_path_ = std::string(home) + "/.nn_history";
  std::ifstream in(history_path_);
  HistEvent ev;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) history(hist_, &ev, H_ENTER, decode_history_entry(line).c_str());
}

void Repl::remember(const std::string& entry) {
  HistEvent ev;
  history(hist_, &ev, H_ENTER, entry.c_str());
  if (history_path_.empty()) return;
  std::ofstream out(history_path_, std::ios::app);
  out << encode_history_entry(entry) << "\n";
}

void Repl::print_error(const ScriptError& e) {
  std::cout.flush();
  // The terminal echoed ^C without a newline.
  if (!e.diagnostics().empty() && e.diagnostics().front().message == "interrupted") std::cerr << "\n";
  std::string text = interp_->render(e);
  if (!text.empty() && text.back() != '\n') text += '\n';
  std::cerr << text;
  std::cerr.flush();
}

void Repl::print_value(const Value& v) {
  if (v.is_none()) return;
  std::cout << frontend::to_repr(v) << "\n";
}

bool Repl::run_code(const std::string& code, Value* result) {
  frontend::clear_interrupt();
  try {
    Value v = interp_->run_code("<repl>", code, frontend::OpenEnd::error_before_end);
    if (result) *result = std::move(v);
    return true;
  } catch (const ScriptError& e) {
    print_error(e);
  } catch (const frontend::ExitRequest& r) {
    leave_ = true;
    exit_code_ = r.code;
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "error: out of host memory\n";
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "internal error: " << e.what() << "\n";
  }
  return false;
}

bool Repl::command(const std::string& line) {
  std::string name = line.substr(0, line.find_first_of(" \t"));
  std::string arg = trim(line.substr(name.size()));
  if (name == ":help" || name == ":h") {
    std::cout << kHelp;
  } else if (name == ":quit" || name == ":q") {
    return false;
  } else if (name == ":reset") {
    interp_.reset();
    if (!start_interpreter()) return false;
    std::cout << "session reset\n";
  } else if (name == ":load") {
    if (arg.empty()) {
      std::cerr << "error: :load needs a file\n";
    } else {
      frontend::clear_interrupt();
      try {
        interp_->run_file(arg);
      } catch (const ScriptError& e) {
        print_error(e);
      } catch (const frontend::ExitRequest& r) {
        leave_ = true;
        exit_code_ = r.code;
      } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << "\n";
      }
    }
  } else if (name == ":type") {
    Value v;
    if (arg.empty()) std::cerr << "error: :type needs an expression\n";
    else if (run_code(arg, &v)) std::cout << frontend::type_name(v) << "\n";
  } else if (name == ":time") {
    Value v;
    if (arg.empty()) {
      std::cerr << "error: :time needs an expression\n";
    } else {
      auto t0 = std::chrono::steady_clock::now();
      // No time for code that did not run to its end (its error said why).
      if (run_code(arg, &v)) {
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        print_value(v);
        std::cout << "time: " << readable_seconds(s) << "\n";
      }
    }
  } else if (name == ":mem") {
    Value* mem = interp_->find_global("mem");
    try {
      Value r = mem ? interp_->call(*mem, {}) : Value();
      if (r.is_record()) {
        std::string device = "cpu";
        std::string text;
        for (const auto& [k, v] : r.as_record()->fields) {
          if (v.is_str()) device = v.as_str();
          else if (v.is_int()) text += "  " + frontend::symbol_name(k) + ": " + readable_bytes(v.as_int()) + "\n";
        }
        std::cout << device << "\n" << text;
      }
    } catch (const ScriptError& e) {
      print_error(e);
    }
  } else if (name == ":graphs") {
    list_graphs();
  } else if (name == ":ir") {
    show_ir(arg);
  } else if (name == ":dot") {
    draw(arg);
  } else {
    std::cerr << "error: unknown command `" << name << "` (:help lists the commands)\n";
  }
  return !leave_;
}

void Repl::list_graphs() {
  const auto& graphs = interp_->graphs();
  if (graphs.empty()) {
    std::cout << "no graphs compiled yet\n";
    return;
  }
  for (const auto& cache : graphs) {
    std::string line = cache->name;
    line += ": ";
    // Traces, not signatures: a failed trace tried again, or one made again
    // for a changed capture, is another trace of the same signature.
    const size_t kept = cache->entries.size();
    line += "traced " + std::to_string(cache->traces) + (cache->traces == 1 ? " time, " : " times, ");
    line += std::to_string(kept) + (kept == 1 ? " signature kept" : " signatures kept");
    if (const frontend::CompiledGraph* cg = cache->latest()) {
      size_t nodes = cg->graph.nodes.size();
      line += "; latest: ";
      line += std::to_string(nodes);
      line += nodes == 1 ? " node, " : " nodes, ";
      line += std::to_string(cg->runs);
      line += cg->runs == 1 ? " run" : " runs";
    } else {
      line += "; none compiled (the trace failed)";
    }
    std::cout << line << "\n";
  }
}

// The latest compiled graph named `name`: of the graphs with that name (a
// graph function defined again makes a second one), the most recently made
// that has compiled. Null after printing why there is none.
const frontend::CompiledGraph* Repl::find_graph(const std::string& name) {
  const auto& graphs = interp_->graphs();
  bool known = false, failed = false;  // failed: called, but its trace failed
  for (size_t k = graphs.size(); k-- > 0;) {
    if (graphs[k]->name != name) continue;
    known = true;
    failed = failed || graphs[k]->traces > 0;
    if (const frontend::CompiledGraph* cg = graphs[k]->latest()) return cg;
  }
  if (!known) {  // a graph function not called yet has no cache
    const Value* g = interp_->find_global(name);
    const frontend::Function* f = g && g->is_function() ? g->as_function().get() : nullptr;
    known = f && f->kind == frontend::Function::Kind::Closure && f->def->is_graph;
  }
  std::cout.flush();
  if (known) {
    std::cerr << "error: graph " << name
              << (failed ? " has no compiled signature: its trace failed; call it again once that is fixed\n"
                         : " has not been compiled yet; call it once first\n");
    return nullptr;
  }
  std::vector<std::string> names;
  for (const auto& c : graphs) names.push_back(c->name);
  std::string hint = frontend::closest_name(name, names);
  std::cerr << "error: no graph named `" << name << "` has been compiled";
  if (!hint.empty()) std::cerr << " (did you mean `" << hint << "`?)";
  std::cerr << "\n";
  return nullptr;
}

void Repl::show_ir(const std::string& arg) {
  if (arg.empty()) {
    std::cerr << "error: :ir needs a graph name (:graphs lists them)\n";
    return;
  }
  if (const frontend::CompiledGraph* cg = find_graph(arg)) std::cout << ir::print_ir(cg->graph);
}

// `:dot G [FILE]`. A block's name has spaces ("graph block at <repl>:1:1"),
// so the whole argument is G when a graph has that name, else the last word
// is FILE. Without FILE: G.svg, G's odd characters made `_`.
void Repl::draw(const std::string& arg) {
  if (arg.empty()) {
    std::cerr << "error: :dot needs a graph name (:graphs lists them)\n";
    return;
  }
  std::string name = arg, path;
  bool whole = false;
  for (const auto& c : interp_->graphs()) whole = whole || c->name == arg;
  size_t space = arg.find_last_of(" \t");
  if (!whole && space != std::string::npos) {
    name = trim(arg.substr(0, space));
    path = arg.substr(space + 1);
  }
  if (path.empty()) {
    for (char c : name) path += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
    path += ".svg";
  }
  const frontend::CompiledGraph* cg = find_graph(name);
  if (!cg) return;
  try {
    frontend::draw_graph(*interp_, *cg, {}, path);
    std::cout << "wrote " << path << "\n";
  } catch (const backend::Error& e) {
    std::cout.flush();
    std::cerr << "error: " << e.what() << "\n";
  }
}

bool Repl::handle(const std::string& entry) {
  std::string t = trim(entry);
  if (t.empty()) return true;
  remember(entry);
  bool go_on = true;
  if (t[0] == ':' && t.find('\n') == std::string::npos) {
    go_on = command(t);
  } else {
    Value v;
    if (run_code(entry, &v)) print_value(v);
    go_on = !leave_;
  }
  std::cout.flush();
  // A ^C that landed in a write leaves the streams failed: clear them.
  std::cout.clear();
  std::cerr.clear();
  std::clearerr(stdout);
  std::clearerr(stderr);
  return go_on;
}

int Repl::run() {
  if (!start_interpreter()) return 1;
  try {
    setup_editline();
  } catch (const backend::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  load_history();

  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  struct sigaction old {};
  sigaction(SIGINT, &sa, &old);

  std::cout << "nn " << NN_VERSION << " (:help for help, Ctrl-D to leave)\n";
  std::string entry;
  while (!leave_) {
    prompt_ = entry.empty() ? "nn> " : "... ";
    std::cout.flush();
    line_cleared_ = false;
    int count = 0;
    const char* line = el_gets(el_, &count);
    if (line_cleared_ || (!line && count < 0 && errno == EINTR)) {
      // Ctrl-C at the prompt: drop what was typed, the continued entry too.
      std::cout << "^C\n";
      entry.clear();
      frontend::clear_interrupt();
      continue;
    }
    if (!line || count <= 0) {  // Ctrl-D
      std::cout << "\n";
      break;
    }
    std::string text(line, size_t(count));
    if (!text.empty() && text.back() == '\n') text.pop_back();
    entry += entry.empty() ? text : "\n" + text;
    // A command is one line; code goes on while the parser says it is unfinished.
    std::string t = trim(entry);
    if (!t.empty() && t[0] != ':' && frontend::check_complete(entry) == Completeness::incomplete) continue;
    std::string done = std::move(entry);
    entry.clear();
    if (!handle(done)) break;
  }
  std::cout.flush();
  sigaction(SIGINT, &old, nullptr);
  return exit_code_;
}

}  // namespace

std::string encode_history_entry(const std::string& entry) {
  std::string out;
  for (char c : entry) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string decode_history_entry(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      char n = line[++i];
      out += n == 'n' ? '\n' : n;
    } else {
      out += line[i];
    }
  }
  return out;
}

std::vector<std::string> completions(Interpreter& interp, const std::string& word) {
  std::set<std::string> found;
  size_t dot = word.rfind('.');
  if (dot == std::string::npos) {
    for (const char* k : kKeywords)
      if (std::string_view(k).starts_with(word)) found.insert(k);
    for (const auto& n : interp.global_names())
      if (n.starts_with(word)) found.insert(n);
    return {found.begin(), found.end()};
  }
  // `a.b.par`: walk the records a, a.b, then list the fields starting with `par`.
  std::string path = word.substr(0, dot), partial = word.substr(dot + 1);
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  if (parts.empty() || parts.front().empty()) return {};
  const Value* v = interp.find_global(parts.front());
  for (size_t i = 1; v && i < parts.size(); ++i)
    v = v->is_record() ? v->as_record()->find(frontend::intern(parts[i])) : nullptr;
  if (!v || !v->is_record()) return {};
  for (const auto& [k, _] : v->as_record()->fields) {
    const std::string& name = frontend::symbol_name(k);
    if (name.starts_with(partial)) found.insert(path + "." + name);
  }
  return {found.begin(), found.end()};
}

int run_repl(const frontend::InterpreterOptions& options) {
  Repl repl(options);
  return repl.run();
}

}  // namespace nn::repl
