// oneDNN's C functions, opened with dlopen on first use (as OpenBLAS is,
// backend/blas.h) rather than mapped at start: loading libdnnl cost every
// run some 4 ms and a hundred page faults, `nn -e 'print(1)'` included.
// Include this in place of <oneapi/dnnl/dnnl.hpp>: each C function that
// nn's use of dnnl.hpp reaches is a macro reading the table below, so the
// C++ API works unchanged. nn does not link libdnnl; a C function missing
// from the list fails the build as an undefined reference, naming it.
#pragma once
#include <oneapi/dnnl/dnnl.h>

#define NN_ONEDNN_FUNCTIONS(X)                                                                                 \
  X(dnnl_dilated_convolution_backward_data_desc_init)                                                          \
  X(dnnl_dilated_convolution_backward_weights_desc_init)                                                       \
  X(dnnl_dilated_convolution_forward_desc_init)                                                                \
  X(dnnl_engine_create)                                                                                        \
  X(dnnl_engine_destroy)                                                                                       \
  X(dnnl_memory_create)                                                                                        \
  X(dnnl_memory_desc_equal)                                                                                    \
  X(dnnl_memory_desc_get_size)                                                                                 \
  X(dnnl_memory_desc_init_by_tag)                                                                              \
  X(dnnl_memory_destroy)                                                                                       \
  X(dnnl_memory_get_data_handle)                                                                               \
  X(dnnl_memory_get_memory_desc)                                                                               \
  X(dnnl_memory_set_data_handle_v2)                                                                            \
  X(dnnl_primitive_attr_create)                                                                                \
  X(dnnl_primitive_attr_destroy)                                                                               \
  X(dnnl_primitive_attr_set_scratchpad_mode)                                                                   \
  X(dnnl_primitive_create)                                                                                     \
  X(dnnl_primitive_desc_destroy)                                                                               \
  X(dnnl_primitive_desc_iterator_create)                                                                       \
  X(dnnl_primitive_desc_iterator_destroy)                                                                      \
  X(dnnl_primitive_desc_iterator_fetch)                                                                        \
  X(dnnl_primitive_desc_query_md)                                                                              \
  X(dnnl_primitive_destroy)                                                                                    \
  X(dnnl_primitive_execute)                                                                                    \
  X(dnnl_reorder_primitive_desc_create)                                                                        \
  X(dnnl_sgemm)                                                                                                \
  X(dnnl_stream_create)                                                                                        \
  X(dnnl_stream_destroy)                                                                                       \
  X(dnnl_stream_wait)

namespace nn::backend {

struct OnednnLibrary {
#define NN_ONEDNN_FIELD(f) decltype(&::f) f;
  NN_ONEDNN_FUNCTIONS(NN_ONEDNN_FIELD)
#undef NN_ONEDNN_FIELD
};

// The library, opened once (thread-safe); null where it cannot be (a
// message to stderr says why, once), and then onednn_enabled() is false.
const OnednnLibrary* onednn_library();

}  // namespace nn::backend

// onednn_library.cpp, which fills the table, names the functions themselves.
#ifndef NN_ONEDNN_TABLE_ONLY
// Only reached after onednn_enabled() said yes: the table is there.
#define NN_ONEDNN_CALL(f) (::nn::backend::onednn_library()->f)
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
