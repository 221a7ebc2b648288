// The dims the GPU's elementwise and fused kernels walk
// (backend/cuda/broadcast_dims.h), worked out by hand: broadcast strides,
// extent-1 dims dropped, dims merged where every input allows. Needs no
// GPU, only the CUDA backend's code.
#include <doctest/doctest.h>

#if NN_HAVE_CUDA
#include <vector>

#include "backend/cuda/broadcast_dims.h"
#include "backend/ops.h"

using namespace nn::backend;

namespace {

// The walked sizes, then each input's strides.
std::vector<std::vector<int64_t>> walk(const Shape& out, const std::vector<Shape>& shapes) {
  std::vector<Tensor> in;
  for (const Shape& s : shapes) in.push_back(zeros(s));
  const cuda::BroadcastDims b = cuda::broadcast_dims(out, in);
  std::vector<std::vector<int64_t>> r{std::vector<int64_t>(b.size, b.size + b.nd)};
  for (const auto& st : b.stride) r.emplace_back(st.begin(), st.begin() + b.nd);
  return r;
}

using Walk = std::vector<std::vector<int64_t>>;

}  // namespace

TEST_CASE("broadcast dims: per-channel operands walk [N, C, H * W]; operands of one shape one dim") {
  // x [2, 3, 4, 5] and a per-channel [3, 1, 1]: H and W merge (both step
  // across them as one), C and H do not (the channel's stride is 1, not 0).
  CHECK(walk(Shape{2, 3, 4, 5}, {Shape{2, 3, 4, 5}, Shape{3, 1, 1}}) == Walk{{2, 3, 20}, {60, 20, 1}, {0, 1, 0}});
  CHECK(walk(Shape{2, 3, 4, 5}, {Shape{2, 3, 4, 5}, Shape{2, 3, 4, 5}}) == Walk{{120}, {1}, {1}});
  // An outer product: neither dim merges.
  CHECK(walk(Shape{4, 5}, {Shape{4, 1}, Shape{1, 5}}) == Walk{{4, 5}, {1, 0}, {0, 1}});
  // A trailing vector and an extent-1 dim, which is dropped.
  CHECK(walk(Shape{2, 1, 3}, {Shape{2, 1, 3}, Shape{3}}) == Walk{{2, 3}, {3, 1}, {0, 1}});
  // A leading broadcast merges with what is inside it when it is broadcast there too.
  CHECK(walk(Shape{6, 2, 3}, {Shape{2, 3}, Shape{6, 2, 3}}) == Walk{{6, 6}, {0, 1}, {6, 1}});
  // One element: one dim of one, every stride 0.
  CHECK(walk(Shape{}, {Shape{}, Shape{1}}) == Walk{{1}, {0}, {0}});
  CHECK(walk(Shape{1, 1}, {Shape{1, 1}}) == Walk{{1}, {0}});
}
#endif
