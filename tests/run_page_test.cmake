# The interactive page of an LSTM unrolled 16 steps, opened offline in
# headless Chromium by tests/page/page_test.mjs: no console error, the series
# box opens on its 16 steps, search marks matmul, a screenshot is taken.
#   cmake -DNN=... -DNODE=node -DSRC=<source dir> -DOUT=dir -P run_page_test.cmake
file(MAKE_DIRECTORY ${OUT})
if(NOT EXISTS ${SRC}/tests/page/node_modules/puppeteer-core)
  message(FATAL_ERROR "puppeteer-core is missing: run `npm ci --prefix tests/page` (tools/setup.sh does)")
endif()
execute_process(COMMAND ${NN} dot ${SRC}/tests/pictures/lstm_unrolled.nn 16 -o ${OUT}/lstm16.html
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nn dot: exit ${rc}\n${err}")
endif()
execute_process(COMMAND ${NODE} ${SRC}/tests/page/page_test.mjs --page ${OUT}/lstm16.html --series _lstm_step
                        --op matmul --steps 16 --screenshot ${OUT}/lstm16.png
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "page test: exit ${rc}\n${out}${err}")
endif()
