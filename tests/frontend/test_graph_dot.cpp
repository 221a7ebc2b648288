// The graph-introspection built-ins run from nn code: dot(g, path) writes
// valid .dot/.svg/.png/.pdf files of a compiled graph, collapse folds the
// calls of a nested model into boxes, memory=true and raw=true show in the
// text, ir/graph_stats/dot take a graph's name too, dot(a, b) of tensors is
// still the dot product, and mistakes are diagnostics.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "frontend/script_test_util.h"
#include "ir/picture/dot_render.h"

using nn::frontend::Interpreter;
using nntest::run;
using nntest::script_error;

namespace {

namespace fs = std::filesystem;

// A scratch folder removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string name = "nn_test_graph_dot_";
    name += std::to_string(::getpid());
    path_ = fs::temp_directory_path() / name;
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Sequential(Linear, relu, Linear) traced in graph `f`: the Sequential's
// call is a scope of depth 1, each Linear's call one of depth 2 (matmul and
// add); relu is a built-in, so it has no scope of its own.
const char* const kNestedModel = R"(
seed(0)
let model = Sequential(Linear(4, 8), relu, Linear(8, 2))
graph f(x) { return sum(model(x)) }
let y = f(ones([3, 4]))
)";

}  // namespace

TEST_CASE("dot(g, path) writes dot, svg, png and pdf files") {
  ScratchDir dir;
  Interpreter vm;
  vm.run_code("t.nn", kNestedModel);
  for (const char* ext : {"dot", "svg", "png", "pdf"}) {
    CAPTURE(ext);
    const std::string path = dir.file(std::string("f.") + ext);
    CHECK(run(vm, "dot(f, \"" + path + "\")") == "none");
    const std::string bytes = read_all(path);
    REQUIRE(!bytes.empty());
    if (std::string(ext) == "dot") CHECK(bytes.rfind("digraph \"f\" {", 0) == 0);
    if (std::string(ext) == "svg") CHECK(bytes.find("<svg") != std::string::npos);
    if (std::string(ext) == "png") CHECK(bytes.rfind("\x89PNG", 0) == 0);
    if (std::string(ext) == "pdf") CHECK(bytes.rfind("%PDF", 0) == 0);
  }
  // The svg's tooltips give the source line of each op.
  CHECK(read_all(dir.file("f.svg")).find("t.nn:") != std::string::npos);
}

TEST_CASE("dot: collapse folds the calls of a nested model") {
  ScratchDir dir;
  Interpreter vm;
  vm.run_code("t.nn", kNestedModel);
  auto counts = [&](const std::string& extra) {
    const std::string path = dir.file("c.dot");
    vm.run_code("t.nn", "dot(f, \"" + path + "\"" + extra + ")");
    return nn::ir::parse_dot_counts(read_all(path));
  };
  // 6 ops (matmul add relu matmul add sum), input x and the legend: the
  // params are lines of their readers' labels. Edges: x->matmul, then the
  // chain of 5.
  nn::ir::DotCounts full = counts("");
  CHECK(full.nodes == 6 + 1 + 1);
  CHECK(full.edges == 6);
  CHECK(counts(", collapse=-1").nodes == full.nodes);
  CHECK(counts(", collapse=\"auto\"").nodes == full.nodes);  // 8 boxes: nothing needs folding
  CHECK(counts(", collapse=2").nodes == full.nodes);  // nothing is deeper than 2
  // collapse=1: each Linear (2 ops) is one box; relu and sum stay.
  nn::ir::DotCounts one = counts(", collapse=1");
  CHECK(one.nodes == 4 + 1 + 1);
  CHECK(one.edges < full.edges);
  // collapse=0: the whole Sequential (5 ops) is one box; sum stays.
  nn::ir::DotCounts zero = counts(", collapse=0");
  CHECK(zero.nodes == 2 + 1 + 1);
  CHECK(zero.edges < one.edges);
  CHECK(script_error(vm, "dot(f, \"x.dot\", collapse=-2)") ==
        "collapse is a nesting depth (0, 1, ...), -1 for none or \"auto\", not -2");
  CHECK(script_error(vm, "dot(f, \"x.dot\", collapse=\"deep\")") ==
        "collapse is a nesting depth (0, 1, ...), -1 for none or \"auto\", not a string");
}

// Params keep the script's names; the backward of each call is drawn in the
// call's mirror (`∇_linear_call`); the steps of an LSTM are one series; the
// .html page holds a view for each box.
TEST_CASE("dot: names, backward calls, series and the page of a training step") {
  ScratchDir dir;
  Interpreter vm;
  vm.run_code("t.nn", R"(
seed(0)
let model = {lstm: LSTM(3, 4), head: Linear(4, 2)}
let opt = sgd(params(model), 0.1)
graph step(x) {
  let (h, _) = model.lstm(x)
  let loss = sum(model.head(h))
  minimize(loss, opt)
  loss
}
let loss = step(ones([2, 5, 3]))
)");
  const std::string path = dir.file("s.dot"), page = dir.file("s.html");
  vm.run_code("t.nn", "dot(step, \"" + path + "\", collapse=-1)");
  const std::string all = read_all(path);
  CHECK(all.find("param model.head.w") != std::string::npos);
  CHECK(all.find("param model.lstm.cells[0].w_hh") != std::string::npos);
  CHECK(all.find("label=\"\u2207_linear_call\"") != std::string::npos);   // the backward of head(h)
  CHECK(all.find("label=\"_lstm_step \u00d75\"") != std::string::npos);  // forward steps
  CHECK(all.find("label=\"\u2207_lstm_step \u00d73\"") != std::string::npos);  // their backward (the first and last steps differ)
  CHECK(all.find("label=\"_sgd_update \u00d76\"") != std::string::npos);  // one update per param
  vm.run_code("t.nn", "dot(step, \"" + path + "\")");
  CHECK(read_all(path).find("g") != std::string::npos);
  CHECK(read_all(path).find("\"_lstm_step \u00d75\\n") != std::string::npos);  // a box by default
  vm.run_code("t.nn", "dot(step, \"" + page + "\")");
  const std::string html = read_all(page);
  CHECK(html.find("\"kind\":\"series\",\"label\":\"_lstm_step \u00d75\"") != std::string::npos);
  CHECK(html.find("\"memfill\":") != std::string::npos);  // the page can colour by memory
}

TEST_CASE("dot: memory=true shows the plan's blocks and readers; raw=true the title") {
  ScratchDir dir;
  Interpreter vm;
  vm.run_code("t.nn", kNestedModel);
  const std::string path = dir.file("m.dot");
  vm.run_code("t.nn", "dot(f, \"" + path + "\", memory=true)");
  std::string text = read_all(path);
  CHECK(text.find("block 0") != std::string::npos);
  CHECK(text.find(" reader") != std::string::npos);
  CHECK(text.find("(before optimization)") == std::string::npos);
  vm.run_code("t.nn", "dot(f, \"" + path + "\", raw=true)");
  text = read_all(path);
  CHECK(text.find("label=\"f (before optimization)\"") != std::string::npos);
  CHECK(text.find("block 0") == std::string::npos);
}

TEST_CASE("ir, graph_stats and dot take a graph's name") {
  ScratchDir dir;
  Interpreter vm;
  vm.run_code("t.nn", kNestedModel);
  CHECK(run(vm, "ir(\"f\") == ir(f)") == "true");
  CHECK(run(vm, "ir(\"f\", raw=true) == ir(f, raw=true)") == "true");
  // Two GEMMs with their bias (and relu) as epilogues, and the sum; the
  // picture draws the six ops they stand for.
  CHECK(run(vm, "graph_stats(\"f\").nodes") == "3");
  CHECK(run(vm, "graph_stats(\"f\").fused_groups") == "2");
  // Before the passes, and where the compile time went: trace, each pass,
  // the plan (their sum is within the whole).
  CHECK(run(vm, "graph_stats(\"f\").nodes_traced") == "6");
  vm.run_code("s.nn", "let s = graph_stats(f)");
  CHECK(run(vm, "s.trace_ms >= 0 and s.plan_ms > 0 and s.trace_ms + s.passes_ms + s.plan_ms <= s.compile_ms + 0.01") ==
        "true");
  // Each pass in the order it ran, what it changed and the nodes it left:
  // the two epilogue fusions take the graph from 4 nodes (after the
  // elementwise fusion) to 3.
  CHECK(run(vm, "len(s.passes)") == "20");
  CHECK(run(vm, "s.passes[16].name") == "fuse-matmul-epilogue");
  CHECK(run(vm, "(s.passes[16].changed, s.passes[16].nodes)") == "(2, 3)");
  const std::string path = dir.file("n.dot");
  vm.run_code("t.nn", "dot(\"f\", \"" + path + "\")");
  CHECK(nn::ir::parse_dot_counts(read_all(path)).nodes == 8);

  // A graph block is named by where it is.
  vm.run_code("b.nn", "let z = ones([2])\ngraph { z = z * 2.0 }\n");
  CHECK(run(vm, "graph_stats(\"graph block at b.nn:2:1\").nodes") == "1");

  CHECK(script_error(vm, "ir(\"g\")") == "no graph named `g` has been compiled (did you mean `f`?)");
  CHECK(script_error(vm, "ir(\"no_such_graph\")") == "no graph named `no_such_graph` has been compiled");
  vm.run_code("t.nn", "graph later(x) { return x + 1.0 }");
  CHECK(script_error(vm, "ir(\"later\")") == "graph later has not been compiled yet; call it once first");
  CHECK(script_error(vm, "ir(later)") == "graph later has not been compiled yet; call it once first");
  CHECK(script_error(vm, "ir(3)") ==
        "expected a graph function (`graph name(...) {...}`) or a graph's name, got an int");
}

TEST_CASE("dot: tensors still get the dot product; bad paths are diagnostics") {
  Interpreter vm;
  CHECK(run(vm, "item(dot([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]))") == "32.0");
  CHECK(script_error(vm, "dot([1.0], [2.0], raw=true)") ==
        "dot of two tensors takes no picture options (dot(g, path) draws a graph)");
  vm.run_code("t.nn", kNestedModel);
  CHECK(script_error(vm, "dot(f, \"f.jpg\")") ==
        "dot: cannot write `f.jpg`: the picture's extension must be .dot, .svg, .png, .pdf or .html");
  CHECK(script_error(vm, "dot(f, \"/nonexistent-dir/f.svg\")") ==
        "dot: cannot write `/nonexistent-dir/f.svg`: No such file or directory");
  CHECK(script_error(vm, "dot(model, \"f.svg\")").rfind("expected a graph function", 0) == 0);

  nn::frontend::InterpreterOptions no_files;
  no_files.allow_files = false;
  Interpreter sandboxed(no_files);
  sandboxed.run_code("t.nn", "graph g(x) { return x * 2.0 }\nlet y = g(ones([2]))");
  CHECK(script_error(sandboxed, "dot(g, \"/tmp/never.svg\")").find("file access is not allowed") != std::string::npos);
}
