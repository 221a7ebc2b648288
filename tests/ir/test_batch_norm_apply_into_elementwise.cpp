// The pass batch-norm-apply-into-elementwise on graphs built by hand: what
// a batch_norm_apply becomes on a GPU with fused kernels (the GPU is one
// the IR sees, running nothing), the scale and views shared, and where it
// stays as it is. That the ops give batch_norm_apply's bits is checked
// where they run: tests/backend/test_nn_ops.cpp (CPU) and
// tests/gpu/test_nn_ops.cpp.
#include <doctest/doctest.h>

#include <algorithm>

#include "backend/cuda_backend.h"
#include "graph_builder.h"

using namespace nn;
using namespace nntest;

namespace {

const backend::Attrs kEps{{"eps", 1e-5}};

struct BnGraph {
  ir::Graph g;
  ir::ValueId x, gamma, beta, mean, var;
};

// x [4, 3, 2, 2] and its per-channel operands on `d`.
BnGraph bn_inputs(backend::Device* d) {
  BnGraph b;
  const backend::TensorType big{backend::DType::f32, backend::Shape({4, 3, 2, 2}), d};
  const backend::TensorType channel{backend::DType::f32, backend::Shape({3}), d};
  b.x = input(b.g, big, "x");
  b.gamma = input(b.g, channel, "gamma"), b.beta = input(b.g, channel, "beta");
  b.mean = input(b.g, channel, "mean"), b.var = input(b.g, channel, "var");
  return b;
}

ir::ValueId apply(BnGraph& b, ir::ValueId x) {
  return add(b.g, "batch_norm_apply", {x, b.gamma, b.beta, b.mean, b.var}, kEps);
}

// relu(batch_norm_apply(x)) on `d`.
BnGraph bn_relu(backend::Device* d) {
  BnGraph b = bn_inputs(d);
  output(b.g, add(b.g, "relu", {apply(b, b.x)}));
  return b;
}

// Runs f with GPU fusion on, or off.
template <class F>
void with_gpu_fusion(F f, bool on = true) {
  nntest::GpuFusionScope fusion(on);
  f();
}

}  // namespace

TEST_CASE("pass batch-norm-apply-into-elementwise: on a GPU, (x - mean) * scale + beta over [C, 1, 1] views") {
  if (!backend::cuda_built()) return;  // without the CUDA backend, GPU fusion is always off
  nntest::FakeGpu gpu;
  BnGraph b = bn_relu(&gpu);
  const ir::ValueId y = b.g.nodes[0].outputs[0];
  size_t changed = 0;
  with_gpu_fusion([&] { changed = run_pass(b.g, "batch-norm-apply-into-elementwise"); });
  CHECK(changed == 1);
  const ir::Graph& g = b.g;
  CHECK(ops(g) == "batch_norm_scale reshape sub reshape mul reshape add relu");
  const ir::Node &scale = g.nodes[0], &mean_view = g.nodes[1], &sub = g.nodes[2], &scale_view = g.nodes[3],
                 &mul = g.nodes[4], &beta_view = g.nodes[5], &sum = g.nodes[6];
  CHECK(scale.inputs == std::vector<ir::ValueId>{b.gamma, b.var});
  CHECK(scale.attrs.get<double>("eps") == 1e-5);
  CHECK(g.values[scale.outputs[0]].type.shape == backend::Shape({3}));
  CHECK(mean_view.inputs[0] == b.mean);
  CHECK(scale_view.inputs[0] == scale.outputs[0]);
  CHECK(beta_view.inputs[0] == b.beta);
  for (const ir::Node* v : {&mean_view, &scale_view, &beta_view})
    CHECK(g.values[v->outputs[0]].type.shape == backend::Shape({3, 1, 1}));
  CHECK(sub.inputs == std::vector<ir::ValueId>{b.x, mean_view.outputs[0]});
  CHECK(mul.inputs == std::vector<ir::ValueId>{sub.outputs[0], scale_view.outputs[0]});
  CHECK(sum.inputs == std::vector<ir::ValueId>{mul.outputs[0], beta_view.outputs[0]});
  // The sum is y itself: the relu reads what it read before.
  CHECK(sum.outputs[0] == y);
  CHECK(g.nodes[7].inputs[0] == y);
  CHECK(g.values[y].producer == 6);

  // Then fusion makes the four elementwise ops one kernel.
  with_gpu_fusion([&] { CHECK(run_pass(b.g, "fuse-elementwise") == 1); });
  CHECK(ops(b.g) == "batch_norm_scale reshape reshape reshape fused");
}

TEST_CASE("pass batch-norm-apply-into-elementwise: copies keep the phase and mark; one scale per statistics") {
  if (!backend::cuda_built()) return;
  nntest::FakeGpu gpu;
  // A residual chain made again twice from the same block (as recompute
  // writes it): two batch_norm_apply of one statistics.
  BnGraph b = bn_inputs(&gpu);
  ir::ValueId y1 = apply(b, b.x), y2 = apply(b, b.x);
  output(b.g, add(b.g, "add", {add(b.g, "relu", {y1}), y2}));
  for (ir::Node& n : b.g.nodes) n.phase = ir::Phase::backward, n.recomputed = n.name() == "batch_norm_apply";
  with_gpu_fusion([&] { CHECK(run_pass(b.g, "batch-norm-apply-into-elementwise") == 2); });
  CHECK(ops(b.g) == "batch_norm_scale reshape sub reshape mul reshape add sub mul add relu add");
  for (size_t i = 0; i < 10; ++i) {
    CAPTURE(i);
    CHECK(b.g.nodes[i].phase == ir::Phase::backward);
    CHECK(b.g.nodes[i].recomputed);
  }
  CHECK_FALSE(b.g.nodes[10].recomputed);
  // The second reads the first one's views.
  CHECK(b.g.nodes[7].inputs[1] == b.g.nodes[1].outputs[0]);
  CHECK(b.g.nodes[8].inputs[1] == b.g.nodes[3].outputs[0]);
  CHECK(b.g.nodes[9].inputs[1] == b.g.nodes[5].outputs[0]);
}

TEST_CASE("pass batch-norm-apply-into-elementwise: left alone where fusion would not take the ops") {
  if (!backend::cuda_built()) return;
  nntest::FakeGpu gpu;
  auto changed = [](BnGraph& b, bool fusion = true) {
    size_t n = 0;
    with_gpu_fusion([&] { n = run_pass(b.g, "batch-norm-apply-into-elementwise"); }, fusion);
    return n;
  };
  // GPU fusion off; a CPU graph (its tile evaluator pays more than it saves).
  BnGraph off = bn_relu(&gpu);
  CHECK(changed(off, false) == 0);
  BnGraph cpu = bn_relu(backend::cpu_device());
  CHECK(changed(cpu) == 0);
  // A reader that is not elementwise: y would be written all the same.
  BnGraph summed = bn_inputs(&gpu);
  const backend::Attrs axis0{{"axes", std::vector<int64_t>{0}}, {"keepdims", false}};
  output(summed.g, add(summed.g, "sum", {apply(summed, summed.x)}, axis0));
  CHECK(changed(summed) == 0);
  // y is an output: it is kept whole anyway.
  BnGraph kept = bn_inputs(&gpu);
  ir::ValueId y = apply(kept, kept.x);
  output(kept.g, add(kept.g, "relu", {y}));
  output(kept.g, y);
  CHECK(changed(kept) == 0);
  // Through the pipeline, it goes with fuse-elementwise.
  BnGraph piped = bn_relu(&gpu);
  with_gpu_fusion([&] { ir::optimize(piped.g, {"fuse-elementwise"}); });
  CHECK(ops(piped.g) == "batch_norm_apply relu");
}
