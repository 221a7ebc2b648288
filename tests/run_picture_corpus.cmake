# One model of the picture corpus: draws the graph of SCRIPT (run with ARGS;
# when CALL names a bench model, a driver calling its train_step), raw and
# optimized: at the default collapse in every format in FORMATS, phase and
# memory colours; at every depth in DEPTHS as .svg. Each picture must be
# written with exit 0, or, at an explicit depth, be refused as too big to lay
# out with that diagnostic (exit 1): never a crash or a sanitizer report.
#   cmake -DNN=... -DSCRIPT=... [-DCALL=model] [-DARGS=a;b] -DOUT=dir
#         -DDEPTHS=-1;0;1 -DFORMATS=svg;html -P run_picture_corpus.cmake
file(MAKE_DIRECTORY ${OUT})
if(CALL)
  set(SCRIPT ${OUT}/drive.nn)
  file(WRITE ${SCRIPT} "import \"${CALL}\" as m\nlet loss = m.train_step(m.xs[0], m.ys[0])\n")
endif()

function(draw name)
  execute_process(COMMAND ${NN} dot ${SCRIPT} ${ARGS} ${ARGN} -o ${OUT}/${name}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(err MATCHES "Sanitizer|runtime error" OR NOT (rc EQUAL 0 OR
     (rc EQUAL 1 AND err MATCHES "more than Graphviz lays out in reasonable time" AND NOT ARGN MATCHES "auto")))
    message(FATAL_ERROR "nn dot ${ARGN} -o ${name}: exit ${rc}\n${out}${err}")
  endif()
  if(rc EQUAL 0)
    file(SIZE ${OUT}/${name} size)
    if(size EQUAL 0)
      message(FATAL_ERROR "${name} is empty")
    endif()
  endif()
endfunction()

foreach(raw "" "--raw")
  foreach(color phase memory)
    foreach(format ${FORMATS})
      draw(auto${raw}_${color}.${format} ${raw} --color ${color} --collapse auto)
    endforeach()
  endforeach()
  foreach(depth ${DEPTHS})
    draw(depth${raw}_${depth}.svg ${raw} --collapse ${depth})
  endforeach()
endforeach()
