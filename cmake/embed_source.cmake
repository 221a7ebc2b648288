# cmake -DIN=FILE -DOUT=FILE.cpp -DNAME=kName -P embed_source.cmake: writes
# OUT, a C++ file defining nn::backend::cuda::NAME as the text of IN (a
# part of the prelude NVRTC compiles the GPU's fused kernels with).
file(READ ${IN} text)
file(WRITE ${OUT} "// Generated from ${IN} at build time.\nnamespace nn::backend::cuda {\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"nn_src(${text})nn_src\";\n}  // namespace nn::backend::cuda\n")
