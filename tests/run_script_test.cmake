# Runs one script or command-line test through the nn program.
#   NN=path to nn, TEST=path to NAME.nn (runs `nn [MODE] [NAME.args] NAME.nn`)
#   or to NAME.cmd (runs `nn <the arguments in NAME.cmd>`), in the test's
#   folder. MODE: options for the graph mode (--eager, --schedule bfs).
# Expectations, each optional file beside the test:
#   NAME.out  stdout must equal it        NAME.err  stderr must equal it
#   NAME.code the exit code (default: 1 when NAME.err exists, else 0)
#   NAME.stdin fed to standard input
#   NAME.eager.err  stderr under --eager, where a graph's diagnostic differs
get_filename_component(dir ${TEST} DIRECTORY)
get_filename_component(name ${TEST} NAME_WE)
get_filename_component(ext ${TEST} EXT)

set(args "")
if(ext STREQUAL ".cmd")
  file(READ ${TEST} args)
elseif(EXISTS ${dir}/${name}.args)
  file(READ ${dir}/${name}.args args)
endif()
string(STRIP "${args}" args)
if(DEFINED MODE)
  set(args "${MODE} ${args}")
endif()
separate_arguments(args UNIX_COMMAND "${args}")
if(ext STREQUAL ".nn")
  list(APPEND args ${name}.nn)
endif()

set(input "")
if(EXISTS ${dir}/${name}.stdin)
  set(input INPUT_FILE ${dir}/${name}.stdin)
else()
  set(input INPUT_FILE /dev/null)
endif()
# OpenBLAS picks its kernels by the CPU it finds, and kernels of different
# CPUs sum products in different orders: a last-bit difference that an
# optimizer's steps then grow. The expected outputs hold the AVX2 (Haswell)
# kernels' sums, which every x86-64 machine of CI runs.
cmake_host_system_information(RESULT platform QUERY OS_PLATFORM)
if(platform STREQUAL "x86_64" AND NOT DEFINED ENV{OPENBLAS_CORETYPE})
  set(ENV{OPENBLAS_CORETYPE} Haswell)
endif()
execute_process(COMMAND ${NN} ${args} WORKING_DIRECTORY ${dir} ${input}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)

set(err_file ${dir}/${name}.err)
if(DEFINED MODE AND MODE MATCHES "--eager" AND EXISTS ${dir}/${name}.eager.err)
  set(err_file ${dir}/${name}.eager.err)
endif()
set(expected_rc 0)
if(EXISTS ${err_file})
  set(expected_rc 1)
endif()
if(EXISTS ${dir}/${name}.code)
  file(READ ${dir}/${name}.code expected_rc)
  string(STRIP "${expected_rc}" expected_rc)
endif()
if(NOT rc STREQUAL expected_rc)
  message(FATAL_ERROR "${name}: expected exit code ${expected_rc}, got ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
set(out_file ${dir}/${name}.out)
foreach(stream out err)
  if(EXISTS ${${stream}_file})
    file(READ ${${stream}_file} expected)
    if(NOT ${stream} STREQUAL expected)
      message(FATAL_ERROR "${name}: std${stream} differs\n--- expected\n${expected}\n--- got\n${${stream}}")
    endif()
  endif()
endforeach()
if(expected_rc STREQUAL "0" AND NOT err STREQUAL "" AND NOT EXISTS ${err_file})
  message(FATAL_ERROR "${name}: unexpected stderr\n${err}")
endif()
