// What graph fusion knows of nodes: whether a node may join a fused
// elementwise kernel, and the `fused` node standing for a group of them
// (used by the passes fuse-elementwise and fuse-matmul-epilogue).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/device.h"
#include "ir/pass.h"

namespace nn::ir {

// Compute dtypes a fused kernel may run in, as a mask.
constexpr uint8_t kFuseF32 = 1, kFuseF64 = 2;

// A value of no device is a CPU one.
inline bool on_cpu(const backend::Device* d) { return !d || d->type() == backend::DeviceType::cpu; }
inline bool same_device(const backend::Device* a, const backend::Device* b) { return a == b || (on_cpu(a) && on_cpu(b)); }

// Whether fused kernels run on d: on the CPU, and on a GPU while
// backend::gpu_fusion() is on (backend/cuda/fused.cpp; off with NN_CUDA_FUSION=0).
bool fused_kernels_on(const backend::Device* d);

// A host number of the trace (a weak one-element constant): its value is
// part of the program.
bool fusion_immediate(const Value& v);

// The compute dtypes in which node n may be a step of a fused kernel
// (kFuseF32 | kFuseF64), 0 when in none: a pure op with tile kernels on a
// device with fused kernels whose result is of the compute dtype or bool
// (never weak), whose operands are on that device and of the compute dtype
// or bool, or host numbers, and, for a bool
// result, whose operands promote to the compute dtype or bool. So a fused
// step converts nothing that the lone op would have computed otherwise.
uint8_t fusible_dtypes(const Graph& g, const Node& n);

// The fused node of `members` (in trace order, each fusible in `compute`,
// all of one shape): its inputs are the values the members read from
// outside (host numbers become immediates), its outputs the members' results
// read outside the group or kept, its parts the members' source lines.
Node make_fused_node(const Graph& g, std::span<const NodeId> members, backend::DType compute, const Uses& uses);

// A node as a message names it: a fused one by the ops it runs, "exp, mul,
// add (fused)" (a matmul_epilogue's list starts with matmul); any other by
// its op's name.
std::string node_name_for_messages(const Node& n);

}  // namespace nn::ir
