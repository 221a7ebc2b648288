// The source of a fused program's GPU kernel (fused_source.h): the maths
// header as prelude, the argument struct, then one statement per step.
#include "backend/cuda/fused_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

#include "backend/half.h"
#include "backend/op_registry.h"
#include "backend/ops/elementwise_params.h"

namespace nn::backend::cuda {

// Embedded at build time: ops/elementwise_math.h and cuda/index_divider.h.
extern const char* const kElementwiseMathSource;
extern const char* const kIndexDividerSource;

namespace {

// How a step calls its op: the functor of its table line
// (ops/elementwise_ops.h), made as the CPU makes it (functor_of), or an
// expression of the operands for where and cast.
struct StepForm {
  const char* functor = nullptr;  // "Add"
  bool reads_attrs = false;       // made by F::from(EwParams), not F{}
  enum class Special : uint8_t { none, where, cast } special = Special::none;
};

std::optional<StepForm> step_form(OpId id) {
  switch (id) {
#define NN_STEP_FORM(id, F, ...) \
  case OpId::id: return StepForm{#F, !std::is_empty_v<math::F>};
    NN_UNARY_OPS(NN_STEP_FORM)
    NN_BINARY_OPS(NN_STEP_FORM)
#undef NN_STEP_FORM
    case OpId::where: return StepForm{.special = StepForm::Special::where};
    case OpId::cast: return StepForm{.special = StepForm::Special::cast};
    default: return std::nullopt;
  }
}

const char* c_type(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::i32: return "int";
    case DType::i64: return "long long";
    case DType::boolean: return "bool";
    case DType::f16: case DType::bf16: return "unsigned short";  // the bits (nn_widen_*, nn_narrow_*)
  }
  return nullptr;
}

// f16 and bf16 in a program that computes in f32: each load widens exactly,
// each store rounds once to nearest, ties to even, as the plain kernels'
// cuda_fp16/cuda_bf16 conversions do (PTX cvt for f16; bf16 keeps float's
// upper half, rounded in integers: any GPU). NaN stays a quiet NaN.
constexpr const char* kHalfConversions = R"(
__device__ inline float nn_widen_f16(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ inline unsigned short nn_narrow_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ inline float nn_widen_bf16(unsigned short b) { return __uint_as_float((unsigned)b << 16); }
__device__ inline unsigned short nn_narrow_bf16(float f) {
  const unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
)";

const char* half_name(DType t) { return t == DType::f16 ? "f16" : "bf16"; }

// A double as a C++ literal that reads back exactly.
std::string literal(double v) { return fmt::format("{:a}", v); }

// The functor of a step: F{} for one that reads nothing, else made from the
// step's attribute values (a float step has no integer error to flag).
std::string functor_call(const StepForm& form, const OpDef& op, const Attrs& attrs) {
  if (!form.reads_attrs) return std::string(form.functor) + "{}";
  const math::EwParams p = params_of(op, attrs);
  return fmt::format("make_functor<{}>(EwParams{{{{{}, {}}}, nullptr}})", form.functor, literal(p.v[0]),
                     literal(p.v[1]));
}

}  // namespace

bool fused_step_supported(const std::string& op) {
  const OpDef* d = Registry::get().find(op);
  return d && step_form(d->id).has_value();
}

std::optional<std::string> fused_kernel_source(const FusedProgram& p, std::span<const DType> inputs,
                                               std::span<const DType> outputs) {
  if (inputs.size() > size_t(kFusedInputs) || outputs.size() > size_t(kFusedOutputs) ||
      outputs.size() != p.outputs.size() || (p.compute != DType::f32 && p.compute != DType::f64))
    return std::nullopt;
  bool half = false;
  for (DType t : inputs) half = half || is_half_float(t);
  for (DType t : outputs) half = half || is_half_float(t);
  for (const FusedProgram::Step& st : p.steps) half = half || is_half_float(st.dtype);
  if (half && p.compute != DType::f32) return std::nullopt;

  std::string s = kElementwiseMathSource;
  s += kIndexDividerSource;
  if (half) s += kHalfConversions;
  s += fmt::format(R"(
struct FusedArgs {{
  long long n;
  int nd;
  int index32;
  long long size[{2}];
  nn::backend::cuda::IndexDivider div[{2}];
  long long stride[{0}][{2}];
  const void* in[{0}];
  void* out[{1}];
}};
static_assert(sizeof(FusedArgs) == {3}, "FusedArgs differs from the host's");

// Element i: input k at offset o[k].
template <class Off>
__device__ inline void nn_element(const FusedArgs& a, long long i, const Off* o) {{
  using namespace nn::backend::math;
  using T = {4};
)",
                   kFusedInputs, kFusedOutputs, kFusedDims, sizeof(FusedArgs), c_type(p.compute));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string load = fmt::format("static_cast<const {}*>(a.in[{}])[o[{}]]", c_type(inputs[k]), k, k);
    if (is_half_float(inputs[k])) s += fmt::format("  const T x{} = nn_widen_{}({});\n", k, half_name(inputs[k]), load);
    else s += fmt::format("  const T x{} = T({});\n", k, load);
  }
  for (size_t k = 0; k < p.immediates.size(); ++k)
    s += fmt::format("  const T m{} = T({});\n", k, literal(p.immediates[k]));
  for (size_t k = 0; k < p.steps.size(); ++k) {
    const FusedProgram::Step& st = p.steps[k];
    if (!st.op) return std::nullopt;
    const std::optional<StepForm> form = step_form(st.op->id);
    if (!form) return std::nullopt;
    std::string args[3];
    for (size_t j = 0; j < st.args.size() && j < 3; ++j) {
      const FusedProgram::Arg& a = st.args[j];
      const char* prefix = a.kind == FusedProgram::Arg::Kind::input ? "x"
                           : a.kind == FusedProgram::Arg::Kind::step ? "t"
                                                                     : "m";
      args[j] = fmt::format("{}{}", prefix, a.index);
    }
    std::string expr;
    switch (form->special) {
      case StepForm::Special::where: expr = fmt::format("{} != T(0) ? {} : {}", args[0], args[1], args[2]); break;
      case StepForm::Special::cast:
        expr = st.attrs.get<DType>("dtype") == DType::boolean ? fmt::format("{} != T(0) ? T(1) : T(0)", args[0])
                                                              : args[0];
        break;
      case StepForm::Special::none: {
        expr = functor_call(*form, *st.op, st.attrs) + "(" + args[0];
        for (size_t j = 1; j < st.args.size(); ++j) expr += ", " + args[j];
        expr += ")";
      }
    }
    s += fmt::format("  T t{} = T({});\n", k, expr);
    if (st.dtype == DType::boolean) s += fmt::format("  t{0} = t{0} != T(0) ? T(1) : T(0);\n", k);
    // A 16-bit step rounds its result as the lone op stores it.
    if (is_half_float(st.dtype)) s += fmt::format("  t{0} = nn_widen_{1}(nn_narrow_{1}(t{0}));\n", k, half_name(st.dtype));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k] == DType::boolean)
      s += fmt::format("  static_cast<bool*>(a.out[{}])[i] = t{} != T(0);\n", k, p.outputs[k]);
    else if (is_half_float(outputs[k]))
      s += fmt::format("  static_cast<unsigned short*>(a.out[{}])[i] = nn_narrow_{}(t{});\n", k, half_name(outputs[k]),
                       p.outputs[k]);
    else
      s += fmt::format("  static_cast<{}*>(a.out[{}])[i] = {}(t{});\n", c_type(outputs[k]), k, c_type(outputs[k]),
                       p.outputs[k]);
  }
  // The loop: each index split once (32-bit when the space allows), each
  // input's offset summed from the parts.
  s += fmt::format(R"(}}

extern "C" __global__ void nn_fused(const FusedArgs a) {{
  using namespace nn::backend::cuda;
  constexpr int K = {0};
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {{
    if (a.index32) {{
      unsigned o[K] = {{}};
      split_index32(a.div, a.nd, unsigned(i), [&](int d, long long at) {{
        for (int k = 0; k < K; ++k) o[k] += unsigned(at) * unsigned(a.stride[k][d]);
      }});
      nn_element(a, i, o);
    }} else {{
      long long o[K] = {{}};
      split_index(a.size, a.nd, i, [&](int d, long long at) {{
        for (int k = 0; k < K; ++k) o[k] += at * a.stride[k][d];
      }});
      nn_element(a, i, o);
    }}
  }}
}}
)",
                   std::max<size_t>(inputs.size(), 1));
  return s;
}

}  // namespace nn::backend::cuda
