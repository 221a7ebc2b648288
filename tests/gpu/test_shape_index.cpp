// Shape and indexing ops on the GPU against the CPU: permute, transpose,
// broadcast_to, concat (with promotion), stack, reshape views, slices with
// negative steps, index assignment (broadcast, host numbers, overlapping
// source), take with its scatter-add gradient, and out-of-range ids.
#include "gpu/gpu_test_util.h"

using namespace nngpu;

namespace {
IndexItem at(int64_t i) {
  IndexItem it;
  it.kind = IndexItem::index;
  it.i = i;
  return it;
}
IndexItem sl(std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step = std::nullopt) {
  IndexItem it;
  it.start = start;
  it.stop = stop;
  it.step = step;
  return it;
}
}  // namespace

TEST_CASE("permute, transpose, broadcast_to, concat, stack and reshape on the GPU") {
  NN_NEED_GPU();
  for (DType d : {DType::f32, DType::f64, DType::i32, DType::boolean})
    same_on_gpu("shape ops " + std::string(dtype_name(d)), [](const std::vector<Tensor>& in) {
      const Tensor& x = in[0];
      return std::vector<Tensor>{permute(x, {2, 0, 1}), transpose(x), transpose(x, 0, 2),
                                 broadcast_to(reshape(x, {3, 1, 4, 5}), {2, 3, 6, 4, 5}), concat({x, x}, 1),
                                 stack({x, x, x}, 3), flatten(x), squeeze(unsqueeze(x, 1), 1)};
    }, {random({3, 4, 5}, -5, 5, d)}, 0, 0);
  same_on_gpu("concat promotes", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{concat({in[0], in[1], in[0]}, 0), concat({in[1], in[0]}, -1)};
  }, {random({2, 3}, -5, 5, DType::i32), random({2, 3}, -1, 1, DType::f64)}, 0, 0);
  same_grads_on_gpu("shape op gradients", [](const std::vector<Tensor>& in) {
    return add(weighted_sum(permute(in[0], {1, 0, 2})),
               add(weighted_sum(broadcast_to(in[1], {2, 3, 4})), weighted_sum(concat({in[0], in[0]}, 2))));
  }, {random({2, 3, 4}, -1, 1, DType::f64), random({3, 1}, -1, 1, DType::f64, 3)}, 1e-12, 1e-12);
}

TEST_CASE("slices, index assignment and take on the GPU") {
  NN_NEED_GPU();
  same_on_gpu("slices", [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    return std::vector<Tensor>{index(x, {at(1)}), index(x, {sl(std::nullopt, std::nullopt, -1), at(-2)}),
                               index(x, {sl(1, 5, 2), sl(std::nullopt, std::nullopt), sl(4, 0, -3)}),
                               index(x, {at(0), at(1), at(2)}), index(x, {sl(10, 20)})};
  }, {random({6, 4, 7})}, 0, 0);
  same_on_gpu("index assignment", [](const std::vector<Tensor>& in) {
    Tensor x = add(in[0], scalar(0.0, DType::f64, true));  // a copy of our own
    index_assign(x, {sl(1, 3)}, in[1]);                       // [2, 4] broadcast into [2, 3, 4]
    index_assign(x, {at(0), sl(std::nullopt, std::nullopt, 2)}, scalar(9.0, DType::f64, true));
    Tensor y = add(in[0], scalar(0.0, DType::f64, true));
    index_assign(y, {sl(1, std::nullopt)}, index(y, {sl(std::nullopt, -1)}));  // source overlaps the target
    Tensor z = astype(in[0], DType::i32);
    index_assign(z, {at(2)}, in[1]);  // cast into the target's dtype
    return std::vector<Tensor>{x, y, z};
  }, {random({4, 3, 4}), random({4}, -9, 9, DType::f32, 3)}, 0, 0);
  Tensor ids = from_ints({3, 0, 3, 5, 1, 3}, Shape{2, 3}, DType::i64);
  same_on_gpu("take", [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{take(in[0], in[1]), take(in[0], astype(in[1], DType::i32)), embedding(in[1], in[0]),
                               take(astype(in[0], DType::i64), in[1])};
  }, {random({6, 5}), ids}, 0, 0);
  same_grads_on_gpu("take and slice gradients (repeated ids add up)", [](const std::vector<Tensor>& in) {
    return add(weighted_sum(take(in[0], in[1])), weighted_sum(index(in[0], {sl(1, std::nullopt, 2), at(1)})));
  }, {random({6, 5}, -1, 1, DType::f64), ids}, 1e-12, 1e-12);
  Tensor x = on(gpu(), random({6, 5}));
  CHECK(error_of([&] { take(x, on(gpu(), from_ints({1, 6}, Shape{2}, DType::i64))); }) ==
        "take: id 6 is out of range for axis 0 of size 6 in f32[6, 5]");
  CHECK(error_of([&] { take(x, on(gpu(), from_ints({-1}, Shape{1}, DType::i32))); }) ==
        "take: id -1 is out of range for axis 0 of size 6 in f32[6, 5]");
}

TEST_CASE("tril and triu on the GPU, over batches of matrices and with offsets, and their gradients") {
  NN_NEED_GPU();
  same_on_gpu("tril, triu", [](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    return std::vector<Tensor>{tril(x), triu(x), tril(x, 2), triu(x, -1), triu(x, 9), tril(astype(x, DType::i64), -1),
                               triu(astype(x, DType::bf16), 1), tril(astype(x, DType::boolean))};
  }, {random({2, 4, 5})}, 0, 0);
  same_grads_on_gpu("tril and triu gradients", [](const std::vector<Tensor>& in) {
    return add(weighted_sum(tril(in[0], 1)), weighted_sum(triu(in[0])));
  }, {random({3, 4}, -1, 1, DType::f64)}, 1e-12, 1e-12);
}
