// The launch interface of the neural-network kernels (nn_kernels.cu):
// softmax and log_softmax with their backward, the softmax cross-entropy
// loss with its backward, batch and layer normalisation with their
// backward. f32 and f64; statistics accumulate in double, as on the CPU.
// Plain data. Pooling has its own (pool_kernels.h).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/index_divider.h"
#include "backend/dtype.h"

namespace nn::backend::cuda {

// x viewed as [outer, n, inner] around the softmax axis.
struct AxisLaunch {
  int64_t outer = 1, n = 1, inner = 1;
  DType dtype = DType::f32;
};
void softmax_launch(const void* x, void* y, const AxisLaunch& g, bool log, cudaStream_t stream);
// softmax: dx = y (dy - sum(dy y)); log_softmax: dx = dy - exp(y) sum(dy).
void softmax_backward_launch(const void* dy, const void* y, void* dx, const AxisLaunch& g, bool log,
                             cudaStream_t stream);

// logits [n, c]; labels are class ids (i32/i64, `ids` true) or
// probabilities of the logits' dtype. `row_loss` holds n doubles of scratch.
struct CeLaunch {
  const void* logits = nullptr;
  const void* labels = nullptr;
  bool ids = true;
  DType label_dtype = DType::i64;
  DType dtype = DType::f32;
  int64_t n = 0, c = 0;
  int* flag = nullptr;  // raised by an id outside [0, c)
};
void ce_launch(const CeLaunch& l, double* row_loss, void* loss, cudaStream_t stream);
// dlogits = g / n * (softmax(x) sum(y) - y); g from device memory, or
// `g_host` when g_dev is null.
void ce_backward_launch(const CeLaunch& l, const void* g_dev, double g_host, void* dx, cudaStream_t stream);

// Batch norm over x [n, c, s]: per channel statistics (biased variance).
// Each channel's values are split into parts that blocks fold at once (so
// that a few channels still fill the GPU), the parts merged per channel,
// then every element is written by a thread of its own. `scratch` holds
// bn_scratch_bytes(g) bytes of device memory. mean and var are f32 for f16
// and bf16 x (the dtype the kernels compute in), else x's dtype.
struct BnLaunch {
  int64_t n = 0, c = 0, s = 1;
  double eps = 1e-5;
  DType dtype = DType::f32;
  // Set by the launches: n * c * s < 2^31, and the dividers of (n, c, s).
  bool index32 = false;
  IndexDivider div[3];
};
size_t bn_scratch_bytes(const BnLaunch& g);
void bn_train_launch(const BnLaunch& g, const void* x, const void* gamma, const void* beta, void* y, void* mean,
                     void* var, void* scratch, cudaStream_t stream);
// y from the statistics batch_norm_train wrote; scratch: 3 * c values of g.dtype.
void bn_apply_launch(const BnLaunch& g, const void* x, const void* gamma, const void* beta, const void* mean,
                     const void* var, void* y, void* scratch, cudaStream_t stream);
void bn_backward_launch(const BnLaunch& g, const void* dy, const void* x, const void* gamma, const void* mean,
                        const void* var, void* dx, void* dgamma, void* dbeta, void* scratch, cudaStream_t stream);

// Layer norm over the last d values of each of `rows` rows.
struct LnLaunch {
  int64_t rows = 0, d = 1;
  double eps = 1e-5;
  DType dtype = DType::f32;
};
void ln_launch(const LnLaunch& g, const void* x, const void* gamma, const void* beta, void* y, void* mean, void* rstd,
               cudaStream_t stream);
void ln_backward_launch(const LnLaunch& g, const void* dy, const void* x, const void* gamma, const void* mean,
                        const void* rstd, void* dx, void* dgamma, void* dbeta, cudaStream_t stream);

}  // namespace nn::backend::cuda
