// The Graphviz picture: print_dot's text parses back with libcgraph with the
// expected node and edge counts, renders to svg/png/pdf in process, matches a
// golden text for a tiny graph, folds nested calls with collapse, and reports
// bad paths with a clear Error.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "backend/dispatch.h"
#include "ir/dot_printer.h"
#include "ir/dot_render.h"
#include "ir/graph.h"
#include "ir/pass.h"

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

size_t value_nodes(const ir::Graph& g) {
  size_t k = 0;
  for (const ir::Value& v : g.values) k += v.role != Role::intermediate;
  return k;
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
  graph [label="tiny", labelloc=t, fontname="Helvetica", fontsize=14, rankdir=TB, newrank=true];
  node [fontname="Helvetica", fontsize=10, shape=box, style="rounded,filled", fillcolor="#ffffff"];
  edge [fontname="Helvetica", fontsize=8, color="#555555"];
  v0 [label="input a\nf32[2, 3]\n%0", shape=invhouse, style=filled, fillcolor="#f3f3f3"];
  v1 [label="input b\nf32[2, 3]\n%1", shape=invhouse, style=filled, fillcolor="#f3f3f3"];
  n0 [label="add\nf32[2, 3]\n%2", fillcolor="#cfe2f3"];
  n1 [label="relu\nf32[2, 3]\n%3", shape=doubleoctagon, style=filled, fillcolor="#cfe2f3"];
  v0 -> n0 [label="[2, 3]", tooltip="%0 f32[2, 3]"];
  v1 -> n0 [label="[2, 3]", tooltip="%1 f32[2, 3]"];
  n0 -> n1 [label="[2, 3]", tooltip="%2 f32[2, 3]"];
}
)";
  ir::Graph g = tiny();
  CHECK(ir::print_dot(g) == golden);
  ir::DotCounts c = ir::parse_dot_counts(golden);
  CHECK(c.nodes == 4);
  CHECK(c.edges == 3);

  // An empty graph, even without its root scope, is still a picture.
  ir::Graph empty;
  empty.scopes.clear();
  ir::DotOptions fold;
  fold.collapse = 0;
  c = ir::parse_dot_counts(ir::print_dot(empty, fold));
  CHECK(c.nodes == 0);
  CHECK(c.edges == 0);
}

TEST_CASE("dot: counts match the IR, with every kind of node and a legend") {
  ir::Graph g = nested();
  // A constant, a state with its update, a host call and backward/optimizer nodes.
  ValueId lr = g.add_value(f32({}), Role::constant);
  ValueId step = g.add_value(f32({}), Role::state, "step");
  NodeId bw = add_op(g, "mul", {g.outputs[0], lr}, f32({}), 0, ir::Phase::backward);
  NodeId opt = add_op(g, "add", {step, out_of(g, bw)}, f32({}), 0, ir::Phase::optimizer);
  g.updates.push_back({step, out_of(g, opt)});
  NodeId print = g.add_node(nullptr, {out_of(g, opt)}, {}, {});
  g.nodes[print].host = ir::host_call("print");
  g.nodes[print].loc = {1, 40, 52};
  g.nodes[0].loc = {1, 7, 9};
  g.locate = [](const ir::Loc& l) { return "mlp.nn:" + std::to_string(l.begin); };

  const std::string dot = ir::print_dot(g);
  const size_t legend = 1;  // one node: more than one phase is present
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == g.nodes.size() + value_nodes(g) + legend);
  CHECK(c.edges == g.edge_count());
  CHECK(dot.find("peripheries=2") != std::string::npos);           // params
  CHECK(dot.find("shape=cylinder") != std::string::npos);          // state
  CHECK(dot.find("shape=hexagon") != std::string::npos);           // constant
  CHECK(dot.find("shape=note") != std::string::npos);              // print
  CHECK(dot.find("tooltip=\"mlp.nn:40\"") != std::string::npos);   // the print's line
  CHECK(dot.find("tooltip=\"mlp.nn:7\"") != std::string::npos);    // the matmul's line
  CHECK(dot.find("writes step") != std::string::npos);
  CHECK(dot.find("subgraph cluster_legend") != std::string::npos);
  CHECK(dot.find("subgraph cluster_s4") != std::string::npos);     // nested scopes are clusters
  CHECK(ir::print_dot(g) == dot);                                  // deterministic

  // A collective (SPEC §14) is an arrow box of its own colour, in the legend too.
  CHECK(dot.find("shape=cds") == std::string::npos);
  add_op(g, "all_reduce", {out_of(g, bw)}, f32({}), 0, ir::Phase::backward);
  const std::string with = ir::print_dot(g);
  CHECK(with.find("shape=cds, style=filled, fillcolor=\"#d9c3f0\"") != std::string::npos);
  CHECK(with.find("\">collective</td>") != std::string::npos);

  // A forward-only graph has no legend.
  ir::Graph f = nested();
  c = ir::parse_dot_counts(ir::print_dot(f));
  CHECK(c.nodes == f.nodes.size() + value_nodes(f));
  CHECK(c.edges == f.edge_count());
}

TEST_CASE("dot: collapse folds nn calls deeper than N into one box each") {
  ir::Graph g = nested();
  REQUIRE(g.nodes.size() == 7);
  REQUIRE(value_nodes(g) == 5);
  ir::DotOptions opt;
  ir::DotCounts full = ir::parse_dot_counts(ir::print_dot(g, opt));
  CHECK(full.nodes == 12);
  CHECK(full.edges == 12);

  // collapse=1: each Linear is a box (3 and 2 nodes); relu and sum stay.
  // Edges: x (twice, merged), w1, b1 -> box; box -> relu; relu, w2, b2 -> box; box -> sum.
  opt.collapse = 1;
  std::string dot = ir::print_dot(g, opt);
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 5 + 2 + 2);
  CHECK(c.edges == 8);
  CHECK(dot.find("s2 [label=\"Linear\\n3 nodes\", shape=box3d") != std::string::npos);
  CHECK(dot.find("s3 [label=\"Linear\\n2 nodes\", shape=box3d") != std::string::npos);
  CHECK(dot.find("subgraph cluster_s1") != std::string::npos);
  CHECK(dot.find("subgraph cluster_s2") == std::string::npos);
  CHECK(dot.find("v0 -> s2 [label=\"[4, 8]\", tooltip=\"%0 f32[4, 8] and 1 more\", penwidth=2]") != std::string::npos);

  // collapse=0: the whole Sequential is one box of 6 nodes.
  opt.collapse = 0;
  dot = ir::print_dot(g, opt);
  c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 5 + 1 + 1);
  CHECK(c.edges == 6);
  CHECK(dot.find("Sequential\\n6 nodes") != std::string::npos);

  // collapse=2: only `init` (one node) folds; nothing merges.
  opt.collapse = 2;
  dot = ir::print_dot(g, opt);
  c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 12);
  CHECK(c.edges == 12);
  CHECK(dot.find("init\\n1 node\"") != std::string::npos);
}

TEST_CASE("dot: memory picture, fused groups and the raw title") {
  ir::Graph g = nested();
  ir::DotOptions opt;
  opt.raw = true;
  opt.block_of_value.assign(g.values.size(), ir::kNone);
  opt.readers.assign(g.values.size(), 1);
  opt.block_of_value[5] = 0;  // matmul's result and mul's share block 0
  opt.block_of_value[7] = 0;
  opt.block_of_value[6] = 1;
  opt.readers[0] = 2;
  opt.fused_groups = {{0, 2}, {3, 4}, {99}};  // in one scope; across scopes; a bad id
  const std::string dot = ir::print_dot(g, opt);
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == g.nodes.size() + value_nodes(g));
  CHECK(c.edges == g.edge_count());
  CHECK(dot.find("label=\"mlp (before optimization)\"") != std::string::npos);
  CHECK(dot.find("x\\nf32[4, 8]\\n%0\\nno block, 2 readers") != std::string::npos);
  CHECK(dot.find("%5\\nblock 0, 1 reader\", fillcolor=\"#8dd3c7\"") != std::string::npos);
  CHECK(dot.find("%7\\nblock 0, 1 reader\", fillcolor=\"#8dd3c7\"") != std::string::npos);
  CHECK(dot.find("%6\\nblock 1, 1 reader\", fillcolor=\"#ffffb3\"") != std::string::npos);
  CHECK(dot.find("subgraph cluster_fused_0 {") != std::string::npos);
  CHECK(dot.find("label=\"fused #1\"") != std::string::npos);
  CHECK(dot.find("cluster_fused_2") == std::string::npos);
}

TEST_CASE("dot: a fused node is drawn as a cluster of the ops it merged") {
  ir::Graph g = nested();
  const size_t ops_before = g.nodes.size(), values_before = value_nodes(g), edges_before = g.edge_count();
  for (auto& p : ir::default_passes())
    if (std::string(p->name()) == "fuse-elementwise" || std::string(p->name()) == "fuse-matmul-epilogue") p->run(g);
  // Two GEMMs with epilogues (add, mul, relu; add), and the sum.
  REQUIRE(g.nodes.size() == 3);
  const std::string dot = ir::print_dot(g);
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == ops_before + values_before);  // every op drawn again, no more
  CHECK(c.edges == edges_before);
  CHECK(dot.find("subgraph cluster_fused_0 {") != std::string::npos);
  CHECK(dot.find("label=\"fused #1\"") != std::string::npos);
  CHECK(dot.find("cluster_fused_2") == std::string::npos);
}

TEST_CASE("dot: names are escaped") {
  ir::Graph g;
  g.name = "say \"hi\"\\";
  ValueId a = g.add_value(f32({1}), Role::input, "a\"b\\N\nc");
  NodeId n = add_op(g, "relu", {a}, f32({1}));
  mark_output(g, out_of(g, n));
  const std::string dot = ir::print_dot(g);
  CHECK(dot.find("digraph \"say \\\"hi\\\"\\\\\" {") != std::string::npos);
  CHECK(dot.find("label=\"input a\\\"b\\\\N\\nc\\n") != std::string::npos);
  ir::DotCounts c = ir::parse_dot_counts(dot);
  CHECK(c.nodes == 2);
  CHECK(c.edges == 1);
}

TEST_CASE("dot: render writes dot, svg, png and pdf") {
  const auto dir = scratch_dir();
  ir::Graph g = nested();
  ir::DotOptions opt;
  opt.collapse = 1;
  const std::string dot = ir::print_dot(g, opt);
  for (const char* ext : {"dot", "svg", "png", "pdf"}) {
    CAPTURE(ext);
    const auto path = dir / (std::string("mlp.") + ext);
    ir::render_dot(dot, path.string());
    const std::string bytes = read_all(path);
    REQUIRE(!bytes.empty());
    if (std::string(ext) == "dot") CHECK(bytes == dot);
    if (std::string(ext) == "svg") CHECK(bytes.find("<svg") != std::string::npos);
    if (std::string(ext) == "png") CHECK(bytes.rfind("\x89PNG", 0) == 0);
    if (std::string(ext) == "pdf") CHECK(bytes.rfind("%PDF", 0) == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("dot: bad paths and bad text throw clear errors") {
  const std::string dot = ir::print_dot(tiny());
  CHECK_THROWS_WITH_AS(ir::render_dot(dot, "x.jpg"),
                       "dot: cannot write `x.jpg`: the picture's extension must be .dot, .svg, .png or .pdf",
                       backend::Error);
  CHECK_THROWS_WITH_AS(ir::render_dot(dot, "noext"),
                       "dot: cannot write `noext`: the picture's extension must be .dot, .svg, .png or .pdf",
                       backend::Error);
  CHECK_THROWS_WITH_AS(ir::render_dot(dot, "/nonexistent-dir/g.svg"),
                       "dot: cannot write `/nonexistent-dir/g.svg`: No such file or directory", backend::Error);
  CHECK_THROWS_WITH_AS(ir::render_dot(dot, "/nonexistent-dir/g.dot"),
                       "dot: cannot write `/nonexistent-dir/g.dot`: No such file or directory", backend::Error);
  CHECK_THROWS_AS(ir::render_dot("digraph { a -> ; }", "/tmp/never.svg"), backend::Error);
  CHECK_THROWS_WITH_AS(ir::parse_dot_counts("digraph { a -> ; }"),
                       "dot: cannot read the dot text: it is not valid dot text (syntax error in line 1 near ';')",
                       backend::Error);
  // Graphviz reads the next text fine after a syntax error.
  CHECK(ir::parse_dot_counts(dot).nodes == 4);
}
