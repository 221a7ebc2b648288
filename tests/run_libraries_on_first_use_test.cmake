# The nn program maps a library only when a run needs it: `print(1)` maps
# no OpenBLAS, oneDNN, MPI, Graphviz, libedit, ONNX or CUDA library. A
# product opens OpenBLAS; a convolution opens oneDNN, where the build has
# it; a picture opens Graphviz; a model read or written loads the ONNX plugin (with protobuf); asking for a
# GPU loads the CUDA plugin (with the CUDA runtime), where the build has
# the backend. A missing plugin is said plainly. The dynamic loader reports
# each library it maps (LD_DEBUG=files), dlopen'ed ones included.
#   NN=path to nn; CUDA, ONEDNN, ONNX=ON when the build has the CUDA
#   backend, oneDNN, ONNX; SANITIZE=ON in the sanitizer build; TMP=a
#   scratch folder
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
set(lazy_libraries "libmpi|libgvc|libcgraph|libedit|libprotobuf|libonnx|libnn_onnx")
if(NOT SANITIZE)  # the sanitizer build maps oneDNN at start (backend/CMakeLists.txt)
  set(lazy_libraries "libdnnl|${lazy_libraries}")
endif()
string(REGEX MATCHALL "file=[^;]*(${lazy_libraries})[^;]*" lazy "${plain}")
if(lazy)
  message(FATAL_ERROR "`print(1)` mapped libraries it does not use: ${lazy}")
endif()

# A picture of a graph function: Graphviz draws it.
mapped_by(files -e "graph double(x) { return x * 2.0 }\nprint(sum(double(ones([2]))))\ndot(double, \"${TMP}/double.svg\")")
file(READ ${TMP}/double.svg svg LIMIT 400)
if(NOT stdout STREQUAL "4.0\n" OR NOT svg MATCHES "<svg" OR NOT files MATCHES "libgvc")
  message(FATAL_ERROR "a picture printed `${stdout}`, wrote `${svg}` and mapped: ${files}")
endif()

if(ONEDNN)
  # A 3x3 kernel of ones over a 4x4 image of ones: four sums of 9.
  mapped_by(files -e "print(sum(conv2d(ones([1, 1, 4, 4]), ones([1, 1, 3, 3]))))")
  if(NOT stdout STREQUAL "36.0\n" OR NOT files MATCHES "libdnnl")
    message(FATAL_ERROR "a convolution printed `${stdout}` and mapped: ${files}")
  endif()
endif()

if(ONNX)
  # relu(x) * 2 written and read back: the plugin is loaded and works.
  set(model ${TMP}/first_use.onnx)
  set(script "save_onnx(fn(x) { relu(x) * 2.0 }, [ones([2, 3])], \"${model}\")
print(sum(load_onnx(\"${model}\")(full([1, 3], 3.0))))")
  mapped_by(files -e "${script}")
  if(NOT stdout STREQUAL "18.0\n" OR NOT files MATCHES "libnn_onnx\\.so" OR NOT files MATCHES "libprotobuf")
    message(FATAL_ERROR "a model written and read back printed `${stdout}` and mapped: ${files}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env NN_ONNX_PLUGIN=/nonexistent/libnn_onnx.so
                          ${NN} -e "load_onnx(\"${model}\")"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(expected "error: ONNX support could not be loaded: its plugin libnn_onnx.so is missing (looked for /nonexistent/libnn_onnx.so)")
  string(FIND "${err}" "${expected}" at)
  if(NOT rc EQUAL 1 OR NOT at EQUAL 0)
    message(FATAL_ERROR "without its plugin, load_onnx exited ${rc} saying:\n${err}\nexpected it to begin:\n${expected}")
  endif()
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
