// The C++ face of the op registry: one function per op (and a few composites
// built from them). Every function goes through dispatch, so it computes now
// in eager mode and records a node under a tracer. The frontend's built-ins
// and, later, backward rules call these.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "backend/dispatch.h"

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

// ---- elementwise unary (ops/unary.cpp) ----
// Float functions of integer or bool tensors give f32.
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor leaky_relu(const Tensor& x, double slope = 0.01);
Tensor gelu(const Tensor& x, bool approximate = false);
Tensor softplus(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);  // half to even, as NumPy
Tensor logical_not(const Tensor& x);
Tensor isnan(const Tensor& x);

// ---- elementwise binary (ops/binary.cpp); NumPy broadcasting, SPEC §3 promotion ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division: integers give f32
Tensor pow(const Tensor& a, const Tensor& b);
Tensor mod(const Tensor& a, const Tensor& b);  // sign of the divisor, as Python; integer % 0 is an Error
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi);

// ---- casts and devices (ops/cast.cpp) ----
Tensor astype(const Tensor& x, DType dtype);  // returns x itself when the dtype matches
Tensor to_device(const Tensor& x, Device* device);

// ---- reductions (ops/reduction.cpp) ----
// `axes` lists the axes to reduce (may be negative); std::nullopt means all.
using Axes = std::optional<std::vector<int64_t>>;
Tensor sum(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor prod(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor max(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor min(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor mean(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor var(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false, int64_t correction = 0);
Tensor std(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false, int64_t correction = 0);
Tensor logsumexp(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor norm(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);  // L2
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
Tensor flatten(const Tensor& x, int64_t start = 1);
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
// Rows of x (along axis 0) picked by an integer tensor of ids.
Tensor take(const Tensor& x, const Tensor& ids);

// ---- ops that backward rules use (backend/autograd.h) ----
// g * d gelu(x) / dx, for the exact or the tanh form (ops/unary.cpp).
Tensor gelu_backward(const Tensor& g, const Tensor& x, bool approximate = false);
// The gradient of take: a [rows, ...] tensor of zeros into which row i of g
// (g has ids' shape followed by the row shape) is added at row ids[i];
// repeated ids add up (ops/index.cpp).
Tensor take_backward(const Tensor& g, const Tensor& ids, int64_t rows);

}  // namespace nn::backend
