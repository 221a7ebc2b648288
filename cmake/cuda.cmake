# The CUDA backend (backend/cuda/). NN_CUDA=AUTO builds it when the CUDA
# toolkit and cuDNN are found (by default under /usr/local/cuda: cudnn.h in
# include/, libcudnn.so in lib/ or lib64/), ON insists on them, OFF leaves it
# out. Sets NN_HAVE_CUDA and, when on, the CUDA language and the target
# nn_cudnn and nn_nvrtc. Everything else builds and passes its tests
# without it.
set(NN_HAVE_CUDA OFF)
string(TOUPPER "${NN_CUDA}" nn_cuda_mode)
if(NOT nn_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "NN_CUDA must be AUTO, ON or OFF, not `${NN_CUDA}`")
endif()
if(nn_cuda_mode STREQUAL "OFF")
  message(STATUS "CUDA backend: off (NN_CUDA=OFF)")
  return()
endif()
# The sanitizers and the CUDA runtime do not work together.
if(NN_SANITIZE OR NN_TSAN)
  if(nn_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "NN_CUDA=ON cannot be combined with a sanitizer build (the CUDA runtime does not run under it)")
  endif()
  message(STATUS "CUDA backend: off (sanitizer build)")
  return()
endif()

if(NOT DEFINED CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT} AND EXISTS /usr/local/cuda)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
find_package(CUDAToolkit QUIET)
set(nn_cuda_missing "")
if(NOT CUDAToolkit_FOUND OR NOT CUDAToolkit_NVCC_EXECUTABLE)
  list(APPEND nn_cuda_missing "the CUDA toolkit (nvcc)")
else()
  find_path(NN_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_ROOT}/include)
  find_library(NN_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_ROOT}
               PATH_SUFFIXES lib lib64)
  if(NOT NN_CUDNN_INCLUDE_DIR OR NOT NN_CUDNN_LIBRARY)
    list(APPEND nn_cuda_missing "cuDNN (cudnn.h and libcudnn.so)")
  endif()
  # The library itself, not CUDA::nvrtc, which also links the driver
  # (libcuda.so.1): nn must load on machines without one.
  find_library(NN_NVRTC_LIBRARY nvrtc HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_ROOT} PATH_SUFFIXES lib lib64)
  if(NOT NN_NVRTC_LIBRARY)
    list(APPEND nn_cuda_missing "NVRTC (libnvrtc.so)")
  endif()
endif()
if(nn_cuda_missing)
  if(nn_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "NN_CUDA=ON but ${nn_cuda_missing} was not found (set CUDAToolkit_ROOT)")
  endif()
  message(STATUS "CUDA backend: off (${nn_cuda_missing} not found)")
  return()
endif()

# sm_90 (H100, H200) machine code, plus PTX that newer GPUs compile at load time.
set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual" CACHE STRING "GPU architectures of the CUDA kernels")
set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
enable_language(CUDA)
# The .cu files include the small launch headers of backend/cuda/, never
# the rest of nn's headers, so nvcc parses little beyond the kernels. CMake
# 3.25 does not know nvcc's C++20 flag: it is told here.
set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
# --fmad=false: a * b + c rounds twice, as on the CPU, and as the fused
# kernels NVRTC compiles (cuda/nvrtc_compiler.cpp), which must not contract
# one op's product into the next op's sum.
add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>
                    $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>
                    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

add_library(nn_cudnn INTERFACE)
target_include_directories(nn_cudnn SYSTEM INTERFACE ${NN_CUDNN_INCLUDE_DIR})
target_link_libraries(nn_cudnn INTERFACE ${NN_CUDNN_LIBRARY})
add_library(nn_nvrtc INTERFACE)
target_link_libraries(nn_nvrtc INTERFACE ${NN_NVRTC_LIBRARY})
set(NN_HAVE_CUDA ON)

# NCCL, where the CUDA prefix has it (nccl.h, libnccl.so; no Debian package):
# collectives of CUDA tensors then go GPU to GPU (backend/cuda/nccl_collectives.cpp)
# instead of through host memory and MPI.
find_path(NN_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_ROOT}/include)
find_library(NN_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_ROOT} PATH_SUFFIXES lib lib64)
set(NN_HAVE_NCCL OFF)
if(NN_NCCL_INCLUDE_DIR AND NN_NCCL_LIBRARY)
  set(NN_HAVE_NCCL ON)
  add_library(nn_nccl INTERFACE)
  target_include_directories(nn_nccl SYSTEM INTERFACE ${NN_NCCL_INCLUDE_DIR})
  target_link_libraries(nn_nccl INTERFACE ${NN_NCCL_LIBRARY})
  target_compile_definitions(nn_nccl INTERFACE NN_HAVE_NCCL=1)
endif()
message(STATUS "CUDA backend: on (CUDA ${CUDAToolkit_VERSION}, ${NN_CUDNN_LIBRARY}, architectures ${CMAKE_CUDA_ARCHITECTURES}, NCCL ${NN_HAVE_NCCL})")
