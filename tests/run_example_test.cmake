# Runs an example and checks the accuracy it prints: NN=path to nn,
# EXAMPLE=path to the script, MIN=the lowest acceptable "test accuracy".
get_filename_component(dir ${EXAMPLE} DIRECTORY)
execute_process(COMMAND ${NN} ${EXAMPLE} WORKING_DIRECTORY ${dir}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXAMPLE}: exit code ${rc}\n${out}\n${err}")
endif()
if(NOT out MATCHES "test accuracy ([0-9.]+)")
  message(FATAL_ERROR "${EXAMPLE}: no `test accuracy` line in\n${out}")
endif()
set(acc ${CMAKE_MATCH_1})
if(acc LESS MIN)
  message(FATAL_ERROR "${EXAMPLE}: test accuracy ${acc} is below ${MIN}\n${out}")
endif()
message(STATUS "${EXAMPLE}: test accuracy ${acc}")
