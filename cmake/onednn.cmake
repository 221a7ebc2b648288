# oneDNN (Debian's libdnnl-dev): f32 GEMM and the CPU convolutions
# (backend/onednn.h). NN_ONEDNN=AUTO uses it when found, ON insists on it,
# OFF leaves it out: OpenBLAS and the im2col convolutions then do all.
# nn does not link it: it opens the library on first use
# (backend/onednn_library.h). Sets NN_HAVE_ONEDNN and NN_ONEDNN_LIBRARY.
set(NN_HAVE_ONEDNN OFF)
string(TOUPPER "${NN_ONEDNN}" nn_onednn_mode)
if(NOT nn_onednn_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "NN_ONEDNN must be AUTO, ON or OFF, not `${NN_ONEDNN}`")
endif()
if(nn_onednn_mode STREQUAL "OFF")
  message(STATUS "oneDNN: off (NN_ONEDNN=OFF)")
  return()
endif()
find_package(dnnl CONFIG QUIET)
if(NOT dnnl_FOUND)
  if(nn_onednn_mode STREQUAL "ON")
    message(FATAL_ERROR "NN_ONEDNN=ON but oneDNN was not found (install libdnnl-dev)")
  endif()
  message(STATUS "oneDNN: not found (OpenBLAS and im2col convolutions; install libdnnl-dev for it)")
  return()
endif()
get_target_property(NN_ONEDNN_LIBRARY DNNL::dnnl LOCATION)
set(NN_HAVE_ONEDNN ON)
message(STATUS "oneDNN: ${dnnl_VERSION}")
