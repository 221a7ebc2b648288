# Installs the build into a fresh prefix, builds examples/embed against it
# with find_package(nn), runs the host and checks its output; then checks
# that the installed program and library use the installed stdlib and, with
# the CUDA backend (-DCUDA=ON), the installed CUDA plugin, and with ONNX
# (-DONNX=ON), the installed ONNX plugin.
# -DBUILD=<build dir> -DSOURCE=<source dir> -DWORK=<scratch dir> -DCUDA=ON|OFF -DONNX=ON|OFF
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect text part)
  string(FIND "${text}" "${part}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected `${part}` in:\n${text}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
foreach(f include/nn/nn.h share/nn/stdlib/prelude.nn share/nn/stdlib/data/iris.csv bin/nn)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
file(GLOB configs ${prefix}/lib*/cmake/nn/nnConfig.cmake)
if(NOT configs)
  message(FATAL_ERROR "not installed: lib/cmake/nn/nnConfig.cmake")
endif()

run(${CMAKE_COMMAND} -S ${SOURCE}/examples/embed -B ${WORK}/build -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/build)

# A probe module only the installed stdlib has: found by the installed
# library (through the host) and by the installed program.
file(WRITE ${prefix}/share/nn/stdlib/embed_probe.nn "let probe = 41 + 1\n")
set(ENV{NN_STDLIB} "")
set(ENV{NN_PATH} "")
run(${WORK}/build/host ${SOURCE}/examples/embed/model.nn "import \"embed_probe\" as p\np.probe")
expect("${out}" "predict: f32[2, 3]")
expect("${out}" "2 5 -0.5 5 9 -2.5")
expect("${out}" "scaled[0][0]: 6")
expect("${out}" "caught: matmul")
expect("${out}" "still running: 3")
expect("${out}" "42")
expect("${err}" "error: matmul")
run(${prefix}/bin/nn -e "import \"embed_probe\" as p\nprint(p.probe)")
expect("${out}" "42")

# Asked for a GPU, the installed program and the installed library (through
# the host) load the installed plugin, not the build tree's; the dynamic
# loader names each file it maps (LD_DEBUG=files).
if(CUDA)
  file(GLOB plugin ${prefix}/lib*/libnn_cuda.so)
  if(NOT plugin)
    message(FATAL_ERROR "not installed: lib/libnn_cuda.so")
  endif()
  foreach(cmd "${prefix}/bin/nn;--device;cuda;-e;print(1)"
              "${WORK}/build/host;${SOURCE}/examples/embed/model.nn;to(ones([1]), \"cuda\")")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_DEBUG=files ${cmd}
                    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    string(REGEX MATCH "file=[^ \t\n]*libnn_cuda\\.so" loaded "${err}")
    if(NOT loaded STREQUAL "file=${plugin}")
      message(FATAL_ERROR "${cmd} loaded `${loaded}`, not file=${plugin}")
    endif()
  endforeach()
endif()
# A model written and read back by the installed program and the installed
# library (through the host) loads the installed ONNX plugin.
if(ONNX)
  file(GLOB plugin ${prefix}/lib*/libnn_onnx.so)
  if(NOT plugin)
    message(FATAL_ERROR "not installed: lib/libnn_onnx.so")
  endif()
  set(model ${WORK}/relu.onnx)
  set(save "save_onnx(fn(x) { relu(x) }, [ones([1, 2])], \"${model}\")")
  set(value "item(sum(load_onnx(\"${model}\")(ones([1, 2]))))")
  foreach(cmd "${prefix}/bin/nn;-e;${save}\nprint(${value})"
              "${WORK}/build/host;${SOURCE}/examples/embed/model.nn;${save}\n${value}")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_DEBUG=files ${cmd}
                    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    string(REGEX MATCH "file=[^ \t\n]*libnn_onnx\\.so" loaded "${err}")
    if(NOT rc EQUAL 0 OR NOT loaded STREQUAL "file=${plugin}")
      message(FATAL_ERROR "${cmd} exited ${rc} and loaded `${loaded}`, not file=${plugin}:\n${out}")
    endif()
    expect("${out}" "2.0")
  endforeach()
endif()
message(STATUS "installed nn works")
