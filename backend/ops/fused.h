// The fused elementwise kernel (op `fused`, backend/ops/fused.cpp): a
// FusedProgram run tile by tile over its outputs, so that a group of
// elementwise ops makes one pass over memory. run_fused runs a range of it
// on the calling thread; the GEMM epilogue (backend/ops/matmul_epilogue.cpp)
// calls it on each block of rows its thread has just computed.
#pragma once
#include <span>

#include "backend/op_registry.h"
#include "backend/ops/fused_program.h"
#include "backend/tensor.h"

namespace nn::backend {

// Runs p over the flat elements [begin, end) of its outputs: `in` are the
// node's inputs (broadcasting to p.shape), `out` its outputs (p.shape, each
// of its step's dtype). An output may share memory with an input of its own
// dtype and shape: a tile is read whole before it is written.
// With `block` set, input 0 is read from it instead: a buffer of p.compute
// holding only the elements [begin, end) (the rows a GEMM has just written);
// in[0] then only gives the input's type.
// The types of p's outputs on `dev`: its shape, each of its step's dtype.
OutTypes program_out_types(const FusedProgram& p, Device* dev);

void run_fused(const FusedProgram& p, std::span<const Tensor> in, std::span<Tensor> out, int64_t begin, int64_t end,
               const void* block = nullptr);

}  // namespace nn::backend
