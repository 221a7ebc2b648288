# Checkpoint and resume across two processes (SPEC §17): runs
# resume/train_resume.nn once uninterrupted ("full": it saves a checkpoint
# half way) and once resumed from that checkpoint in a fresh process; the
# losses both print after the checkpoint must be equal, digit for digit.
#   NN=path to nn, SCRIPT=the script, DIR=a scratch folder, MODE=graph options
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
separate_arguments(mode UNIX_COMMAND "${MODE}")
get_filename_component(here ${SCRIPT} DIRECTORY)
foreach(phase full resume)
  execute_process(COMMAND ${NN} ${mode} ${SCRIPT} ${phase} ${DIR} WORKING_DIRECTORY ${here}
                  OUTPUT_VARIABLE out_${phase} ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
    message(FATAL_ERROR "${phase}: exit code ${rc}\n${out_${phase}}\n${err}")
  endif()
endforeach()
string(REGEX MATCHALL "\n" lines "${out_full}")
list(LENGTH lines n)
if(n LESS 10)
  message(FATAL_ERROR "the full run printed too little:\n${out_full}")
endif()
if(NOT out_full STREQUAL out_resume)
  message(FATAL_ERROR "the resumed run differs\n--- uninterrupted\n${out_full}\n--- resumed\n${out_resume}")
endif()
file(REMOVE_RECURSE ${DIR})
