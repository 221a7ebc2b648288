// The collectives of CUDA tensors (SPEC §14) in a world of one rank: where
// NCCL was built, through it (a one-rank NCCL communicator; NCCL refuses
// two ranks on one GPU, so the GPU tests run one), else through host
// memory. Every result is the rank's own tensor, so each is checked
// exactly; each input is made by a GPU kernel just before, and each result
// read by one just after, so a missed ordering between the GPU's stream and
// NCCL's shows as stale values.
#include "gpu_test_util.h"

#if NN_HAVE_NCCL
#include "backend/cuda/nccl_collectives.h"
#endif

using namespace nngpu;
using nn::backend::comm::ReduceOp;

TEST_CASE("collectives of GPU tensors on one rank give the rank's own values, ordered with the GPU's kernels") {
  NN_NEED_GPU();
  const Tensor x = random({1 << 20}, -2, 2, DType::f32, 3);
  const Tensor ex = exp(x);  // the expected, made on the CPU
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::max, ReduceOp::min}) {
    // exp on the GPU, reduced, then doubled on the GPU.
    Tensor y = mul(all_reduce(exp(on(gpu(), x)), op), scalar(2.0, DType::f32, true));
    check_same(mul(ex, scalar(2.0, DType::f32, true)), y, 1e-6, 0,
               std::string("all_reduce ") + comm::reduce_op_name(op));
  }
#if NN_HAVE_NCCL
  CHECK(nn::backend::cuda::nccl_chosen());
#endif
  for (DType t : {DType::f16, DType::bf16, DType::f64, DType::i32, DType::i64}) {
    const Tensor a = astype(random({1001}, -50, 50, DType::f32, 5), t);
    check_same(a, all_reduce(on(gpu(), a)), 0, 0, "all_reduce of " + std::string(dtype_name(t)));
  }
  const Tensor flags = gt(random({37}), scalar(0.0, DType::f32, true));
  check_same(flags, all_reduce(on(gpu(), flags), ReduceOp::max), 0, 0, "all_reduce max of bools");
  check_same(x, broadcast(neg(neg(on(gpu(), x))), 0), 0, 0, "broadcast");
  const Tensor m = random({3, 5});
  check_same(reshape(m, {1, 3, 5}), all_gather(on(gpu(), m)), 0, 0, "all_gather");
}

TEST_CASE("a GPU bucket's start and wait give back its pieces; all_reduce's gradient on the GPU") {
  NN_NEED_GPU();
  const Tensor a = random({4, 3}, -1, 1, DType::f32, 8), b = random({7}, -1, 1, DType::f32, 9);
  const Tensor ga = on(gpu(), a), gb = on(gpu(), b);
  const std::vector<Tensor> pieces = all_reduce_bucket(std::vector<Tensor>{mul(ga, ga), gb}, ReduceOp::mean);
  REQUIRE(pieces.size() == 2);
  check_same(mul(a, a), pieces[0], 0, 0, "first piece");
  check_same(b, pieces[1], 0, 0, "second piece");
  // d/dx sum(all_reduce(x)^2) = 2x on one rank.
  const Tensor gx = on(gpu(), a);
  const Tensor y = all_reduce(gx);
  const std::vector<Tensor> g = grad(sum(mul(y, y)), {gx});
  check_same(mul(a, scalar(2.0, DType::f32, true)), g[0], 1e-6, 0, "gradient");
}
