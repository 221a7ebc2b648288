# Runs an example and checks the figure it prints: NN=path to nn,
# EXAMPLE=path to the script, ARGS=its arguments (space-separated), and
# either MIN=the lowest acceptable (last) "test accuracy" or MAX_LOSS=the
# highest acceptable last "val loss". Runs in WORK (default: the example's
# folder).
get_filename_component(dir ${EXAMPLE} DIRECTORY)
if(DEFINED WORK)
  set(dir ${WORK})
  file(MAKE_DIRECTORY ${dir})
endif()
string(REPLACE " " ";" args "${ARGS}")
execute_process(COMMAND ${NN} ${EXAMPLE} ${args} WORKING_DIRECTORY ${dir}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXAMPLE}: exit code ${rc}\n${out}\n${err}")
endif()
if(DEFINED MAX_LOSS)
  set(label "val loss")
else()
  set(label "test accuracy")
endif()
string(REGEX MATCHALL "${label} [0-9.]+" found "${out}")
list(POP_BACK found last)
if(NOT last MATCHES "${label} ([0-9.]+)")
  message(FATAL_ERROR "${EXAMPLE}: no `${label}` line in\n${out}")
endif()
set(value ${CMAKE_MATCH_1})
if((DEFINED MAX_LOSS AND value GREATER MAX_LOSS) OR (DEFINED MIN AND value LESS MIN))
  message(FATAL_ERROR "${EXAMPLE}: ${label} ${value} is out of bounds (${MIN}${MAX_LOSS})\n${out}")
endif()
message(STATUS "${EXAMPLE}: ${label} ${value}")
