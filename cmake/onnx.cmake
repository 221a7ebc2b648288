# ONNX (Debian's libonnx-dev and libprotobuf-dev; SPEC §16): save_onnx,
# load_onnx and `nn onnx`. NN_ONNX=AUTO builds them when found, ON insists,
# OFF leaves them out: the three then say that this build has no ONNX.
# Sets NN_HAVE_ONNX.
set(NN_HAVE_ONNX OFF)
string(TOUPPER "${NN_ONNX}" nn_onnx_mode)
if(NOT nn_onnx_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "NN_ONNX must be AUTO, ON or OFF, not `${NN_ONNX}`")
endif()
if(nn_onnx_mode STREQUAL "OFF")
  message(STATUS "ONNX: off (NN_ONNX=OFF)")
  return()
endif()
# onnx_proto's targets name protobuf::libprotobuf: find it first.
find_package(Protobuf QUIET)
if(Protobuf_FOUND)
  find_package(ONNX CONFIG QUIET)
endif()
if(NOT Protobuf_FOUND OR NOT ONNX_FOUND)
  if(nn_onnx_mode STREQUAL "ON")
    message(FATAL_ERROR "NN_ONNX=ON but ONNX was not found (install libonnx-dev and libprotobuf-dev)")
  endif()
  message(STATUS "ONNX: not found (no save_onnx or load_onnx; install libonnx-dev for them)")
  return()
endif()
set(NN_HAVE_ONNX ON)
message(STATUS "ONNX: ${ONNX_VERSION}")
