// The CUDA C++ source of a fused elementwise program (ops/fused_program.h)
// for NVRTC: one kernel, `nn_fused`, that makes the program's single pass
// over memory on the GPU, each step through the functor of
// ops/elementwise_math.h that the op's own kernels use, in the program's
// compute dtype, with bool steps normalised to 0 and 1 as the CPU's tile
// evaluator (ops/fused.cpp) does. Shapes and strides are the kernel's
// arguments (FusedArgs), so one source serves every shape: the source is
// the cache key of the compiled kernel (cuda/nvrtc_compiler.h).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "backend/cuda/index_divider.h"
#include "backend/dtype.h"
#include "backend/ops/fused_program.h"

namespace nn::backend::cuda {

// The most inputs, outputs and dims a fused kernel takes (its arguments
// stay within the 4 KiB every GPU accepts).
constexpr int kFusedInputs = kGpuFusedInputs, kFusedOutputs = kGpuFusedOutputs, kFusedDims = 8;

// The kernel's one argument, as the generated source declares it. The
// kernel splits each element's index into the dims once, and finds every
// input's offset from the parts.
struct FusedArgs {
  int64_t n = 0;  // elements of the program's shape
  int32_t nd = 0;  // dims walked (broadcast_dims.h)
  int32_t index32 = 0;  // n < 2^31: the dims split with `div`, offsets in 32 bits
  int64_t size[kFusedDims] = {};
  IndexDivider div[kFusedDims] = {};
  int64_t stride[kFusedInputs][kFusedDims] = {};  // elements; 0 where input k broadcasts
  const void* in[kFusedInputs] = {};
  void* out[kFusedOutputs] = {};
};

// Whether the GPU's fused kernels have a step for `op` (every op with tile
// kernels should).
bool fused_step_supported(const std::string& op);

// The source of the kernel for program p whose inputs and outputs have these
// dtypes; none when it has too many inputs or outputs or a step no GPU
// kernel has.
std::optional<std::string> fused_kernel_source(const FusedProgram& p, std::span<const DType> inputs,
                                               std::span<const DType> outputs);

}  // namespace nn::backend::cuda
