// The launch interface of the data-movement kernels (data_movement.cu):
// the strided copy behind permute, broadcast_to, concat and the slices, the
// row gather of take and its scatter-add, one_hot, and tril/triu. Plain data.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/elementwise_kernels.h"

namespace nn::backend::cuda {

// Copies the elements of an n-d index space between two strided layouts
// (strides in elements; 0 repeats, negative walks backwards); `elem` is the
// element size in bytes (1, 2, 4 or 8). src and dst must not overlap.
struct CopyLaunch {
  const void* src = nullptr;
  void* dst = nullptr;
  int elem = 4;
  int nd = 0;
  int64_t size[kDims] = {}, src_stride[kDims] = {}, dst_stride[kDims] = {};
  int64_t n = 0;  // elements
  bool index32 = false;  // n < 2^31: indices divide by `div`
  IndexDivider div[kDims] = {};
};
void strided_copy_launch(const CopyLaunch& l, cudaStream_t stream);

// out[i, :] = x[ids[i], :] (rows of `row_bytes`); an id outside [0, rows)
// raises *flag and copies nothing for it.
void take_launch(const void* x, const void* ids, DType id_dtype, void* out, int64_t n_ids, int64_t rows,
                 int64_t row_bytes, int* flag, cudaStream_t stream);

// out (rows x width, zeroed here) += g's row i at row ids[i], for f32/f64;
// the additions of repeated ids are atomic. An id out of range raises *flag.
bool take_backward_launch(const void* g, const void* ids, DType id_dtype, void* out, DType dtype, int64_t n_ids,
                          int64_t rows, int64_t width, int* flag, cudaStream_t stream);

// tril (lower) or triu of each rows x cols matrix of x: n elements of
// `elem` bytes (zero bits are 0 in every dtype).
void triangle_launch(const void* x, void* out, int elem, int64_t n, int64_t rows, int64_t cols, int64_t k, bool lower,
                     cudaStream_t stream);

// out (f32, n_ids x n) = one-hot rows of ids; an id outside [0, n) raises *flag.
void one_hot_launch(const void* ids, DType id_dtype, float* out, int64_t n_ids, int64_t n, int* flag,
                    cudaStream_t stream);

}  // namespace nn::backend::cuda
