# The nn program maps no CUDA library on a CPU run (and no OpenBLAS
# before a product needs it), and loads the CUDA
# plugin (with the CUDA runtime) when a GPU is asked for, where the build
# has the backend (and says so plainly when the plugin is missing). The
# dynamic loader reports each library it maps (LD_DEBUG=files), dlopen'ed
# ones included.
#   NN=path to nn, CUDA=ON when the build has the CUDA backend
function(mapped_by out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_DEBUG=files ${NN} ${ARGN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(REGEX MATCHALL "file=[^ \t\n]+" files "${err}")
  set(${out_var} "${files}" PARENT_SCOPE)
  set(stdout "${out}" PARENT_SCOPE)
endfunction()

# An f64 product: OpenBLAS's, which nn opens on first use (backend/blas.h).
mapped_by(files -e "print(sum(ones([64, 64], f64) @ ones([64, 64], f64)))")
if(NOT stdout STREQUAL "262144.0\n")
  message(FATAL_ERROR "the CPU run printed `${stdout}`")
endif()
if(NOT files MATCHES "libopenblas")
  message(FATAL_ERROR "LD_DEBUG=files reported no library; it reported: ${files}")
endif()
set(cuda_libraries "libcud|libcublas|libnvrtc|libnn_cuda")
# A run with no product maps no OpenBLAS either.
mapped_by(plain -e "print(1)")
if(plain MATCHES "libopenblas")
  message(FATAL_ERROR "`print(1)` mapped OpenBLAS: ${plain}")
endif()
string(REGEX MATCHALL "file=[^;]*(${cuda_libraries})[^;]*" cuda "${files}")
if(cuda)
  message(FATAL_ERROR "a CPU run mapped CUDA libraries: ${cuda}")
endif()

if(CUDA)
  mapped_by(files --device cuda -e "print(1)")
  if(NOT files MATCHES "libnn_cuda\\.so" OR NOT files MATCHES "libcudart")
    message(FATAL_ERROR "--device cuda did not load the CUDA plugin and runtime; it mapped: ${files}")
  endif()
  # Without its plugin, a CUDA build says so.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env NN_CUDA_PLUGIN=/nonexistent/libnn_cuda.so
                          ${NN} --device cuda -e "print(1)"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(expected "error: device `cuda` is not available: the CUDA backend could not be loaded: its plugin libnn_cuda.so is missing (looked for /nonexistent/libnn_cuda.so)\n")
  if(NOT rc EQUAL 1 OR NOT err STREQUAL expected)
    message(FATAL_ERROR "without its plugin, --device cuda exited ${rc} saying:\n${err}\nexpected:\n${expected}")
  endif()
endif()
