// The stdlib's prelude.nn, loaded into the prelude at start without being
// parsed: parsing its ~60 functions was most of the time `nn -e 'print(1)'`
// took. The file is cut at its top-level `fn` lines; each function's name
// is declared pending (Env::define_pending) and its declaration is parsed,
// checked and run the first time a program reads the name. A prelude that
// holds anything else at its top level is parsed and run whole, at start.
// The text and the parsed declarations are shared by every interpreter of
// the process.
#include <filesystem>
#include <mutex>

#include "frontend/interpreter.h"
#include "frontend/parser.h"
#include "frontend/stdlib_path.h"

namespace nn::frontend {
namespace fs = std::filesystem;

struct PreludeSource {
  struct Declaration {
    std::string name;
    uint32_t begin = 0, end = 0;  // its bytes in the file
    std::shared_ptr<const Program> program;  // once parsed
  };
  std::string path, text;
  std::shared_ptr<const SourceFile> file;
  uint32_t file_id = 0;  // the spans of the parsed code name the file by this id
  std::vector<Declaration> declarations;  // empty: the file is parsed whole
  std::shared_ptr<const Program> whole;
  std::mutex mu;  // guards the programs
};

namespace {

bool starts_with(std::string_view line, std::string_view word) { return line.substr(0, word.size()) == word; }

// Cuts the text at its top-level `fn` lines. Every other line at column 0
// must be blank, a comment or a closing brace; else nothing is cut.
std::vector<PreludeSource::Declaration> top_level_functions(const std::string& text) {
  std::vector<PreludeSource::Declaration> out;
  for (size_t at = 0; at < text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view line(text.data() + at, eol - at);
    if (starts_with(line, "fn ")) {
      const size_t name_end = line.find('(');
      if (name_end == std::string_view::npos) return {};
      if (!out.empty()) out.back().end = uint32_t(at);
      out.push_back({std::string(line.substr(3, name_end - 3)), uint32_t(at), uint32_t(text.size()), nullptr});
    } else if (!line.empty() && line[0] != '#' && line[0] != '\r' &&
               (out.empty() || (line[0] != ' ' && line[0] != '}'))) {
      return {};  // code before the first function, or other code at the top level
    }
    at = eol + 1;
  }
  return out;
}

// The prelude first loaded in this process, shared while the file is the
// same. Made on first use, after the CPU device, so that it is destroyed
// before the device its literal tensors were made on.
struct Shared {
  std::mutex mu;
  std::shared_ptr<PreludeSource> source;
};
Shared& shared() {
  static Shared s;
  return s;
}

}  // namespace

void Interpreter::load_stdlib_prelude() {
  fs::path p = fs::path(stdlib_dir()) / "prelude.nn";
  std::string text, why;
  if (!read_source_file(p.string(), text, why)) return;  // no stdlib installed: the built-ins alone
  Shared& sh = shared();
  {
    std::lock_guard lock(sh.mu);
    if (sh.source && sh.source->path == p.string() && sh.source->text == text) {
      prelude_file_ = sources_.add(sh.source->file);
      // Its parsed code names the file by the first interpreter's id.
      if (prelude_file_ == sh.source->file_id) prelude_source_ = sh.source;
    }
  }
  if (!prelude_source_) {
    if (!prelude_file_) prelude_file_ = sources_.add(p.string(), text);
    auto source = std::make_shared<PreludeSource>();
    source->path = p.string();
    source->file = sources_.share(prelude_file_);
    source->file_id = prelude_file_;
    source->declarations = top_level_functions(text);
    source->text = std::move(text);
    prelude_source_ = source;
    std::lock_guard lock(sh.mu);
    if (!sh.source) sh.source = std::move(source);
  }
  PreludeSource& src = *prelude_source_;
  if (!src.declarations.empty()) {
    const std::function<void(Symbol)> make = [this](Symbol name) { make_prelude_function(name); };
    for (size_t i = 0; i < src.declarations.size(); ++i) {
      const Symbol name = intern(src.declarations[i].name);
      prelude_declarations_[name] = i;
      prelude_->define_pending(name, make);
    }
    return;
  }
  std::shared_ptr<const Program> program;
  {
    std::lock_guard lock(src.mu);
    if (!src.whole) src.whole = parse(prelude_file_);
    program = src.whole;
  }
  check_names(*program, prelude_);
  Value last;
  exec_stmts(program->stmts, prelude_, &last);
}

void Interpreter::make_prelude_function(Symbol name) {
  PreludeSource& src = *prelude_source_;
  PreludeSource::Declaration& d = src.declarations.at(prelude_declarations_.at(name));
  std::shared_ptr<const Program> program;
  {
    std::lock_guard lock(src.mu);
    if (!d.program) d.program = parse_program_part(sources_, prelude_file_, d.begin, d.end);
    program = d.program;
  }
  if (program->stmts.size() != 1 || program->stmts[0]->kind != StmtKind::FnDecl)
    throw backend::Error("internal: the prelude's declaration of `" + d.name + "` is not one function");
  check_names(*program, prelude_);
  Value last;
  exec_stmts(program->stmts, prelude_, &last);
}

}  // namespace nn::frontend
