// Data-movement kernels (copy_kernels.h): one thread per element, moving
// elements as raw bytes of their size.
#include "backend/cuda/copy_kernels.h"
#include "backend/cuda/device_math.cuh"

namespace nn::backend::cuda {
namespace {

template <class E>
__global__ void strided_copy(CopyLaunch l) {
  const E* src = static_cast<const E*>(l.src);
  E* dst = static_cast<E*>(l.dst);
  for (int64_t i = global_index(); i < l.n; i += grid_stride()) {
    int64_t so = 0, dof = 0;
    auto add = [&](int d, int64_t idx) {
      so += idx * l.src_stride[d];
      dof += idx * l.dst_stride[d];
    };
    if (l.index32) split_index32(l.div, l.nd, uint32_t(i), add);
    else split_index(l.size, l.nd, i, add);
    dst[dof] = src[so];
  }
}

__device__ inline int64_t id_at(const void* ids, DType d, int64_t i) {
  return d == DType::i32 ? int64_t(static_cast<const int32_t*>(ids)[i]) : static_cast<const int64_t*>(ids)[i];
}

// One thread per 4-byte word of the output (or byte, for odd row sizes).
template <class W>
__global__ void take_rows(const W* x, const void* ids, DType id_dtype, W* out, int64_t n_ids, int64_t rows,
                          int64_t row_words, int* flag) {
  const int64_t total = n_ids * row_words;
  for (int64_t i = global_index(); i < total; i += grid_stride()) {
    const int64_t r = i / row_words, j = i - r * row_words;
    const int64_t id = id_at(ids, id_dtype, r);
    if (id < 0 || id >= rows) {
      *flag = 1;
      continue;
    }
    out[i] = x[id * row_words + j];
  }
}

template <class T>
__global__ void scatter_add_rows(const T* g, const void* ids, DType id_dtype, T* out, int64_t n_ids, int64_t rows,
                                 int64_t width, int* flag) {
  const int64_t total = n_ids * width;
  for (int64_t i = global_index(); i < total; i += grid_stride()) {
    const int64_t r = i / width, j = i - r * width;
    const int64_t id = id_at(ids, id_dtype, r);
    if (id < 0 || id >= rows) {
      *flag = 1;
      continue;
    }
    atomicAdd(out + id * width + j, g[i]);
  }
}

__global__ void one_hot_rows(const void* ids, DType id_dtype, float* out, int64_t n_ids, int64_t n, int* flag) {
  for (int64_t i = global_index(); i < n_ids; i += grid_stride()) {
    const int64_t id = id_at(ids, id_dtype, i);
    if (id < 0 || id >= n) *flag = 1;
    else out[i * n + id] = 1.0f;
  }
}

// tril / triu: element (i, j) of each rows x cols matrix is kept where
// j - i <= k (tril) or j - i >= k (triu), else zero.
template <class E>
__global__ void triangle(const E* x, E* out, int64_t n, int64_t rows, int64_t cols, int64_t k, bool lower) {
  for (int64_t e = global_index(); e < n; e += grid_stride()) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    const bool keep = lower ? j - i <= k : j - i >= k;
    out[e] = keep ? x[e] : E(0);
  }
}

template <class E>
void triangle_of(const void* x, void* out, int64_t n, int64_t rows, int64_t cols, int64_t k, bool lower, unsigned blocks,
                 cudaStream_t s) {
  triangle<<<blocks, kThreads, 0, s>>>(static_cast<const E*>(x), static_cast<E*>(out), n, rows, cols, k, lower);
}

}  // namespace

void triangle_launch(const void* x, void* out, int elem, int64_t n, int64_t rows, int64_t cols, int64_t k, bool lower,
                     cudaStream_t s) {
  if (n == 0) return;
  const unsigned b = blocks_for(n);
  switch (elem) {
    case 1: triangle_of<uint8_t>(x, out, n, rows, cols, k, lower, b, s); break;
    case 2: triangle_of<uint16_t>(x, out, n, rows, cols, k, lower, b, s); break;
    case 4: triangle_of<uint32_t>(x, out, n, rows, cols, k, lower, b, s); break;
    default: triangle_of<uint64_t>(x, out, n, rows, cols, k, lower, b, s); break;
  }
}

void strided_copy_launch(const CopyLaunch& l, cudaStream_t s) {
  if (l.n == 0) return;
  const unsigned b = blocks_for(l.n);
  switch (l.elem) {
    case 1: strided_copy<uint8_t><<<b, kThreads, 0, s>>>(l); break;
    case 2: strided_copy<uint16_t><<<b, kThreads, 0, s>>>(l); break;
    case 4: strided_copy<uint32_t><<<b, kThreads, 0, s>>>(l); break;
    default: strided_copy<uint64_t><<<b, kThreads, 0, s>>>(l); break;
  }
}

void take_launch(const void* x, const void* ids, DType id_dtype, void* out, int64_t n_ids, int64_t rows,
                 int64_t row_bytes, int* flag, cudaStream_t s) {
  if (n_ids == 0) return;
  if (row_bytes % 4 == 0) {
    const int64_t words = row_bytes / 4;
    take_rows<<<blocks_for(n_ids * (words ? words : 1)), kThreads, 0, s>>>(
        static_cast<const uint32_t*>(x), ids, id_dtype, static_cast<uint32_t*>(out), n_ids, rows, words, flag);
  } else {
    take_rows<<<blocks_for(n_ids * row_bytes), kThreads, 0, s>>>(
        static_cast<const uint8_t*>(x), ids, id_dtype, static_cast<uint8_t*>(out), n_ids, rows, row_bytes, flag);
  }
}

bool take_backward_launch(const void* g, const void* ids, DType id_dtype, void* out, DType dtype, int64_t n_ids,
                          int64_t rows, int64_t width, int* flag, cudaStream_t s) {
  return with_float_type(dtype, [&]<class T>() {
    if (rows * width != 0) cudaMemsetAsync(out, 0, size_t(rows * width) * sizeof(T), s);
    if (n_ids * width == 0) return;
    scatter_add_rows<<<blocks_for(n_ids * width), kThreads, 0, s>>>(static_cast<const T*>(g), ids, id_dtype,
                                                                    static_cast<T*>(out), n_ids, rows, width, flag);
  });
}

void one_hot_launch(const void* ids, DType id_dtype, float* out, int64_t n_ids, int64_t n, int* flag, cudaStream_t s) {
  if (n_ids * n != 0) cudaMemsetAsync(out, 0, size_t(n_ids * n) * sizeof(float), s);
  if (n_ids == 0) return;
  one_hot_rows<<<blocks_for(n_ids), kThreads, 0, s>>>(ids, id_dtype, out, n_ids, n, flag);
}

}  // namespace nn::backend::cuda
