// oneDNN, opened on first use (backend/shared_library.h): loading libdnnl
// cost every run some 4 ms and a hundred page faults. Include this in place
// of <oneapi/dnnl/dnnl.hpp>: each C function that nn's use of dnnl.hpp
// reaches reads the table below, so the C++ API works unchanged.
#pragma once
#include <oneapi/dnnl/dnnl.h>

#include "backend/shared_library.h"

#define NN_ONEDNN_SYMBOLS(S)                                                                                 \
  S(dnnl_batch_normalization_backward_desc_init)                                                               \
  S(dnnl_batch_normalization_forward_desc_init)                                                                \
  S(dnnl_dilated_convolution_backward_data_desc_init)                                                          \
  S(dnnl_dilated_convolution_backward_weights_desc_init)                                                       \
  S(dnnl_dilated_convolution_forward_desc_init)                                                                \
  S(dnnl_engine_create)                                                                                        \
  S(dnnl_engine_destroy)                                                                                       \
  S(dnnl_memory_create)                                                                                        \
  S(dnnl_memory_desc_equal)                                                                                    \
  S(dnnl_memory_desc_get_size)                                                                                 \
  S(dnnl_memory_desc_init_by_tag)                                                                              \
  S(dnnl_memory_destroy)                                                                                       \
  S(dnnl_memory_get_data_handle)                                                                               \
  S(dnnl_memory_get_memory_desc)                                                                               \
  S(dnnl_memory_set_data_handle_v2)                                                                            \
  S(dnnl_primitive_attr_create)                                                                                \
  S(dnnl_primitive_attr_destroy)                                                                               \
  S(dnnl_primitive_attr_set_scratchpad_mode)                                                                   \
  S(dnnl_primitive_create)                                                                                     \
  S(dnnl_primitive_desc_destroy)                                                                               \
  S(dnnl_primitive_desc_iterator_create)                                                                       \
  S(dnnl_primitive_desc_iterator_destroy)                                                                      \
  S(dnnl_primitive_desc_iterator_fetch)                                                                        \
  S(dnnl_primitive_desc_query_md)                                                                              \
  S(dnnl_primitive_destroy)                                                                                    \
  S(dnnl_primitive_execute)                                                                                    \
  S(dnnl_reorder_primitive_desc_create)                                                                        \
  S(dnnl_sgemm)                                                                                                \
  S(dnnl_stream_create)                                                                                        \
  S(dnnl_stream_destroy)                                                                                       \
  S(dnnl_stream_wait)

namespace nn::backend {

struct OnednnLibrary {
  NN_ONEDNN_SYMBOLS(NN_LIBRARY_FIELD)
};

// The library, opened once (thread-safe); null where it cannot be (a
// message to stderr says why, once), and then onednn_enabled() is false.
const OnednnLibrary* onednn_library();

}  // namespace nn::backend

// onednn_library.cpp, which fills the table, names the functions themselves.
#ifndef NN_ONEDNN_TABLE_ONLY
// Only reached after onednn_enabled() said yes: the table is there.
#define NN_ONEDNN_CALL(f) (::nn::backend::onednn_library()->f)
#define dnnl_batch_normalization_backward_desc_init NN_ONEDNN_CALL(dnnl_batch_normalization_backward_desc_init)
#define dnnl_batch_normalization_forward_desc_init NN_ONEDNN_CALL(dnnl_batch_normalization_forward_desc_init)
#define dnnl_dilated_convolution_backward_data_desc_init NN_ONEDNN_CALL(dnnl_dilated_convolution_backward_data_desc_init)
#define dnnl_dilated_convolution_backward_weights_desc_init \
  NN_ONEDNN_CALL(dnnl_dilated_convolution_backward_weights_desc_init)
#define dnnl_dilated_convolution_forward_desc_init NN_ONEDNN_CALL(dnnl_dilated_convolution_forward_desc_init)
#define dnnl_engine_create NN_ONEDNN_CALL(dnnl_engine_create)
#define dnnl_engine_destroy NN_ONEDNN_CALL(dnnl_engine_destroy)
#define dnnl_memory_create NN_ONEDNN_CALL(dnnl_memory_create)
#define dnnl_memory_desc_equal NN_ONEDNN_CALL(dnnl_memory_desc_equal)
#define dnnl_memory_desc_get_size NN_ONEDNN_CALL(dnnl_memory_desc_get_size)
#define dnnl_memory_desc_init_by_tag NN_ONEDNN_CALL(dnnl_memory_desc_init_by_tag)
#define dnnl_memory_destroy NN_ONEDNN_CALL(dnnl_memory_destroy)
#define dnnl_memory_get_data_handle NN_ONEDNN_CALL(dnnl_memory_get_data_handle)
#define dnnl_memory_get_memory_desc NN_ONEDNN_CALL(dnnl_memory_get_memory_desc)
#define dnnl_memory_set_data_handle_v2 NN_ONEDNN_CALL(dnnl_memory_set_data_handle_v2)
#define dnnl_primitive_attr_create NN_ONEDNN_CALL(dnnl_primitive_attr_create)
#define dnnl_primitive_attr_destroy NN_ONEDNN_CALL(dnnl_primitive_attr_destroy)
#define dnnl_primitive_attr_set_scratchpad_mode NN_ONEDNN_CALL(dnnl_primitive_attr_set_scratchpad_mode)
#define dnnl_primitive_create NN_ONEDNN_CALL(dnnl_primitive_create)
#define dnnl_primitive_desc_destroy NN_ONEDNN_CALL(dnnl_primitive_desc_destroy)
#define dnnl_primitive_desc_iterator_create NN_ONEDNN_CALL(dnnl_primitive_desc_iterator_create)
#define dnnl_primitive_desc_iterator_destroy NN_ONEDNN_CALL(dnnl_primitive_desc_iterator_destroy)
#define dnnl_primitive_desc_iterator_fetch NN_ONEDNN_CALL(dnnl_primitive_desc_iterator_fetch)
#define dnnl_primitive_desc_query_md NN_ONEDNN_CALL(dnnl_primitive_desc_query_md)
#define dnnl_primitive_destroy NN_ONEDNN_CALL(dnnl_primitive_destroy)
#define dnnl_primitive_execute NN_ONEDNN_CALL(dnnl_primitive_execute)
#define dnnl_reorder_primitive_desc_create NN_ONEDNN_CALL(dnnl_reorder_primitive_desc_create)
#define dnnl_sgemm NN_ONEDNN_CALL(dnnl_sgemm)
#define dnnl_stream_create NN_ONEDNN_CALL(dnnl_stream_create)
#define dnnl_stream_destroy NN_ONEDNN_CALL(dnnl_stream_destroy)
#define dnnl_stream_wait NN_ONEDNN_CALL(dnnl_stream_wait)

#include <oneapi/dnnl/dnnl.hpp>
#endif
