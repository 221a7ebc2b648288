// The stdlib's prelude is loaded without being parsed: each top-level
// function is parsed, checked and run when a program first names it
// (frontend/prelude.cpp), and its code still points at its place in
// prelude.nn. A prelude with other code at its top level runs whole.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "frontend/interpreter.h"
#include "frontend/stdlib_path.h"

using namespace nn::frontend;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `body` with NN_STDLIB naming a folder whose prelude.nn is `prelude`.
template <class F>
void with_prelude(const std::string& prelude, F body) {
  const fs::path dir = fs::temp_directory_path() / ("nn_prelude_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "prelude.nn") << prelude;
  const char* old = std::getenv("NN_STDLIB");
  const std::string saved = old ? old : "";
  ::setenv("NN_STDLIB", dir.c_str(), 1);
  body(dir);
  if (old) ::setenv("NN_STDLIB", saved.c_str(), 1);
  else ::unsetenv("NN_STDLIB");
  fs::remove_all(dir);
}

}  // namespace

TEST_CASE("every function of the prelude is made when named, and points at its line of prelude.nn") {
  const fs::path path = fs::path(stdlib_dir()) / "prelude.nn";
  const std::string text = read_text(path);
  REQUIRE(!text.empty());
  Interpreter vm;
  std::istringstream lines(text);
  std::string line;
  int number = 0, functions = 0;
  const std::regex fn_line("^fn ([A-Za-z_][A-Za-z_0-9]*)\\(");
  while (std::getline(lines, line)) {
    ++number;
    std::smatch m;
    if (!std::regex_search(line, m, fn_line)) continue;
    ++functions;
    const std::string name = m[1];
    CAPTURE(name);
    Value v = vm.run_code("t.nn", name);
    REQUIRE(v.is_function());
    REQUIRE(v.as_function()->def);
    CHECK(v.as_function()->def->name == name);
    CHECK(vm.sources().location(v.as_function()->def->span) == path.string() + ":" + std::to_string(number) + ":1");
  }
  CHECK(functions > 40);
}

TEST_CASE("a prelude function is parsed only once a program names it") {
  // `broken` has a syntax error: the interpreter starts, `good` runs, and
  // naming `broken` reports the error at its place in prelude.nn.
  with_prelude("# a test prelude\nfn good(x) { x + 1 }\n\nfn broken(x) {\n  x +\n}\n", [](const fs::path& dir) {
    Interpreter vm;
    CHECK(vm.run_code("t.nn", "good(1)").as_int() == 2);
    try {
      vm.run_code("t.nn", "broken(1)");
      FAIL("naming `broken` should report its syntax error");
    } catch (const ScriptError& e) {
      REQUIRE(!e.diagnostics().empty());
      const std::string where = vm.sources().location(e.diagnostics()[0].span);
      CHECK(where == (dir / "prelude.nn").string() + ":5:6");  // after `x +`: as if the file were parsed whole
    }
  });
}

TEST_CASE("a prelude with code besides functions at its top level runs whole at start") {
  with_prelude("let _k = 3\nfn triple(x) { x * _k }\n", [](const fs::path&) {
    Interpreter vm;
    CHECK(vm.run_code("t.nn", "triple(2)").as_int() == 6);
    CHECK(vm.run_code("t.nn", "_k").as_int() == 3);
  });
}
