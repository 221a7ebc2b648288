// Registration of each op family; called once when the registry is built.
#pragma once

namespace nn::backend {
class Registry;

void register_unary_ops(Registry& r);      // ops/unary.cpp
void register_binary_ops(Registry& r);     // ops/binary.cpp
void register_creation_ops(Registry& r);   // ops/creation.cpp (incl. random)
void register_cast_ops(Registry& r);       // ops/cast.cpp (astype, to)
void register_reduction_ops(Registry& r);  // ops/reduction.cpp
void register_matmul_ops(Registry& r);     // ops/matmul.cpp
void register_matmul_transposed_ops(Registry& r);  // ops/matmul_transposed.cpp (matmul_tn, matmul_nt)
void register_shape_ops(Registry& r);      // ops/shape.cpp (reshape, permute, broadcast_to, concat)
void register_index_ops(Registry& r);      // ops/index.cpp (slice, assign_slice, take)
void register_nn_conv_ops(Registry& r);     // ops/nn_conv.cpp (conv2d and its backward ops)
void register_nn_pool_ops(Registry& r);     // ops/nn_pool.cpp (max_pool2d, avg_pool2d, backward ops)
void register_nn_norm_ops(Registry& r);     // ops/nn_norm.cpp (batch_norm, layer_norm, backward ops)
void register_blocked_layout_ops(Registry& r);  // ops/blocked_layout.cpp (to_blocked, from_blocked)
void register_nn_softmax_ops(Registry& r);  // ops/nn_softmax.cpp (softmax, losses, one_hot)
void register_triangle_ops(Registry& r);    // ops/triangle.cpp (tril, triu)
void register_scan_ops(Registry& r);        // ops/scan.cpp (cumsum, cumprod)
void register_gather_ops(Registry& r);      // ops/gather.cpp (gather, scatter_add)
void register_sort_ops(Registry& r);        // ops/sort.cpp (argsort, under sort and topk)
void register_sampling_ops(Registry& r);    // ops/sampling.cpp (multinomial)
void register_collective_ops(Registry& r);  // ops/collective.cpp (all_reduce, broadcast, all_gather, buckets)
void register_fused_ops(Registry& r);       // ops/fused.cpp (fused elementwise kernels of graph fusion)
void register_matmul_epilogue_ops(Registry& r);  // ops/matmul_epilogue.cpp (a GEMM with a fused epilogue)

inline void register_all_ops(Registry& r) {
  register_unary_ops(r);
  register_binary_ops(r);
  register_creation_ops(r);
  register_cast_ops(r);
  register_reduction_ops(r);
  register_matmul_ops(r);
  register_matmul_transposed_ops(r);
  register_shape_ops(r);
  register_index_ops(r);
  register_nn_conv_ops(r);
  register_nn_pool_ops(r);
  register_nn_norm_ops(r);
  register_blocked_layout_ops(r);
  register_nn_softmax_ops(r);
  register_triangle_ops(r);
  register_scan_ops(r);
  register_gather_ops(r);
  register_sort_ops(r);
  register_sampling_ops(r);
  register_collective_ops(r);
  register_fused_ops(r);
  register_matmul_epilogue_ops(r);
}

}  // namespace nn::backend
