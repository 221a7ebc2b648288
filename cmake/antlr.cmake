# Generates the C++ parser from grammar/NN.g4 into the build tree at build time.
# Generated code is never committed.
set(NN_GRAMMAR ${PROJECT_SOURCE_DIR}/grammar/NN.g4)
set(NN_PARSER_DIR ${PROJECT_BINARY_DIR}/generated/grammar)
set(NN_PARSER_SOURCES
  ${NN_PARSER_DIR}/NNLexer.cpp ${NN_PARSER_DIR}/NNParser.cpp
  ${NN_PARSER_DIR}/NNVisitor.cpp ${NN_PARSER_DIR}/NNBaseVisitor.cpp)
add_custom_command(
  OUTPUT ${NN_PARSER_SOURCES}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${NN_PARSER_DIR}
  COMMAND ${ANTLR4_TOOL} -Dlanguage=Cpp -visitor -no-listener -package nn::grammar
          -o ${NN_PARSER_DIR} -Xexact-output-dir ${NN_GRAMMAR}
  DEPENDS ${NN_GRAMMAR}
  COMMENT "Generating the nn parser with ANTLR")
add_library(nn_grammar STATIC ${NN_PARSER_SOURCES})
target_include_directories(nn_grammar SYSTEM PUBLIC ${NN_PARSER_DIR} ${ANTLR4_INCLUDE_DIR})
target_link_libraries(nn_grammar PUBLIC antlr4_static)
# Generated code is not ours to keep warning-free.
# ANTLR 4.7 writes u8"" literals into std::string, which C++20 char8_t rejects.
target_compile_options(nn_grammar PRIVATE -w -fno-char8_t)
set_target_properties(nn_grammar PROPERTIES POSITION_INDEPENDENT_CODE ON)
