// The C++ face of the op registry: one function per op (and a few composites
// built from them). Every function goes through dispatch, so it computes now
// in eager mode and records a node under a tracer. The frontend's built-ins
// and, later, backward rules call these.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/comm/communicator.h"
#include "backend/dispatch.h"
#include "backend/source_loc.h"
#include "backend/ops/elementwise_ops.h"
#include "backend/ops/reduction_ops.h"

namespace nn::backend {

// ---- creation (ops/creation.cpp) ----
// A 0-d tensor; weak marks a host number (promotion, SPEC §3).
Tensor scalar(double v, DType dtype, bool weak = false);
Tensor scalar_int(int64_t v, DType dtype = DType::i64, bool weak = false);
Tensor full(const Shape& shape, double value, DType dtype = DType::f32);
Tensor zeros(const Shape& shape, DType dtype = DType::f32);
Tensor ones(const Shape& shape, DType dtype = DType::f32);
// Tensor from host values (already flattened, row-major).
Tensor from_doubles(const std::vector<double>& v, const Shape& shape, DType dtype);
Tensor from_ints(const std::vector<int64_t>& v, const Shape& shape, DType dtype);
Tensor arange(double start, double stop, double step, DType dtype);
Tensor linspace(double start, double stop, int64_t n, DType dtype = DType::f32);
Tensor eye(int64_t n, DType dtype = DType::f32);
// Random (counter-based Philox generator; deterministic under manual_seed).
void manual_seed(uint64_t seed);
// The generator's position, to run a piece of code twice on the same draws
// (--check-graph).
struct RngState {
  uint64_t seed = 0, offset = 0;
};
RngState rng_state();
void set_rng_state(RngState s);
Tensor rand(const Shape& shape, DType dtype = DType::f32);   // uniform [0, 1)
Tensor randn(const Shape& shape, DType dtype = DType::f32);  // standard normal
Tensor randint(int64_t lo, int64_t hi, const Shape& shape, DType dtype = DType::i64);  // [lo, hi)

// ---- elementwise (ops/unary.cpp, binary.cpp): one function per line of the
// tables of ops/elementwise_ops.h, e.g. exp(x), leaky_relu(x, slope = 0.01),
// add(a, b), eq(a, b), gelu_backward(g, x, approximate = false). Float
// functions of integer or bool tensors give f32; binary ops broadcast as
// NumPy and promote as SPEC §3; div is true division (integers give f32);
// mod takes the divisor's sign, as Python (integer % 0 is an Error); round
// is half to even, as NumPy. ----
#define NN_DECLARE_UNARY(id, F, kind, gradient, ...) \
  Tensor id(const Tensor& x __VA_OPT__(, NN_ATTR_PARAM(__VA_ARGS__)));
NN_UNARY_OPS(NN_DECLARE_UNARY)
#undef NN_DECLARE_UNARY
#define NN_DECLARE_BINARY(id, F, kind, commutative, builtin, backward, ...) \
  Tensor id(const Tensor& a, const Tensor& b __VA_OPT__(, NN_ATTR_PARAM(__VA_ARGS__)));
NN_BINARY_OPS(NN_DECLARE_BINARY)
#undef NN_DECLARE_BINARY
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi);

// ---- casts and devices (ops/cast.cpp) ----
Tensor astype(const Tensor& x, DType dtype);  // returns x itself when the dtype matches
Tensor to_device(const Tensor& x, Device* device);

// ---- reductions (ops/reduction.cpp) ----
// `axes` lists the axes to reduce (may be negative); std::nullopt means all.
using Axes = std::optional<std::vector<int64_t>>;
// sum, prod, max, min: one per line of the table (ops/reduction_ops.h).
#define NN_DECLARE_REDUCTION(id, ...) Tensor id(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
NN_REDUCTION_OPS(NN_DECLARE_REDUCTION)
#undef NN_DECLARE_REDUCTION
Tensor mean(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor var(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false, int64_t correction = 0);
Tensor std(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false, int64_t correction = 0);
Tensor logsumexp(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor norm(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);  // L2
// Whether every (any) element along the axes is nonzero: bool; over none,
// all is true and any false.
Tensor all(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor any(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
// Index of the first extreme along `axis`, or into the flattened tensor.
Tensor argmax(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);

// ---- linear algebra (ops/matmul.cpp) ----
Tensor matmul(const Tensor& a, const Tensor& b);  // NumPy matmul: batched, broadcasting, 1-d rules
Tensor dot(const Tensor& a, const Tensor& b);     // 1-d inner product
Tensor outer(const Tensor& a, const Tensor& b);   // 1-d outer product

// ---- shape (ops/shape.cpp) ----
Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape);  // one -1 allowed; shares memory
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor transpose(const Tensor& x, int64_t a = -2, int64_t b = -1);
// Axes start..end (inclusive) joined into one.
Tensor flatten(const Tensor& x, int64_t start = 1, int64_t end = -1);
Tensor squeeze(const Tensor& x, const std::optional<int64_t>& axis = std::nullopt);
Tensor unsqueeze(const Tensor& x, int64_t axis);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0);

// ---- indexing (ops/index.cpp) ----
// One entry per leading axis of x (missing trailing axes are taken whole).
struct IndexItem {
  enum Kind { index, slice } kind = slice;
  int64_t i = 0;                          // kind == index; may be negative
  std::optional<int64_t> start, stop, step;  // kind == slice; Python slice rules
};
// Integer indices out of range are an Error (never a wrap); slices clamp like Python.
Tensor index(const Tensor& x, const std::vector<IndexItem>& items);
// x[items] = v, in place: v broadcasts to the selected region and is cast to x's dtype.
void index_assign(Tensor& x, const std::vector<IndexItem>& items, const Tensor& v);
// x reversed along each of `axes` (all of them when none), as NumPy's flip.
Tensor flip(const Tensor& x, const std::optional<std::vector<int64_t>>& axes);
// x shifted `shift` places along `axis`, what falls off one end coming in at
// the other (np.roll, torch.roll); with no axis, over x flattened.
Tensor roll(const Tensor& x, int64_t shift, std::optional<int64_t> axis);
// Rows of x (along axis 0) picked by an integer tensor of ids.
Tensor take(const Tensor& x, const Tensor& ids);
// take for an index expression on the tensor of type `of`: an id out of
// range names `axis` of it, or where several index tensors were flattened
// into x's axis 0 (axis -1), their axes.
Tensor take_index(const Tensor& x, const Tensor& ids, const std::string& of, int64_t axis);

// ---- sequence models (SPEC §13) ----
// The lower (tril) or upper (triu) triangle of the last two axes, the rest
// zero: tril keeps (i, j) where j - i <= k, triu where j - i >= k (ops/triangle.cpp).
Tensor tril(const Tensor& x, int64_t k = 0);
Tensor triu(const Tensor& x, int64_t k = 0);
// Running sum and product along an axis; integers and bools give i64 (ops/scan.cpp).
Tensor cumsum(const Tensor& x, int64_t axis);
Tensor cumprod(const Tensor& x, int64_t axis);
// NumPy's take_along_axis: out[.., j, ..] = x[.., ids[.., j, ..], ..] along
// `axis`, ids of x's rank, broadcast with x along the other axes (ops/gather.cpp).
Tensor gather(const Tensor& x, const Tensor& ids, int64_t axis);
// x with v added at the ids along `axis` (repeated ids add up); ids and v
// broadcast together and with x along the other axes.
Tensor scatter_add(const Tensor& x, const Tensor& ids, const Tensor& v, int64_t axis);
// The slices of x at 1-d ids along `axis` (PyTorch's index_select).
Tensor index_select(const Tensor& x, const Tensor& ids, int64_t axis);
// Lists of pieces along an axis (ops/split.cpp): n pieces of ceil(size / n)
// (the last smaller, fewer when they run out, as PyTorch's chunk); pieces
// of the given sizes; every slice with the axis dropped.
std::vector<Tensor> chunk(const Tensor& x, int64_t n, int64_t axis = 0);
std::vector<Tensor> split_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t axis = 0);
// Sorting along an axis (ops/sort.cpp), stable, NaN the largest: the i64
// positions that sort x; (values, positions); the k largest (or smallest)
// in order.
Tensor argsort(const Tensor& x, int64_t axis = -1, bool descending = false);
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t axis = -1, bool descending = false);
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t axis = -1, bool largest = true);
// n category ids drawn from each row of probs ([k] or [rows, k]; weights need
// not sum to 1), without replacement unless asked, seeded like randn (ops/sampling.cpp).
Tensor multinomial(const Tensor& probs, int64_t n = 1, bool replacement = false);
// Einstein summation over one to three operands, "ij,jk->ik" (or NumPy's
// implicit output, "ij,jk"), as permutes, sums and one batched matmul per
// pair of operands (ops/einsum.cpp).
Tensor einsum(const std::string& spec, const std::vector<Tensor>& xs);
// x with (before, after) elements of value around each axis, from the first (ops/pad.cpp).
Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& widths, double value = 0);

// ---- collectives over the ranks of the run (ops/collective.cpp, SPEC §14) ----
// With one rank each gives its input's values back.
Tensor all_reduce(const Tensor& x, comm::ReduceOp op = comm::ReduceOp::sum);
Tensor broadcast(const Tensor& x, int64_t root = 0);  // rank root's x on every rank
Tensor all_gather(const Tensor& x);                   // every rank's x, stacked on a new axis 0
void barrier();
// Called by every rank whose script ended well: an Error where another rank
// makes a collective call instead (it would wait for ever), naming both.
void check_end_of_run();
// A collective call made outside these ops (a traced barrier), checked as they are.
void check_collective_call(const std::string& what);
// While it lives, the collective calls of this thread are noted, not
// checked (a graph's trace, which sends nothing): run_of() names them as a
// run of graph `graph` ("a run of graph g (all_reduce(op="sum") of f32[2])";
// "" for none), what each run is checked as.
class CollectiveRecording {
 public:
  CollectiveRecording();
  ~CollectiveRecording();
  CollectiveRecording(const CollectiveRecording&) = delete;
  CollectiveRecording& operator=(const CollectiveRecording&) = delete;
  std::string run_of(const std::string& graph) const;

 private:
  std::vector<std::string> calls_;
  std::vector<std::string>* outer_;
};
// Before a run of a compiled graph that makes collective calls (`calls`:
// what its trace recorded): the ranks check that they all run graphs of the
// same calls (an Error naming both otherwise), once a run, as an eager call
// is checked; the run's location is the op location (set_op_loc).
void check_graph_run(const std::string& calls);
// One all-reduce over several tensors of one dtype, as one flat bucket:
// all_reduce_start then all_reduce_wait (a graph runs other nodes between them).
std::vector<Tensor> all_reduce_bucket(std::span<const Tensor> xs, comm::ReduceOp op);
// Each gradient's mean over the ranks (data_parallel): in buckets of at most
// bucket_mb megabytes (backend/comm/buckets.h); traced, one all_reduce each,
// which the graph pass `bucket-all-reduce` groups in the graph's backward order.
std::vector<Tensor> average_gradients(std::span<const Tensor> grads, double bucket_mb);

// ---- ops that backward rules use (backend/autograd.h) ----
// The gradient of take: a [rows, ...] tensor of zeros into which row i of g
// (g has ids' shape followed by the row shape) is added at row ids[i];
// repeated ids add up (ops/index.cpp).
Tensor take_backward(const Tensor& g, const Tensor& ids, int64_t rows);

}  // namespace nn::backend
