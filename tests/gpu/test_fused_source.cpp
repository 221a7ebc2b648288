// The GPU's fused kernels as NVRTC sees them (backend/cuda/fused_source.h,
// nvrtc_compiler.h): every op with tile kernels has a step, the source of a
// program with every step compiles to PTX, a relu mask and an sgd update
// read as the CPU's tile evaluator computes them, the index split shared by
// the inputs (32-bit when the space allows), and the cache compiles a
// source once. NVRTC needs no GPU: these run wherever the CUDA backend is
// built.
#include <doctest/doctest.h>

#if NN_HAVE_CUDA
#include "backend/cuda/fused_source.h"
#include "backend/cuda/nvrtc_compiler.h"
#include "backend/op_registry.h"

using namespace nn::backend;
using Arg = FusedProgram::Arg;
using Kind = FusedProgram::Arg::Kind;

namespace {

FusedProgram::Step step(const char* op, std::vector<Arg> args, DType dtype = DType::f32, Attrs attrs = {}) {
  return {&nn::backend::op(op), std::move(attrs), std::move(args), dtype};
}
Arg in(uint32_t k) { return {Kind::input, k}; }
Arg st(uint32_t k) { return {Kind::step, k}; }
Arg imm(uint32_t k) { return {Kind::immediate, k}; }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("fused GPU kernels: a step for every op with tile kernels") {
  for (const OpDef* d : Registry::get().all())
    if (d->tile.any()) {
      CAPTURE(d->name);
      CHECK(cuda::fused_step_supported(d->name));
    }
  CHECK_FALSE(cuda::fused_step_supported("matmul"));
}

TEST_CASE("fused GPU kernels: a program of every step compiles with NVRTC") {
  FusedProgram p;
  p.compute = DType::f32;
  p.num_inputs = 3;
  p.immediates = {0.5};
  for (const OpDef* d : Registry::get().all()) {
    if (!d->tile.any()) continue;
    const int n = d->name == "where" ? 3 : d->num_inputs;
    std::vector<Arg> args;
    for (int k = 0; k < n; ++k) args.push_back(in(uint32_t(k)));
    const bool boolean = d->name == "eq" || d->name == "ne" || d->name == "lt" || d->name == "le" || d->name == "gt" ||
                         d->name == "ge" || d->name == "logical_and" || d->name == "logical_or" ||
                         d->name == "logical_not" || d->name == "isnan";
    Attrs attrs;
    if (d->name == "cast") attrs = Attrs{{"dtype", DType::boolean}};
    if (d->name == "leaky_relu") attrs = Attrs{{"slope", 0.2}};
    if (d->name == "gelu" || d->name == "gelu_backward") attrs = Attrs{{"approximate", true}};
    p.steps.push_back(step(d->name.c_str(), args, boolean ? DType::boolean : DType::f32, attrs));
  }
  p.steps.push_back(step("mul", {st(0), imm(0)}));
  p.outputs = {uint32_t(p.steps.size() - 1), 0};
  const std::vector<DType> inputs = {DType::f32, DType::boolean, DType::f64}, outputs = {DType::f32, DType::boolean};
  std::optional<std::string> src = cuda::fused_kernel_source(p, inputs, outputs);
  REQUIRE(src);
  const std::string& ptx = cuda::nvrtc_ptx(*src, 90);
  CHECK(contains(ptx, ".entry nn_fused"));
  p.compute = DType::f64;
  CHECK(contains(cuda::nvrtc_ptx(*cuda::fused_kernel_source(p, inputs, outputs), 90), ".entry nn_fused"));
}

TEST_CASE("fused GPU kernels: a relu's mask and an sgd update, step by step as on the CPU") {
  // where(x > 0, g, 0): the comparison is a bool step, normalised to 0 or 1.
  FusedProgram mask;
  mask.num_inputs = 2;
  mask.immediates = {0.0};
  mask.steps = {step("gt", {in(0), imm(0)}, DType::boolean), step("where", {st(0), in(1), imm(0)})};
  mask.outputs = {1};
  const std::vector<DType> two = {DType::f32, DType::f32}, one = {DType::f32};
  std::string src = *cuda::fused_kernel_source(mask, two, one);
  CHECK(contains(src, "T t0 = T(Gt{}(x0, m0));\n  t0 = t0 != T(0) ? T(1) : T(0);"));
  CHECK(contains(src, "T t1 = T(t0 != T(0) ? x1 : m0);"));
  CHECK(contains(src, "static_cast<float*>(a.out[0])[i] = float(t1);"));
  // sgd with momentum: buf = 0.9 buf + g; p = p - 0.1 buf (two outputs).
  FusedProgram sgd;
  sgd.num_inputs = 3;
  sgd.immediates = {0.9, 0.1};
  sgd.steps = {step("mul", {in(0), imm(0)}), step("add", {st(0), in(1)}), step("mul", {imm(1), st(1)}),
               step("sub", {in(2), st(2)})};
  sgd.outputs = {1, 3};
  const std::vector<DType> three(3, DType::f32), outs(2, DType::f32);
  src = *cuda::fused_kernel_source(sgd, three, outs);
  CHECK(contains(src, "const T m0 = T(0x1.ccccccccccccdp-1);"));  // 0.9 exactly
  CHECK(contains(src, "T t3 = T(Sub{}(x2, t2));"));
  CHECK(contains(src, "static_cast<float*>(a.out[1])[i] = float(t3);"));
  // Once compiled, a source is not compiled again.
  const size_t before = cuda::nvrtc_compilations();
  const std::string& a = cuda::nvrtc_ptx(src, 90);
  const std::string& b = cuda::nvrtc_ptx(src, 90);
  CHECK(&a == &b);
  CHECK(cuda::nvrtc_compilations() <= before + 1);
  // What the kernels cannot take.
  std::vector<DType> many(size_t(cuda::kFusedInputs) + 1, DType::f32);
  CHECK_FALSE(cuda::fused_kernel_source(sgd, many, outs));
  FusedProgram wide = sgd;
  wide.compute = DType::f64;  // 16-bit values join f32 programs only
  CHECK_FALSE(cuda::fused_kernel_source(wide, three, std::vector<DType>{DType::f16, DType::f32}));
}

TEST_CASE("fused GPU kernels: f16 and bf16 load widened, and each 16-bit step rounds as its lone op stores") {
  // relu(cast(x, f32) + b) stored as bf16, and the f32 sum kept: x is bf16,
  // b f32; the cast to f32 is exact, relu's result rounds to bf16.
  FusedProgram p;
  p.num_inputs = 2;
  p.steps = {step("cast", {in(0)}, DType::f32, Attrs{{"dtype", DType::f32}}), step("add", {st(0), in(1)}),
             step("relu", {st(1)}, DType::bf16), step("mul", {st(2), in(0)}, DType::f16)};
  p.outputs = {2, 3};
  const std::vector<DType> inputs = {DType::bf16, DType::f32}, outputs = {DType::bf16, DType::f16};
  const std::string src = *cuda::fused_kernel_source(p, inputs, outputs);
  CHECK(contains(src, "const T x0 = nn_widen_bf16(static_cast<const unsigned short*>(a.in[0])[o[0]]);"));
  CHECK(contains(src, "const T x1 = T(static_cast<const float*>(a.in[1])[o[1]]);"));
  CHECK(contains(src, "t2 = nn_widen_bf16(nn_narrow_bf16(t2));"));
  CHECK(contains(src, "t3 = nn_widen_f16(nn_narrow_f16(t3));"));
  CHECK_FALSE(contains(src, "t1 = nn_widen"));  // an f32 step keeps its value
  CHECK(contains(src, "static_cast<unsigned short*>(a.out[0])[i] = nn_narrow_bf16(t2);"));
  CHECK(contains(src, "static_cast<unsigned short*>(a.out[1])[i] = nn_narrow_f16(t3);"));
  CHECK(contains(cuda::nvrtc_ptx(src, 90), "cvt.rn.f16.f32"));
}

TEST_CASE("fused GPU kernels: one index split serves every input, with the 32-bit dividers when the space allows") {
  // (x - mean) * scale + beta over as many inputs as a kernel takes: the
  // first is x, the others per-channel operands.
  FusedProgram p;
  p.num_inputs = uint32_t(cuda::kFusedInputs);
  p.steps = {step("sub", {in(0), in(1)})};
  for (uint32_t k = 2; k < p.num_inputs; ++k)
    p.steps.push_back(step(k % 2 ? "add" : "mul", {st(uint32_t(p.steps.size() - 1)), in(k)}));
  p.outputs = {uint32_t(p.steps.size() - 1)};
  const std::vector<DType> inputs(size_t(cuda::kFusedInputs), DType::f32), outputs = {DType::f32};
  const std::string src = *cuda::fused_kernel_source(p, inputs, outputs);
  CHECK(contains(src, "constexpr int K = 32;"));
  CHECK(contains(src, "split_index32(a.div, a.nd, unsigned(i)"));
  CHECK(contains(src, "const T x31 = T(static_cast<const float*>(a.in[31])[o[31]]);"));
  const std::string& ptx = cuda::nvrtc_ptx(src, 90);
  CHECK(contains(ptx, ".entry nn_fused"));
  CHECK(contains(ptx, "mul.hi.u32"));  // the dividers, not a 64-bit division per dim and input
}
#endif
