# Readability of the default picture: the digits CNN's training step draws at
# most 80 boxes in a PNG at most 2500 px wide, with no bare scalar constant
# as a node; an LSTM unrolled 16 steps shows its steps as one series box.
#   cmake -DNN=... -DSRC=<source dir> -DOUT=dir -P run_picture_readability.cmake
file(MAKE_DIRECTORY ${OUT})
function(draw script out)
  execute_process(COMMAND ${NN} dot ${script} ${ARGN} -o ${OUT}/${out} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nn dot ${script} -o ${out}: exit ${rc}\n${err}")
  endif()
endfunction()

draw(${SRC}/examples/digits_cnn.nn cnn.dot)
draw(${SRC}/examples/digits_cnn.nn cnn.png)
file(STRINGS ${OUT}/cnn.dot boxes REGEX "^ *[ngv][0-9]+ \\[")
list(LENGTH boxes count)
if(count GREATER 80)
  message(FATAL_ERROR "the digits CNN draws ${count} boxes, more than 80")
endif()
foreach(box ${boxes})
  if(box MATCHES "label=\"const\\\\n[a-z0-9]+\\[\\]")
    message(FATAL_ERROR "a scalar constant is drawn as a node: ${box}")
  endif()
endforeach()
file(READ ${OUT}/cnn.png header LIMIT 24 HEX)
string(SUBSTRING ${header} 32 8 width_hex)  # IHDR's width, big-endian
math(EXPR width "0x${width_hex}")
if(width GREATER 2500)
  message(FATAL_ERROR "the digits CNN's picture is ${width} px wide, more than 2500")
endif()
message(STATUS "digits CNN: ${count} boxes, ${width} px wide")

draw(${SRC}/tests/pictures/lstm_unrolled.nn lstm16.dot 16)
file(READ ${OUT}/lstm16.dot text)
if(NOT text MATCHES "label=\"_lstm_step ×16\\\\n")
  message(FATAL_ERROR "the LSTM's 16 steps are not one series box")
endif()
