// Modules: `import "path" [as name]` runs a file once and binds a record of
// its top-level names; the search goes through the importing file's folder,
// then NN_PATH and the search paths, then the stdlib.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "frontend/interpreter.h"
#include "frontend/parser.h"
#include "frontend/stdlib_path.h"

namespace nn::frontend {
namespace fs = std::filesystem;

void Interpreter::exec_import(const ImportStmt& s, const EnvPtr& env) {
  RecordPtr module = load_module(s.path, s.span, s.span.file);
  env->define(intern(s.alias), Value(module));
}

// The file `import path` names, searched as the file comment says;
// "cannot find module" where there is none.
std::string Interpreter::find_module(const std::string& path, Span span, uint32_t from_file) const {
  std::string file = path;
  if (fs::path(file).extension() != ".nn") file += ".nn";
  std::vector<fs::path> dirs;
  if (from_file) {
    fs::path importer = sources_.file(from_file).path();
    dirs.push_back(importer.has_parent_path() ? importer.parent_path() : fs::path("."));
  }
  for (auto& p : opts_.search_paths) dirs.push_back(p);
  fs::path stdlib = stdlib_dir();
  dirs.push_back(stdlib);

  fs::path found;
  for (auto& d : dirs) {
    fs::path candidate = d / file;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) {
      found = candidate;
      break;
    }
  }
  if (found.empty()) {
    // The stdlib is named, not spelled out: its folder differs per install.
    std::string searched;
    for (size_t i = 0; i + 1 < dirs.size(); ++i) searched += (i ? ", " : "") + dirs[i].string();
    searched += searched.empty() ? "the stdlib" : " and the stdlib";
    Diagnostic d{"cannot find module `" + path + "`", span, {"searched: " + searched}};
    throw ScriptError(std::move(d));
  }
  return found.string();
}

RecordPtr Interpreter::load_module(const std::string& path, Span span, uint32_t from_file) {
  const fs::path found(find_module(path, span, from_file));
  std::error_code ec;
  bool in_stdlib = fs::equivalent(found.parent_path(), stdlib_dir(), ec);
  if (!opts_.allow_files && !in_stdlib) fail(span, "file access is not allowed: cannot import `" + path + "`");
  std::string key = fs::weakly_canonical(found, ec).string();
  if (auto it = modules_.find(key); it != modules_.end()) return it->second;
  for (size_t i = 0; i < loading_.size(); ++i) {
    if (loading_[i] == key) {
      std::string chain;
      for (size_t j = i; j < loading_.size(); ++j) chain += fs::path(loading_[j]).filename().string() + " -> ";
      fail(span, "import cycle: " + chain + fs::path(key).filename().string());
    }
  }
  std::string text, why;
  if (!read_source_file(found.string(), text, why)) fail(span, "cannot read module `" + found.string() + "`: " + why);
  uint32_t id = sources_.add(found.string(), std::move(text));
  auto globals = std::make_shared<Env>(prelude_);
  loading_.push_back(key);
  try {
    run_program(parse(id), globals);
  } catch (ScriptError& e) {
    loading_.pop_back();
    e.first().notes.push_back("in module `" + path + "`, imported at " + sources_.location(span));
    throw;
  }
  loading_.pop_back();
  auto record = make_record();
  for (size_t i = 0; i < globals->names.size(); ++i) record->fields.emplace_back(globals->names[i], globals->values[i]);
  modules_[key] = record;
  return record;
}

void Interpreter::check_program(const Program& prog, const EnvPtr& globals, std::vector<std::string>& chain,
                                std::vector<Diagnostic>& found) {
  for (const auto& st : prog.stmts) {
    if (st->kind != StmtKind::Import) continue;
    const std::string& path = static_cast<const ImportStmt&>(*st).path;
    std::vector<Diagnostic> in_module;
    try {
      const fs::path file(find_module(path, st->span, st->span.file));
      std::error_code ec;
      if (fs::equivalent(file.parent_path(), stdlib_dir(), ec)) continue;  // the stdlib is checked by its tests
      if (!opts_.allow_files) fail(st->span, "file access is not allowed: cannot import `" + path + "`");
      const std::string key = fs::weakly_canonical(file, ec).string();
      if (std::find(chain.begin(), chain.end(), key) != chain.end()) {
        std::string cycle;
        for (auto it = std::find(chain.begin(), chain.end(), key); it != chain.end(); ++it)
          cycle += fs::path(*it).filename().string() + " -> ";
        fail(st->span, "import cycle: " + cycle + file.filename().string());
      }
      if (!checked_modules_.insert(key).second) continue;
      std::string text, why;
      if (!read_source_file(file.string(), text, why)) fail(st->span, "cannot read module `" + file.string() + "`: " + why);
      auto module = parse(sources_.add(file.string(), std::move(text)));
      chain.push_back(key);
      check_program(*module, std::make_shared<Env>(prelude_), chain, in_module);
      chain.pop_back();
      programs_.push_back(std::move(module));
    } catch (ScriptError& e) {
      in_module.insert(in_module.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
    for (Diagnostic& d : in_module) {
      if (d.span.file != st->span.file) d.notes.push_back("in module `" + path + "`, imported at " + sources_.location(st->span));
      found.push_back(std::move(d));
    }
  }
  try {
    check_names(prog, globals);
  } catch (ScriptError& e) {
    found.insert(found.end(), e.diagnostics().begin(), e.diagnostics().end());
  }
}

}  // namespace nn::frontend
