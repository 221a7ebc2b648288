// The training state built-ins (SPEC §17): state, load_state from a file or a
// record, rng_state/set_rng_state, and what save/load keep for them (list
// positions of functions, tensors shared between a model and its optimizer).
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "frontend/interpreter.h"
#include "script_test_util.h"

using namespace nn::frontend;
using namespace nntest;
namespace fs = std::filesystem;

namespace {

// A fresh checkpoint path in its own temporary folder, removed afterwards.
struct TempCheckpoint {
  fs::path dir;
  TempCheckpoint() {
    std::string pattern = (fs::temp_directory_path() / "nn_test_state_XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
  }
  ~TempCheckpoint() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string path() const { return (dir / "ck.safetensors").string(); }
};

std::string names_of_state(Interpreter& vm, const std::string& x) {
  return run(vm, "let ns = []\nfor (n, t) in fields(state(" + x + ")) { append(ns, n) }\nns");
}

}  // namespace

TEST_CASE("state: dotted names in field order, each tensor once, functions and host values skipped") {
  Interpreter vm;
  vm.run_code("t.nn",
              "let m = {layers: [{w: param([[1.0]]), b: param([0.0])}, fn(x) { x }, {w: param([[2.0]]), b: none}],\n"
              "         kind: \"mlp\"}\n"
              "let o = adam(params(m))\n");
  CHECK(names_of_state(vm, "m") == "[\"layers.0.w\", \"layers.0.b\", \"layers.2.w\"]");
  CHECK(names_of_state(vm, "{model: m, opt: o}") ==
        "[\"model.layers.0.w\", \"model.layers.0.b\", \"model.layers.2.w\", \"opt.t\", \"opt.m.0\", \"opt.m.1\", "
        "\"opt.m.2\", \"opt.v.0\", \"opt.v.1\", \"opt.v.2\"]");
  // The values are the tensors themselves, not copies.
  CHECK(run(vm, "let (n, w) = fields(state(m))[0]\nno_grad(fn() { w += 1.0 })\nm.layers[0].w[0, 0]") == "2.0");
  // A cycle ends; a tensor alone is not a state.
  vm.run_code("t.nn", "let r = {a: [1.0]}\nr.me = r\n");
  CHECK(names_of_state(vm, "r") == "[\"a\"]");
  vm.run_code("t.nn", "r.me = none\n");  // a cycle of records is never freed
  CHECK(script_error(vm, "state(zeros([2]))") ==
        "state needs a record or list (a model, an optimizer, a nest of them), not a tensor f32[2]");
}

TEST_CASE("load_state reads every source before it writes: a swap of two params swaps them") {
  // One copy after another, the second read what the first had written.
  Interpreter vm;
  vm.run_code("t.nn", "let r = {a: tensor([1.0, 2.0]), b: tensor([3.0, 4.0])}\nload_state(r, {a: r.b, b: r.a})");
  CHECK(run(vm, "r.a") == "f32[2] [3.0, 4.0]");
  CHECK(run(vm, "r.b") == "f32[2] [1.0, 2.0]");
}

TEST_CASE("save/load keep list positions and shared tensors; load_state reads the file") {
  TempCheckpoint ck;
  Interpreter vm;
  vm.set_global("p", Value(ck.path()));
  vm.run_code("t.nn",
              "seed(0)\n"
              "let m = Sequential(Linear(2, 3), relu, Linear(3, 1))\n"
              "let o = sgd(params(m), lr=0.1, momentum=0.9)\n"
              "save({model: m, opt: o}, p)\n"
              "let back = load(p)\n");
  CHECK(run(vm, "back.model.layers[1]") == "none");
  CHECK(run(vm, "back.model.layers[2].w.shape") == "[3, 1]");
  CHECK(run(vm, "back.model.kind") == "Sequential");
  // The optimizer's params were written once and come back as the model's.
  CHECK(run(vm, "len(load(p).opt.params)") == "4");
  CHECK(run(vm, "back.opt.params[2] += 1.0\nsum(back.model.layers[2].w - m.layers[2].w)") == "3.0");

  // Into fresh objects from another seed, in place.
  vm.run_code("t.nn",
              "seed(5)\n"
              "let m2 = Sequential(Linear(2, 3), relu, Linear(3, 1))\n"
              "let o2 = sgd(params(m2), lr=0.1, momentum=0.9)\n"
              "let w2 = m2.layers[0].w\n");
  CHECK(run(vm, "sum(w2 == m.layers[0].w)") == "0");
  CHECK(run(vm, "load_state({model: m2, opt: o2}, p)") == "none");
  CHECK(run(vm, "sum(w2 == m.layers[0].w)") == "6");

  // A file that does not fit changes nothing.
  vm.run_code("t.nn", "let m3 = Sequential(Linear(2, 3), relu, Linear(3, 2))\nlet before = m3.layers[0].w + 0.0\n");
  CHECK(script_error(vm, "load_state(m3, p)") ==
        "load_state: the source does not fit; missing `layers.0.w`, `layers.0.b`, `layers.2.w`, `layers.2.b`; "
        "unexpected `model.layers.0.w`, `model.layers.0.b`, `model.layers.2.w`, `model.layers.2.b`, `opt.bufs.0`, "
        "`opt.bufs.1`, `opt.bufs.2`, `opt.bufs.3` (strict=false loads the names both have and returns the others)");
  CHECK(script_error(vm, "load_state({model: m3}, p, strict=false)") ==
        "load_state: the source does not fit; unexpected `opt.bufs.0`, `opt.bufs.1`, `opt.bufs.2`, `opt.bufs.3`; "
        "`model.layers.2.w` is f32[3, 2] here and f32[3, 1] in the source; `model.layers.2.b` is f32[2] here and "
        "f32[1] in the source");
  CHECK(run(vm, "sum(before == m3.layers[0].w)") == "6");
  CHECK(run(vm, "load_state({model: m3.layers[0]}, p, strict=false)") ==
        "{missing: [\"model.w\", \"model.b\"], unexpected: [\"model.layers.0.w\", \"model.layers.0.b\", "
        "\"model.layers.2.w\", \"model.layers.2.b\", \"opt.bufs.0\", \"opt.bufs.1\", \"opt.bufs.2\", "
        "\"opt.bufs.3\"]}");
  CHECK(script_error(vm, "load_state(m3, 3)") == "load_state reads from a checkpoint path or a record of tensors, not an int");
  CHECK(script_error(vm, "load_state(zeros([1]), p)") ==
        "load_state copies into the tensors of a record or list (a model, an optimizer), not a tensor f32[1]");

  InterpreterOptions opts;
  opts.allow_files = false;
  Interpreter sandboxed(opts);
  sandboxed.set_global("p", Value(ck.path()));
  CHECK(script_error(sandboxed, "load_state({w: zeros([1])}, p)") ==
        "file access is not allowed: cannot read `" + ck.path() + "`");
}

TEST_CASE("rng_state/set_rng_state: the same draws again") {
  Interpreter vm;
  CHECK(run(vm, "seed(3)\nlet s = rng_state()\nlet a = randn([4])\nlet d = rand([2])\nset_rng_state(s)\n"
                "sum(randn([4]) == a) + sum(rand([2]) == d)") == "6");
  CHECK(run(vm, "seed(3)\nrng_state()") == "i64[2] [3, 0]");
  CHECK(script_error(vm, "set_rng_state(zeros([3], i64))") ==
        "set_rng_state needs the i64[2] tensor that rng_state() gives, not i64[3]");
  CHECK(script_error(vm, "graph g(x) {\n  let s = rng_state()\n  return x\n}\ng(1.0)") ==
        "rng_state cannot run inside a compiled graph (it would act only while the graph is traced); call it "
        "outside the graph function");
  // seed too: replays would draw on where the trace left the generator.
  CHECK(script_error(vm, "graph h() {\n  seed(3)\n  return randn([2])\n}\nh()") ==
        "seed cannot run inside a compiled graph (it would act only while the graph is traced); call it "
        "outside the graph function");
}

TEST_CASE("the clock, memory figures, file writes and graph figures cannot run inside a graph") {
  // Each would act only while the graph is traced: a replay would reuse the
  // traced time, or skip the write (after the graph's own updates, too); a
  // graph's own figures are not there yet while it is traced (graph_stats
  // gave an empty record).
  Interpreter vm;
  vm.set_global("p", Value(std::string("/tmp/nn_refused_in_graph.npy")));  // never written
  const std::string rest =
      " cannot run inside a compiled graph (it would act only while the graph is traced); call it outside the graph "
      "function";
  CHECK(script_error(vm, "graph f(x) { x + time() }\nf(1.0)") == "time" + rest);
  CHECK(script_error(vm, "graph f(x) { x + mem().current }\nf(1.0)") == "mem" + rest);
  CHECK(script_error(vm, "let w = zeros([2])\ngraph f(x) {\n  w += x\n  save_npy(w, p)\n  x\n}\nf(ones([2]))") ==
        "save_npy" + rest);
  CHECK(script_error(vm, "let v = zeros([2])\ngraph f(x) {\n  save({v: v}, p)\n  x\n}\nf(ones([2]))") == "save" + rest);
  CHECK(script_error(vm, "graph f(x) { x + graph_stats(f).nodes }\nf(1.0)") == "graph_stats" + rest);
  CHECK(script_error(vm, "graph f(x) {\n  print(ir(f))\n  x\n}\nf(1.0)") == "ir" + rest);
  CHECK(run(vm, "time() > 0") == "true");  // outside a graph, as before
}
