# nn_soname(<var> <library>): the soname of a shared library file, read with
# objdump. Libraries nn opens with dlopen on first use (OpenBLAS, oneDNN)
# are opened by the soname the build found, as the linker would record it.
function(nn_soname var library)
  get_filename_component(file ${library} REALPATH)
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${file} OUTPUT_VARIABLE headers)
  string(REGEX MATCH "SONAME +([^ \n]+)" match "${headers}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "${file} has no soname")
  endif()
  set(${var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()
