// Each pass on a small graph built by hand: what it rewrites, what it must
// leave alone, and a graph the verifier still accepts afterwards.
#include <doctest/doctest.h>

#include <cmath>

#include "backend/ops.h"
#include "ir/pass.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;


TEST_CASE("pass dead-code: unread pure nodes go, random ops and host calls stay") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({3}), "x");
  add(g, "exp", {add(g, "neg", {x})});                                       // read by nobody
  add(g, "rand", {}, {{"shape", backend::Shape({3})}, {"dtype", backend::DType::f32}});  // a draw
  ir::NodeId p = g.add_node(nullptr, {x}, {}, {});
  g.nodes[p].set_host(ir::host_call("print"));
  output(g, add(g, "relu", {x}));
  CHECK(run_pass(g, "dead-code") == 2);
  CHECK(ops(g) == "rand print relu");
  CHECK(g.outputs == std::vector<ir::ValueId>{2});  // renumbered
}

TEST_CASE("pass cse: equal pure calls merge, random calls never") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({3}), "x");
  ir::ValueId a = add(g, "exp", {x}), b = add(g, "exp", {x});
  ir::ValueId s = add(g, "sum", {x}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  ir::ValueId t = add(g, "sum", {x}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", true}});  // other attrs
  backend::Attrs r{{"shape", backend::Shape({3})}, {"dtype", backend::DType::f32}};
  ir::ValueId r1 = add(g, "rand", {}, r), r2 = add(g, "rand", {}, r);
  for (ir::ValueId v : {add(g, "add", {a, b}), s, t, add(g, "add", {r1, r2})}) output(g, v);
  CHECK(run_pass(g, "cse") == 1);
  CHECK(ops(g) == "exp sum sum rand rand add add");
  CHECK(g.nodes[5].inputs == std::vector<ir::ValueId>{1, 1});  // exp + exp: both read the one exp
}

TEST_CASE("pass cse: attributes equal as their text; 0.0 and -0.0 differ; calls of no inputs merge by attributes") {
  ir::Graph g;
  auto full = [&](double v) {
    return add(g, "full", {}, {{"shape", backend::Shape({2})}, {"dtype", backend::DType::f32}, {"value", v}});
  };
  ir::ValueId z = full(0.0), z2 = full(0.0), nz = full(-0.0), h = full(0.5), h2 = full(0.5);
  for (ir::ValueId v : {z, z2, nz, h, h2}) output(g, add(g, "exp", {v}));
  CHECK(run_pass(g, "cse") == 4);  // the second 0 and 0.5, then the exps reading them
  CHECK(ops(g) == "full full full exp exp exp");
  CHECK(g.nodes[1].attrs.get<double>("value") == 0.0);
  CHECK(std::signbit(g.nodes[1].attrs.get<double>("value")));  // -0.0 kept apart
  backend::Attrs a{{"axes", std::vector<int64_t>{0, 1}}, {"value", 0.5}};
  CHECK(a.same_as(backend::Attrs{{"axes", std::vector<int64_t>{0, 1}}, {"value", 0.5}}));
  CHECK(a.hash() == backend::Attrs{{"axes", std::vector<int64_t>{0, 1}}, {"value", 0.5}}.hash());
  CHECK_FALSE(a.same_as(backend::Attrs{{"axes", std::vector<int64_t>{0}}, {"value", 0.5}}));
  CHECK_FALSE(a.same_as(backend::Attrs{{"value", 0.5}, {"axes", std::vector<int64_t>{0, 1}}}));  // order, as the text
  CHECK_FALSE(a.same_as(backend::Attrs{{"axes", std::vector<int64_t>{0, 1}}, {"value", int64_t(0)}}));
}

TEST_CASE("pass constant-fold: a subgraph of constants becomes one constant") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2}), "x");
  ir::ValueId c = add(g, "mul", {constant(g, backend::full(backend::Shape({2}), 3.0)),
                                 constant(g, backend::full(backend::Shape({2}), 2.0))});
  ir::ValueId d = add(g, "exp", {c});  // folds too, the product first
  output(g, add(g, "add", {x, d}));
  CHECK(run_pass(g, "constant-fold") == 2);
  CHECK(ops(g) == "add");
  const ir::Value& k = g.values[g.nodes[0].inputs[1]];
  REQUIRE(k.role == ir::Role::constant);
  CHECK(k.captured.data<float>()[1] == doctest::Approx(std::exp(6.0)));
}

TEST_CASE("pass constant-fold and algebraic leave a captured tensor alone: the host may write it between runs") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2}), "x");
  const backend::Tensor c = backend::full(backend::Shape({2}), 3.0);
  ir::ValueId twice = add(g, "mul", {captured(g, c), constant(g, backend::full(backend::Shape({2}), 2.0))});
  ir::ValueId one = captured(g, backend::scalar(1.0, backend::DType::f32));
  output(g, add(g, "mul", {add(g, "add", {x, twice}), one}));
  CHECK(run_pass(g, "constant-fold") == 0);
  CHECK(run_pass(g, "algebraic") == 0);
  CHECK(ops(g) == "mul add mul");
}

TEST_CASE("pass algebraic: x * 1, -0 + x, x - 0, x / 1 go; x + 0, x * 0 and broadcasting ones stay") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2, 3}), "x");
  ir::ValueId one = constant(g, backend::scalar(1.0, backend::DType::f64, /*weak=*/true));
  ir::ValueId zero = constant(g, backend::scalar(0.0, backend::DType::f64, /*weak=*/true));
  ir::ValueId minus_zero = constant(g, backend::scalar(-0.0, backend::DType::f64, /*weak=*/true));
  ir::ValueId a = add(g, "mul", {x, one});
  ir::ValueId b = add(g, "add", {minus_zero, a});  // -0 + a is a, for a = -0 too
  ir::ValueId c = add(g, "div", {b, one});
  ir::ValueId d = add(g, "sub", {c, zero});
  ir::ValueId e = add(g, "add", {d, zero});  // -0 + 0 is +0, not -0: stays
  ir::ValueId z = add(g, "mul", {e, zero});  // NaN * 0 is NaN, not 0: stays
  ir::ValueId wide = add(g, "add", {input(g, f32({3}), "y"), constant(g, backend::zeros(backend::Shape({2, 3})))});
  output(g, z);
  output(g, wide);  // y + zeros[2, 3] broadcasts y: stays
  CHECK(run_pass(g, "algebraic") == 4);
  CHECK(ops(g) == "add mul add");
  CHECK(g.nodes[0].inputs[0] == x);
}

TEST_CASE("pass algebraic: x ** 1 and a where on a constant condition go; 1 ** x and a broadcast pick stay") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2, 3}), "x");
  ir::ValueId y = input(g, f32({2, 3}), "y");
  ir::ValueId row = input(g, f32({3}), "row");
  ir::ValueId one = constant(g, backend::scalar(1.0, backend::DType::f64, true));
  ir::ValueId no = constant(g, backend::scalar_int(0, backend::DType::boolean));
  ir::ValueId p = add(g, "pow", {x, one});                 // x
  ir::ValueId q = add(g, "pow", {one, p});                 // 1 ** x is not x: stays
  ir::ValueId w = add(g, "where", {no, q, y});             // y
  ir::ValueId v = add(g, "where", {no, y, row});           // row would broadcast: stays
  output(g, add(g, "add", {w, v}));
  CHECK(run_pass(g, "algebraic") == 2);
  run_pass(g, "dead-code");
  CHECK(ops(g) == "where add");
  CHECK(g.nodes[1].inputs[0] == y);
}

TEST_CASE("pass algebraic and constant-fold leave a graph's output a new tensor, never an input or a constant") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2}), "x");
  ir::ValueId one = constant(g, backend::scalar(1.0, backend::DType::f64, /*weak=*/true));
  ir::ValueId kept = add(g, "mul", {x, one});  // the caller's own x if it went
  ir::ValueId inner = add(g, "mul", {x, one});  // read by a node: goes
  output(g, kept);
  output(g, add(g, "exp", {inner}));
  output(g, add(g, "mul", {constant(g, backend::full(backend::Shape({2}), 3.0)), one}));  // a constant: stays
  CHECK(run_pass(g, "algebraic") == 1);
  CHECK(run_pass(g, "constant-fold") == 0);
  CHECK(ops(g) == "mul exp mul");
  CHECK(g.nodes[1].inputs[0] == x);
}

TEST_CASE("pass transpose-transpose: two transposes cancel, two permutes compose") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2, 3}), "x");
  ir::ValueId t = add(g, "permute", {x}, {{"dims", std::vector<int64_t>{1, 0}}});
  output(g, add(g, "exp", {add(g, "permute", {t}, {{"dims", std::vector<int64_t>{1, 0}}})}));
  ir::ValueId y = input(g, f32({2, 3, 4}), "y");
  ir::ValueId p = add(g, "permute", {y}, {{"dims", std::vector<int64_t>{2, 0, 1}}});  // [4, 2, 3]
  output(g, add(g, "permute", {p}, {{"dims", std::vector<int64_t>{0, 2, 1}}}));     // [4, 3, 2]
  CHECK(run_pass(g, "transpose-transpose") == 2);
  CHECK(g.nodes.back().inputs[0] == g.inputs[1]);  // y, renumbered
  CHECK(g.nodes.back().attrs.get<std::vector<int64_t>>("dims") == std::vector<int64_t>{2, 1, 0});
  CHECK(run_pass(g, "dead-code") == 2);
  CHECK(ops(g) == "exp permute");
  CHECK(g.nodes[0].inputs[0] == 0);  // exp reads x itself
}

TEST_CASE("pass reshape-reshape: a chain of reshapes is one, a reshape to its own shape none") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({2, 3}), "x");
  ir::ValueId r = add(g, "reshape", {x}, {{"shape", backend::Shape({6})}});
  ir::ValueId s = add(g, "reshape", {r}, {{"shape", backend::Shape({3, 2})}});
  ir::ValueId same = add(g, "reshape", {s}, {{"shape", backend::Shape({3, 2})}});
  output(g, add(g, "exp", {same}));
  CHECK(run_pass(g, "reshape-reshape") == 2);
  run_pass(g, "dead-code");
  CHECK(ops(g) == "reshape exp");
  CHECK(g.nodes[0].inputs[0] == 0);
}

TEST_CASE("pass cast-round-trip: a cast through a dtype that holds every value is one cast, or none") {
  ir::Graph g;
  ir::ValueId x = input(g, {backend::DType::bf16, backend::Shape({2, 3}), backend::cpu_device()}, "x");
  auto cast = [&](ir::ValueId v, backend::DType d) { return add(g, "cast", {v}, {{"dtype", d}}); };
  ir::ValueId wide = cast(x, backend::DType::f32);
  output(g, add(g, "exp", {cast(wide, backend::DType::bf16)}));  // bf16 -> f32 -> bf16: x
  output(g, cast(wide, backend::DType::f16));                    // bf16 -> f32 -> f16: one cast of x
  ir::ValueId y = input(g, f32({2}), "y");
  output(g, cast(cast(y, backend::DType::bf16), backend::DType::f32));  // f32 -> bf16 rounds: stays
  CHECK(run_pass(g, "cast-round-trip") == 2);
  run_pass(g, "dead-code");
  CHECK(ops(g) == "exp cast cast cast");
  CHECK(g.nodes[0].inputs[0] == 0);  // exp reads x itself
  CHECK(g.nodes[1].inputs[0] == 0);  // the f16 cast reads x
}

TEST_CASE("pass broadcast-into-consumer: an elementwise op broadcasts by itself") {
  ir::Graph g;
  ir::ValueId y = input(g, f32({1, 2}), "y");
  ir::ValueId z = input(g, f32({4, 2}), "z");
  ir::ValueId b = add(g, "broadcast_to", {y}, {{"shape", backend::Shape({4, 2})}});
  output(g, add(g, "mul", {b, z}));
  output(g, add(g, "exp", {b}));           // unary: the broadcast makes its shape
  output(g, add(g, "add", {b, y}));        // the other side is small too: stays
  CHECK(run_pass(g, "broadcast-into-consumer") == 1);
  CHECK(g.nodes[1].inputs == std::vector<ir::ValueId>{y, z});
}

TEST_CASE("optimize: runs the pipeline, skips disabled passes, reports each") {
  ir::Graph g;
  ir::ValueId x = input(g, f32({3}), "x");
  ir::ValueId one = constant(g, backend::scalar(1.0, backend::DType::f64, true));
  output(g, add(g, "exp", {add(g, "mul", {x, one})}));
  std::vector<std::string> seen;
  auto results = ir::optimize(g, {"dead-code"}, [&](const std::string& pass, const ir::Graph&) { seen.push_back(pass); });
  CHECK(seen == std::vector<std::string>{"constant-fold", "algebraic", "transpose-transpose", "reshape-reshape",
                                         "cast-round-trip", "broadcast-into-consumer", "transpose-into-matmul", "cse",
                                         "slice-grads-into-concat", "relu-grad-through-max-pool", "bucket-all-reduce",
                                         "recompute",
                                         "batch-norm-apply-into-elementwise", "blocked-layout", "fuse-elementwise",
                                         "fuse-matmul-epilogue", "fuse-conv-relu", "fuse-conv-relu-pool", "inplace"});
  CHECK(results[1].changed == 1);
  CHECK(ops(g) == "exp");
  CHECK(ir::print_ir(g).find("%1 = exp %0") != std::string::npos);
}

TEST_CASE("pass transpose-into-matmul: a 2-d transpose feeding a matmul becomes its GEMM's flag") {
  ir::Graph g;
  ir::ValueId a = input(g, f32({5, 3}), "a"), b = input(g, f32({5, 4}), "b"), c = input(g, f32({2, 4}), "c");
  ir::ValueId at = add(g, "permute", {a}, {{"dims", std::vector<int64_t>{1, 0}}});
  ir::ValueId ab = add(g, "matmul", {at, b});                                         // [3, 4]
  ir::ValueId ct = add(g, "permute", {c}, {{"dims", std::vector<int64_t>{1, 0}}});
  output(g, add(g, "matmul", {ab, ct}));                                                // [3, 2]
  output(g, at);  // the transpose is also an output: it stays, the matmul still folds
  CHECK(run_pass(g, "transpose-into-matmul") == 2);
  CHECK(g.nodes[1].name() == "matmul_tn");
  CHECK(g.nodes[1].inputs == std::vector<ir::ValueId>{a, b});
  CHECK(g.nodes[3].name() == "matmul_nt");
  CHECK(run_pass(g, "dead-code") == 1);
  CHECK(ops(g) == "permute matmul_tn matmul_nt");
}
