// Pictures of graphs: print_dot's text parses back with libcgraph with the
// node and edge counts worked out by hand, matches a golden text for a tiny
// graph, writes params, state and small constants into labels, labels edges
// where shapes change, folds nested calls (by hand and to at most 80 boxes),
// draws repeated calls as one series box, renders every format (the .html
// page included) in process, and reports bad paths with a clear Error.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "backend/dispatch.h"
#include "backend/ops.h"
#include "ir/graph.h"
#include "ir/pass.h"
#include "ir/picture/dot_printer.h"
#include "ir/picture/dot_render.h"
#include "ir/picture/group_tree.h"
#include "ir/picture/picture.h"

using namespace nn;
using ir::NodeId;
using ir::Role;
using ir::ValueId;

namespace {

backend::TensorType f32(std::initializer_list<int64_t> dims) {
  return backend::TensorType{backend::DType::f32, backend::Shape(dims), backend::cpu_device()};
}

NodeId add_op(ir::Graph& g, const char* op, std::vector<ValueId> in, backend::TensorType out, uint32_t scope = 0,
              ir::Phase phase = ir::Phase::forward) {
  NodeId n = g.add_node(&backend::op(op), std::move(in), {}, backend::OutTypes{out});
  g.nodes[n].scope = scope;
  g.nodes[n].phase = phase;
  return n;
}

ValueId out_of(const ir::Graph& g, NodeId n) { return g.nodes[n].outputs[0]; }

void mark_output(ir::Graph& g, ValueId v) {
  g.values[v].output = true;
  g.outputs.push_back(v);
}

// 2 inputs, add, relu, output.
ir::Graph tiny() {
  ir::Graph g;
  g.name = "tiny";
  ValueId a = g.add_value(f32({2, 3}), Role::input, "a");
  ValueId b = g.add_value(f32({2, 3}), Role::input, "b");
  g.inputs = {a, b};
  NodeId s = add_op(g, "add", {a, b}, f32({2, 3}));
  NodeId r = add_op(g, "relu", {out_of(g, s)}, f32({2, 3}));
  mark_output(g, out_of(g, r));
  return g;
}

ValueId constant(ir::Graph& g, double x) {
  ValueId c = g.add_value(f32({}), Role::constant);
  g.values[c].captured = backend::scalar(x, backend::DType::f32);
  return c;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `count` consecutive calls of `name` under scope `parent`, each
// matmul(h, w) then tanh, h flowing from one call to the next. Returns h.
ValueId steps(ir::Graph& g, const char* name, int count, uint32_t parent, ValueId h, ValueId w) {
  for (int i = 0; i < count; ++i) {
    g.scopes.push_back({name, parent, {}});
    const uint32_t s = uint32_t(g.scopes.size() - 1);
    h = out_of(g, add_op(g, "matmul", {h, w}, f32({2, 2}), s));
    h = out_of(g, add_op(g, "tanh", {h}, f32({2, 2}), s));
  }
  return h;
}

// Sequential > Linear (> init) and Sequential > Linear, then a sum outside:
//   n0 matmul(x, w1) s2, n1 add(n0, b1) s4, n2 mul(n1, x) s2, n3 relu s1,
//   n4 matmul(n3, w2) s3, n5 add(n4, b2) s3, n6 sum s0.
ir::Graph nested() {
  ir::Graph g;
  g.name = "mlp";
  g.scopes.push_back({"Sequential", 0, {}});
  g.scopes.push_back({"Linear", 1, {}});
  g.scopes.push_back({"Linear", 1, {}});
  g.scopes.push_back({"init", 2, {}});
  ValueId x = g.add_value(f32({4, 8}), Role::input, "x");
  ValueId w1 = g.add_value(f32({8, 8}), Role::param, "w1");
  ValueId b1 = g.add_value(f32({8}), Role::param, "b1");
  ValueId w2 = g.add_value(f32({8, 2}), Role::param, "w2");
  ValueId b2 = g.add_value(f32({2}), Role::param, "b2");
  g.inputs = {x};
  NodeId n0 = add_op(g, "matmul", {x, w1}, f32({4, 8}), 2);
  NodeId n1 = add_op(g, "add", {out_of(g, n0), b1}, f32({4, 8}), 4);
  NodeId n2 = add_op(g, "mul", {out_of(g, n1), x}, f32({4, 8}), 2);
  NodeId n3 = add_op(g, "relu", {out_of(g, n2)}, f32({4, 8}), 1);
  NodeId n4 = add_op(g, "matmul", {out_of(g, n3), w2}, f32({4, 2}), 3);
  NodeId n5 = add_op(g, "add", {out_of(g, n4), b2}, f32({4, 2}), 3);
  NodeId n6 = add_op(g, "sum", {out_of(g, n5)}, f32({}), 0);
  mark_output(g, out_of(g, n6));
  return g;
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::filesystem::path scratch_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("nn_test_dot_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("dot: golden text of a tiny graph") {
  const std::string golden = R"(digraph "tiny" {
  graph [label="tiny", labelloc=t, fontname="Helvetica", fontsize=14, rankdir=TB, newrank=true, nodesep=0.2, ranksep=0.3];
  node [fontname="Helvetica", fontsize=10, shape=box, style="rounded,filled", fillcolor="#ffffff"];
  edge [fontname="Helvetica", fontsize=8, color="#555555"];
  v0 [label="input a\nf32[2, 3]", shape=invhouse, style=filled, fillcolor="#f3f3f3", tooltip="%0"];
  v1 [label="input b\nf32[2, 3]", shape=invhouse, style=filled, fillcolor="#f3f3f3", tooltip="%1"];
  n0 [label="add\nf32[2, 3]", fillcolor="#cfe2f3", tooltip="%2"];
  n1 [label="relu\nf32[2, 3]", shape=doubleoctagon, style=filled, fillcolor="#cfe2f3", tooltip="%3"];
  v0 -> n0 [tooltip="%0 f32[2, 3]"];
  v1 -> n0 [tooltip="%1 f32[2, 3]"];
  n0 -> n1 [tooltip="%2 f32[2, 3]"];
  legend [shape=plain, fontsize=8, label=<<table border="0" cellspacing="2" cellpadding="2"><tr><td border="1" style="rounded" bgcolor="#cfe2f3">forward</td></tr><tr><td border="1" style="rounded" >house: input; hexagon: constant</td></tr><tr><td border="1" style="rounded" >double octagon: graph output</td></tr><tr><td border="1" style="rounded" >edges: shapes where they change</td></tr></table>>];
}
)";
  ir::Graph g = tiny();
  CHECK(ir::print_dot(g) == golden);
  ir::DotCounts c = ir::parse_dot_counts(golden);
  CHECK(c.nodes == 5);
  CHECK(c.edges == 3);

  // An empty graph, even without its root scope, is still a picture (of its legend).
  ir::Graph empty;
  empty.scopes.clear();
  ir::DrawOptions fold;
  fold.collapse = 0;
  c = ir::parse_dot_counts(ir::print_dot(empty, fold));
  CHECK(c.nodes == 1);
  CHECK(c.edges == 0);
}

TEST_CASE("dot: params, state and small constants are written into labels") {
  ir::Graph g = nested();
  ValueId lr = constant(g, 0.5);
  ValueId step = g.add_value(f32({}), Role::state, "step");
  NodeId bw = add_op(g, "mul", {g.outputs[0], lr}, f32({}), 0, ir::Phase::backward);
  NodeId opt = add_op(g, "add", {step, out_of(g, bw)}, f32({}), 0, ir::Phase::optimizer);
  g.updates.push_back({step, out_of(g, opt)});
  NodeId print = g.add_node(nullptr, {out_of(g, opt)}, {}, {});
  g.nodes[print].set_host(ir::host_call("print"));
  g.nodes[print].loc = {1, 40, 52};
  g.nodes[0].loc = {1, 7, 9};
  g.locate = [](const ir::Loc& l) { return "mlp.nn:" + std::to_string(l.begin); };

  const std::string dot = ir::print_dot(g);
  // Drawn: the 10 ops, input x and the legend; w1, b1, w2, b2, lr and step
  // are lines of their readers' labels. Edges, by hand: x->n0, n0->n1,
  // n1->n2, x->n2, n2->n3, n3->n4, n4->n5, n5->n6, n6->mul, mul->add,
  // add->print.
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 10 + 1 + 1);
  CHECK(c.edges == 11);
  CHECK(has(dot, "n0 [label=\"matmul\\nf32[4, 8]\\nparam w1\""));
  CHECK(has(dot, "n7 [label=\"mul \u00d70.5\\nf32[]\""));
  CHECK(has(dot, "n8 [label=\"add\\nf32[]\\nstate step\\nwrites step\""));
  CHECK(!has(dot, "shape=hexagon"));  // no constant nodes
  CHECK(!has(dot, "v1 ["));     // nor param nodes
  CHECK(has(dot, "shape=note"));                                      // print
  CHECK(has(dot, "tooltip=\"mlp.nn:40\""));                           // the print's line
  CHECK(has(dot, "tooltip=\"%5  mlp.nn:7\""));                        // the matmul's value and line
  CHECK(has(dot, "n6 -> n7 [label=\"[]\""));                          // sum changes the shape
  CHECK(has(dot, "n0 -> n1 [tooltip"));                               // add keeps it: no label
  CHECK(has(dot, "subgraph cluster_g4"));                             // nested calls are clusters
  CHECK(has(dot, ">forward</td>"));
  CHECK(has(dot, ">optimizer</td>"));
  CHECK(ir::print_dot(g) == dot);                                     // deterministic

  // A collective (SPEC §14) is an arrow box of its own colour, in the legend too.
  CHECK(!has(dot, "shape=cds"));
  add_op(g, "all_reduce", {out_of(g, bw)}, f32({}), 0, ir::Phase::backward);
  const std::string with = ir::print_dot(g);
  CHECK(has(with, "shape=cds, style=filled, fillcolor=\"#d9c3f0\""));
  CHECK(has(with, "\">collective</td>"));

  // The script's names, when given, name params and state.
  ir::DrawOptions named;
  named.names.assign(g.values.size(), "");
  named.names[1] = "model.fc.w";
  CHECK(has(ir::print_dot(g, named), "param model.fc.w"));
}

TEST_CASE("dot: constants of up to 4 elements are values in labels; bigger ones nodes") {
  ir::Graph g;
  ValueId x = g.add_value(f32({2}), Role::input, "x");
  ValueId two = g.add_value(f32({2}), Role::constant);
  g.values[two].captured = backend::full(backend::Shape{2}, 1.5);
  ValueId five = g.add_value(f32({5}), Role::constant);
  g.values[five].captured = backend::zeros(backend::Shape{5});
  NodeId a = add_op(g, "sub", {constant(g, 1), x}, f32({2}));
  NodeId b = add_op(g, "mul", {out_of(g, a), constant(g, 0.9)}, f32({2}));
  NodeId m = add_op(g, "maximum", {out_of(g, b), two}, f32({2}));
  NodeId big = add_op(g, "sum", {five}, f32({}));
  mark_output(g, out_of(g, m));
  mark_output(g, out_of(g, big));
  const std::string dot = ir::print_dot(g);
  CHECK(has(dot, "n0 [label=\"sub 1\u2212\\n"));
  CHECK(has(dot, "n1 [label=\"mul \u00d70.9\\n"));
  CHECK(has(dot, "n2 [label=\"maximum (\u00b7, [1.5, 1.5])\\n"));
  CHECK(has(dot, "v2 [label=\"const\\nf32[5]\", shape=hexagon"));
  // x, the 5-element constant, 4 ops and the legend; edges x->sub, sub->mul, mul->maximum, v2->sum.
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 2 + 4 + 1);
  CHECK(c.edges == 4);
}

TEST_CASE("dot: collapse folds nn calls deeper than N into one box each") {
  ir::Graph g = nested();
  ir::DrawOptions opt;
  opt.collapse = ir::kNoCollapse;
  // 7 ops, x, legend; edges x->n0, n0->n1, n1->n2, x->n2, n2->n3, n3->n4, n4->n5, n5->n6.
  ir::DotCounts full = ir::parse_dot_counts(ir::print_dot(g, opt));
  CHECK(full.nodes == 9);
  CHECK(full.edges == 8);

  // collapse=1: each Linear is a box (3 and 2 nodes); relu and sum stay.
  // Edges: x (read twice, merged) -> box; box -> relu; relu -> box; box -> sum.
  opt.collapse = 1;
  std::string dot = ir::print_dot(g, opt);
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 2 + 2 + 1 + 1);
  CHECK(c.edges == 4);
  CHECK(has(dot, "g2 [label=\"Linear\\n3 nodes\", shape=box3d"));
  CHECK(has(dot, "g3 [label=\"Linear\\n2 nodes\", shape=box3d"));
  CHECK(has(dot, "subgraph cluster_g1"));
  CHECK(!has(dot, "subgraph cluster_g2"));
  CHECK(has(dot, "v0 -> g2 [tooltip=\"%0 f32[4, 8] and 1 more\", penwidth=2]"));
  CHECK(has(dot, "g2 -> n3 [label=\"[4, 8]\""));  // out of a box: the shape is said
  CHECK(has(dot, "n3 -> g3 [tooltip"));

  // collapse=0: the whole Sequential is one box of 6 nodes.
  opt.collapse = 0;
  dot = ir::print_dot(g, opt);
  c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 1 + 1 + 1 + 1);
  CHECK(c.edges == 2);
  CHECK(has(dot, "Sequential\\n6 nodes"));

  // collapse=2: only `init` (one node) folds; nothing merges.
  opt.collapse = 2;
  dot = ir::print_dot(g, opt);
  c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 9);
  CHECK(c.edges == 8);
  CHECK(has(dot, "init\\n1 node\""));
}

TEST_CASE("dot: the default collapse draws at most 80 boxes") {
  auto chain = [](int calls) {
    ir::Graph g;
    ValueId h = g.add_value(f32({2, 2}), Role::input, "x");
    for (int i = 0; i < calls; ++i) {  // A and B alternate: no two calls in a row repeat
      g.scopes.push_back({i % 2 ? "B" : "A", 0, {}});
      const uint32_t s = uint32_t(g.scopes.size() - 1);
      h = out_of(g, add_op(g, i % 2 ? "tanh" : "relu", {h}, f32({2, 2}), s));
      h = out_of(g, add_op(g, "neg", {h}, f32({2, 2}), s));
    }
    mark_output(g, h);
    return g;
  };
  // 30 calls: all 60 ops and x fit (61 boxes); 40 calls: 81 would not, so
  // each call is a box (40 boxes and x).
  std::string open = ir::print_dot(chain(30));
  CHECK(!has(open, "box3d"));
  CHECK(ir::parse_dot_counts(open).nodes == 60 + 1 + 1);
  std::string folded = ir::print_dot(chain(40));
  CHECK(ir::parse_dot_counts(folded).nodes == 40 + 1 + 1);
  CHECK(has(folded, "g40 [label=\"B\\n2 nodes\", shape=box3d"));
  // Past 48 boxes Graphviz is told to lay out quickly (a page's view of
  // hundreds of boxes took minutes); 20 calls, 41 boxes, are laid out fully.
  CHECK(has(open, "graph [nslimit=1, nslimit1=1, splines=line];"));
  CHECK(!has(ir::print_dot(chain(20)), "nslimit"));
}

TEST_CASE("dot: consecutive calls with the same traced body are one series box") {
  ir::Graph g;
  ValueId x = g.add_value(f32({2, 2}), Role::input, "x");
  ValueId w = g.add_value(f32({2, 2}), Role::param, "w");
  g.scopes.push_back({"rnn", 0, {}});
  ValueId h = steps(g, "step", 5, 1, x, w);
  mark_output(g, out_of(g, add_op(g, "sum", {h}, f32({}), 1)));

  const ir::GroupTree t(g);
  REQUIRE(t.size() == 1 + 1 + 5 + 1);  // root, rnn, 5 steps, the series
  CHECK(t[7].name == "step \u00d75");
  CHECK(t[7].steps == 5);
  CHECK(t[7].size == 10);
  CHECK(t[7].parent == 1);
  CHECK(t[1].children == std::vector<uint32_t>{7});
  CHECK(t[4].name == "step #3");
  CHECK(t[4].depth == 3);

  // By default the series is one box; edges x -> series -> sum.
  std::string dot = ir::print_dot(g);
  CHECK(has(dot, "g7 [label=\"step \u00d75\\n10 nodes\", shape=box3d, style=filled, fillcolor=\"#cfe2f3\", penwidth=2"));
  CHECK(ir::parse_dot_counts(dot).nodes == 1 + 1 + 1 + 1);  // sum, the box, x, legend
  CHECK(ir::parse_dot_counts(dot).edges == 2);
  // Opened by hand, it shows its steps, chained.
  ir::DrawOptions opt;
  opt.collapse = 2;
  dot = ir::print_dot(g, opt);
  CHECK(has(dot, "subgraph cluster_g7"));
  CHECK(has(dot, "g2 [label=\"step #1\\n2 nodes\""));
  CHECK(has(dot, "g6 [label=\"step #5\\n2 nodes\""));
  CHECK(ir::parse_dot_counts(dot).edges == 6);  // x->#1, #1->#2, ..., #4->#5, #5->sum

  // A step with another body breaks the run; so does an op of the caller
  // between two steps.
  ir::Graph other = g;
  other.nodes[5].op = &backend::op("relu");  // step 3's tanh
  const ir::GroupTree split(other);
  std::vector<std::string> names;
  for (uint32_t k : split[1].children) names.push_back(split[k].name);
  CHECK(names == std::vector<std::string>{"step \u00d72", "step", "step \u00d72"});
  // ... but not when the traced graph, which judges the structure, has it.
  const ir::GroupTree judged(other, &g);
  CHECK(judged[judged[1].children[0]].name == "step \u00d75");

  ir::Graph between;
  ValueId y = between.add_value(f32({2, 2}), Role::input, "y");
  ValueId v = between.add_value(f32({2, 2}), Role::param, "v");
  y = steps(between, "step", 2, 0, y, v);
  y = out_of(between, add_op(between, "neg", {y}, f32({2, 2})));
  y = steps(between, "step", 3, 0, y, v);
  const ir::GroupTree apart(between);
  names.clear();
  for (uint32_t k : apart[0].children) names.push_back(apart[k].name);
  CHECK(names == std::vector<std::string>{"step \u00d72", "step \u00d73"});
}

TEST_CASE("dot: scopes whose parents form a cycle hang on the root") {
  ir::Graph g = nested();
  g.scopes[1].parent = 3;  // Sequential under the second Linear, itself under Sequential
  g.scopes[4].parent = 99;
  const ir::GroupTree t(g);
  for (uint32_t k = 1; k < t.size(); ++k) CHECK(t[k].depth >= 1);
  CHECK(ir::parse_dot_counts(ir::print_dot(g)).nodes == 9);
}

TEST_CASE("dot: memory picture, fused groups and the raw title") {
  ir::Graph g = nested();
  ir::DrawOptions opt;
  opt.raw = true;
  opt.block_of_value.assign(g.values.size(), ir::kNone);
  opt.readers.assign(g.values.size(), 1);
  opt.block_of_value[5] = 0;  // matmul's result and mul's share block 0
  opt.block_of_value[7] = 0;
  opt.block_of_value[6] = 1;
  opt.readers[0] = 2;
  const std::string dot = ir::print_dot(g, opt);
  CHECK(has(dot, "label=\"mlp (before optimization)\""));
  CHECK(has(dot, "input x\\nf32[4, 8]\\nno block, 2 readers"));
  CHECK(has(dot, "n0 [label=\"matmul\\nf32[4, 8]\\nparam w1\\nblock 0, 1 reader\", fillcolor=\"#8dd3c7\""));
  CHECK(has(dot, "n2 [label=\"mul\\nf32[4, 8]\\nblock 0, 1 reader\", fillcolor=\"#8dd3c7\""));
  CHECK(has(dot, "n1 [label=\"add\\nf32[4, 8]\\nparam b1\\nblock 1, 1 reader\", fillcolor=\"#ffffb3\""));
  CHECK(has(dot, ">fill: memory block</td>"));
}

TEST_CASE("dot: a fused node is drawn as a cluster of the ops it merged") {
  ir::Graph g = nested();
  const size_t ops_before = g.nodes.size();
  ir::DrawOptions opt;
  opt.collapse = ir::kNoCollapse;
  const ir::DotCounts before = ir::parse_dot_counts(ir::print_dot(g, opt));
  for (auto& p : ir::default_passes())
    if (std::string(p->name()) == "fuse-elementwise" || std::string(p->name()) == "fuse-matmul-epilogue") p->run(g);
  // Two GEMMs with epilogues (add, mul, relu; add), and the sum.
  REQUIRE(g.nodes.size() == 3);
  const std::string dot = ir::print_dot(g, opt);
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == before.nodes);  // every op drawn again, no more
  CHECK(c.edges == before.edges);
  CHECK(ops_before == 7);
  // The first epilogue's ops sit in three calls (the Linear's matmul and
  // mul, init's add, Sequential's relu): each call's part is a cluster of
  // its own, one op too, so that the relu is seen fused with the rest.
  auto clusters = [&](const std::string& label) {
    size_t n = 0;
    for (size_t at = dot.find(label); at != std::string::npos; at = dot.find(label, at + 1)) ++n;
    return n;
  };
  CHECK(clusters("label=\"fused #0\"") == 3);
  CHECK(clusters("label=\"fused #1\"") == 1);  // the second GEMM and its add, in one call
  CHECK(!has(dot, "fused #2"));
}

TEST_CASE("dot: outputs no node makes are drawn, marked as outputs") {
  // graph g(x) { (x, w, x * 2) }: x and w are given back as they are.
  ir::Graph g;
  ValueId x = g.add_value(f32({2}), Role::input, "x");
  ValueId w = g.add_value(f32({3}), Role::param, "w");
  g.inputs = {x};
  mark_output(g, x);
  mark_output(g, w);
  mark_output(g, out_of(g, add_op(g, "mul", {x, constant(g, 2)}, f32({2}))));
  const std::string dot = ir::print_dot(g);
  CHECK(has(dot, "[label=\"input x\\nf32[2]\\noutput\", shape=invhouse"));
  CHECK(has(dot, "[label=\"param w\\nf32[3]\\noutput\", shape=ellipse"));
  CHECK(ir::parse_dot_counts(dot).nodes == 3 + 1);  // x, w, mul, and the legend
}

TEST_CASE("dot: names are escaped") {
  ir::Graph g;
  g.name = "say \"hi\"\\";
  ValueId a = g.add_value(f32({1}), Role::input, "a\"b\\N\nc");
  NodeId n = add_op(g, "relu", {a}, f32({1}));
  mark_output(g, out_of(g, n));
  const std::string dot = ir::print_dot(g);
  CHECK(has(dot, "digraph \"say \\\"hi\\\"\\\\\" {"));
  CHECK(has(dot, "label=\"input a\\\"b\\\\N\\nc\\n"));
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 3);
  CHECK(c.edges == 1);
}

TEST_CASE("dot: draw_picture writes dot, svg, png, pdf and the html page") {
  const auto dir = scratch_dir();
  ir::Graph g = nested();
  ValueId w = g.add_value(f32({4, 4}), Role::param, "w");
  g.scopes.push_back({"rnn", 0, {}});
  ValueId x4 = g.add_value(f32({4, 4}), Role::input, "x4");
  mark_output(g, steps(g, "step", 3, uint32_t(g.scopes.size() - 1), x4, w));
  ir::DrawOptions opt;
  opt.collapse = 1;
  for (const char* ext : {"dot", "svg", "png", "pdf", "html"}) {
    CAPTURE(ext);
    const auto path = dir / (std::string("mlp.") + ext);
    ir::draw_picture(g, opt, path.string());
    const std::string bytes = read_all(path);
    REQUIRE(!bytes.empty());
    if (std::string(ext) == "dot") CHECK(bytes == ir::print_dot(g, opt));
    if (std::string(ext) == "svg") CHECK(has(bytes, "<svg"));
    if (std::string(ext) == "png") CHECK(bytes.rfind("\x89PNG", 0) == 0);
    if (std::string(ext) == "pdf") CHECK(bytes.rfind("%PDF", 0) == 0);
    if (std::string(ext) != "html") continue;
    // One self-contained page: every marker filled, the data inside its
    // script element with no "</" that would end it early, a view per box.
    CHECK(bytes.rfind("<!--", 0) == 0);
    CHECK(!has(bytes, "<!--nn:"));
    CHECK(!has(bytes, "/*nn:"));
    CHECK(!has(bytes, "src=\"http"));  // nothing fetched
    const size_t data = bytes.find("id=\"nn-graph\">"), end = bytes.find("</script>", data);
    REQUIRE(data != std::string::npos);
    REQUIRE(end != std::string::npos);
    const std::string json = bytes.substr(data, end - data);
    CHECK(json.find("</") == std::string::npos);
    CHECK(has(json, "{\"title\":\"mlp\",\"views\":[{\"id\":\"g0\",\"name\":\"mlp\",\"parent\":null,\"svg\":\"<svg"));
    CHECK(has(json, "\"g2\":{\"kind\":\"group\",\"label\":\"Linear\""));  // Sequential is open
    CHECK(has(json, "\"kind\":\"series\",\"label\":\"step \u00d73\""));
    CHECK(has(json, "{\"id\":\"g2\",\"name\":\"Linear\",\"parent\":\"g0\""));
    CHECK(has(json, "\"n0\":{\"kind\":\"op\",\"label\":\"matmul\",\"types\":\"f32[4, 8]\",\"bytes\":128,"));
    CHECK(has(json, "class=\\\"node series\\\""));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("dot: clusters_within keeps the outer clusters; quoted braces are text") {
  const std::string dot =
      "digraph { subgraph cluster_a { label=\"{subgraph cluster_q}\"; subgraph cluster_b { x } } "
      "subgraph cluster_c { y } z }";
  CHECK(ir::clusters_within(dot, 2) == dot);
  CHECK(ir::clusters_within(dot, 1) ==
        "digraph { subgraph cluster_a { label=\"{subgraph cluster_q}\"; subgraph group_b { x } } "
        "subgraph cluster_c { y } z }");
  CHECK(ir::clusters_within(dot, 0) ==
        "digraph { subgraph group_a { label=\"{subgraph cluster_q}\"; subgraph group_b { x } } "
        "subgraph group_c { y } z }");
}

// Graphviz 2.43's ranking fails on these clusters ("trouble in init_rank",
// its issue 1213), where freeing the failed layout used to abort the
// process: the picture is drawn with fewer boxes, and its title says so.
TEST_CASE("dot: a picture whose clusters Graphviz cannot rank is drawn with fewer") {
  const std::string clusters = "subgraph cluster_0 { V3; V1 } subgraph cluster_1 { V10; V5; V11 } "
                               "subgraph cluster_2 { V9; V8; V6 }";
  const std::string edges =
      "V7; V0 -> V3 [constraint=false]; V4 -> V0; V3 -> V1; V0 -> V2 [constraint=false]; "
      "V10 -> V6 [label=a, constraint=false]; V11 -> V10; V9 -> V8; V6 -> V9; V5 -> V11; "
      "V10 -> V7 [constraint=false]; V4 -> V5 [constraint=false]; V3 -> V6 [constraint=false]; "
      "V2 -> V7 [constraint=false]; V1 -> V9 [label=b, constraint=false]; V1 -> V8; "
      "V0 -> V11 [constraint=false]; V0 -> V10 }";
  const std::string head = "digraph { graph [label=\"trouble\"]; V4; V0; V2; ";
  auto boxes = [](const std::string& svg) {
    size_t n = 0;
    for (size_t at = 0; (at = svg.find("class=\"cluster\"", at)) != std::string::npos; ++at) ++n;
    return n;
  };

  const std::string flat = ir::render_dot_as(head + clusters + edges, "svg", "the test picture");
  CHECK(has(flat, "trouble (drawn without its boxes: Graphviz could not lay them out)"));
  CHECK(boxes(flat) == 0);
  CHECK(has(flat, "<title>V10&#45;&gt;V7</title>"));

  // Inside one more cluster, the outer one can stay. Whether Graphviz ranks
  // this one depends on its heap (it orders nodes by their names' addresses:
  // `dot` on the command line always fails, in process not always), so the
  // check is that the title tells how many boxes were kept.
  const std::string nested =
      ir::render_dot_as(head + "subgraph cluster_outer { " + clusters + " } " + edges, "svg", "the test picture");
  const bool outer_only =
      has(nested, "trouble (drawn with its outer boxes only: Graphviz could not lay out the inner ones)");
  const bool none = has(nested, "trouble (drawn without its boxes");
  CHECK(boxes(nested) == (outer_only ? 1 : none ? 0 : 4));
  if (outer_only) CHECK(has(nested, "<title>cluster_outer</title>"));
}

TEST_CASE("dot: bad paths and bad text throw clear errors") {
  const std::string dot = ir::print_dot(tiny());
  CHECK_THROWS_WITH_AS(ir::render_dot(dot, "x.jpg"),
                       "dot: cannot write `x.jpg`: the picture's extension must be .dot, .svg, .png or .pdf",
                       backend::Error);
  CHECK_THROWS_WITH_AS(ir::draw_picture(tiny(), {}, "noext"),
                       "dot: cannot write `noext`: the picture's extension must be .dot, .svg, .png, .pdf or .html",
                       backend::Error);
  CHECK_THROWS_WITH_AS(ir::render_dot(dot, "/nonexistent-dir/g.svg"),
                       "dot: cannot write `/nonexistent-dir/g.svg`: No such file or directory", backend::Error);
  CHECK_THROWS_WITH_AS(ir::draw_picture(tiny(), {}, "/nonexistent-dir/g.html"),
                       "dot: cannot write `/nonexistent-dir/g.html`: No such file or directory", backend::Error);
  CHECK_THROWS_AS(ir::render_dot("digraph { a -> ; }", "/tmp/never.svg"), backend::Error);
  CHECK_THROWS_WITH_AS(ir::parse_dot_counts("digraph { a -> ; }"),
                       "dot: cannot read the dot text: it is not valid dot text (syntax error in line 1 near ';')",
                       backend::Error);
  // Graphviz reads the next text fine after a syntax error.
  CHECK(ir::parse_dot_counts(dot).nodes == 5);
}
