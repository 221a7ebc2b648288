// OpId: every op of the registry as a typed id. Passes, printers, the
// profiler and the CUDA backend name ops by OpId; a string is looked up only
// where a user's name is parsed (Registry::find). The elementwise ops and
// the reductions come from their tables (ops/elementwise_ops.h,
// ops/reduction_ops.h); each other family lists its ids here, beside the
// file that registers their entries. The nn name of an op
// is its id's spelling. Plain macros and an enum, so that nvcc reads it too.
#pragma once
#include <cstdint>

#include "backend/ops/elementwise_ops.h"
#include "backend/ops/reduction_ops.h"

// X(id) for each op of the families without a table of their own.
#define NN_OTHER_OPS(X)                                                                 \
  X(where)                                         /* ops/where.cpp */                   \
  X(cast) X(to_device)                             /* ops/cast.cpp */                    \
  X(full) X(arange) X(linspace) X(eye)             /* ops/creation.cpp */                \
  X(rand) X(randn) X(randint)                      /* ops/creation.cpp: random */        \
  X(argmax) X(argmin)                              /* ops/reduction.cpp */               \
  X(matmul)                                        /* ops/matmul.cpp */                  \
  X(matmul_tn) X(matmul_nt)                        /* ops/matmul_transposed.cpp */       \
  X(matmul_epilogue)                               /* ops/matmul_epilogue.cpp */         \
  X(reshape) X(permute) X(broadcast_to) X(concat)  /* ops/shape.cpp */                   \
  X(slice) X(slice_backward) X(assign_slice)       /* ops/index.cpp */                   \
  X(take) X(take_backward)                                                               \
  X(conv2d) X(conv2d_backward_input)               /* ops/nn_conv.cpp */                 \
  X(conv2d_backward_weight) X(conv2d_relu) X(conv2d_relu_max_pool)                       \
  X(max_pool2d) X(max_pool2d_backward)             /* ops/nn_pool.cpp */                 \
  X(avg_pool2d) X(avg_pool2d_backward)                                                   \
  X(to_blocked) X(from_blocked)                    /* ops/blocked_layout.cpp */          \
  X(batch_norm_train) X(batch_norm_backward)       /* ops/nn_norm.cpp */                 \
  X(batch_norm_apply) X(batch_norm_scale)                                                \
  X(running_stat_update) X(layer_norm) X(layer_norm_backward)                            \
  X(softmax) X(log_softmax) X(softmax_backward)   /* ops/nn_softmax.cpp */              \
  X(log_softmax_backward) X(softmax_cross_entropy)                                       \
  X(softmax_cross_entropy_backward) X(one_hot)                                           \
  X(tril) X(triu)                                  /* ops/triangle.cpp */                \
  X(cumsum) X(cumprod)                             /* ops/scan.cpp */                    \
  X(gather) X(scatter_add)                         /* ops/gather.cpp */                  \
  X(argsort)                                       /* ops/sort.cpp */                    \
  X(multinomial)                                   /* ops/sampling.cpp */                \
  X(all_reduce) X(broadcast) X(all_gather)         /* ops/collective.cpp */              \
  X(all_reduce_start) X(all_reduce_wait)                                                 \
  X(fused)                                         /* ops/fused.cpp */

namespace nn::backend {

#define NN_OP_ID_FIRST(id, ...) id,
enum class OpId : uint16_t {
  NN_UNARY_OPS(NN_OP_ID_FIRST) NN_BINARY_OPS(NN_OP_ID_FIRST) NN_REDUCTION_OPS(NN_OP_ID_FIRST)
  NN_OTHER_OPS(NN_OP_ID_FIRST)
  unlisted,  // an op registered by its name alone (a test's, a host's)
};
#undef NN_OP_ID_FIRST

#define NN_OP_ID_COUNT(...) +1
inline constexpr int kOpCount = 0 NN_UNARY_OPS(NN_OP_ID_COUNT) NN_BINARY_OPS(NN_OP_ID_COUNT)
    NN_REDUCTION_OPS(NN_OP_ID_COUNT) NN_OTHER_OPS(NN_OP_ID_COUNT);
#undef NN_OP_ID_COUNT

// The op's nn name: its id's spelling.
inline const char* op_name(OpId id) {
#define NN_OP_ID_NAME(id, ...) #id,
  static constexpr const char* names[] = {NN_UNARY_OPS(NN_OP_ID_NAME) NN_BINARY_OPS(NN_OP_ID_NAME)
                                              NN_REDUCTION_OPS(NN_OP_ID_NAME) NN_OTHER_OPS(NN_OP_ID_NAME)};
#undef NN_OP_ID_NAME
  static_assert(sizeof(names) / sizeof(names[0]) == kOpCount, "one name per OpId");
  const int i = static_cast<int>(id);
  return i < kOpCount ? names[i] : "unlisted";
}

}  // namespace nn::backend
