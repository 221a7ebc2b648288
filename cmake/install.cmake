# Installing nn: the `nn` program, the embedding library (one shared library,
# nn_embed, exported as nn::nn, carrying the frontend, ir, backend and the
# ANTLR runtime inside, linked against OpenMP and fmt; it opens OpenBLAS,
# oneDNN, Open MPI and Graphviz on first use), the CUDA plugin libnn_cuda.so
# where the build has the backend, the ONNX plugin libnn_onnx.so where it
# has ONNX, the public header include/nn/nn.h, the stdlib (with its data/)
# in share/nn/stdlib, and a CMake package so that hosts write
# find_package(nn) and link nn::nn.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The public header is reachable as <nn/nn.h> inside the build too.
target_include_directories(nn_frontend PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
# stdlib_path.cpp finds the installed stdlib from its own binary (dladdr).
target_link_libraries(nn_frontend PUBLIC ${CMAKE_DL_LIBS})

set(NN_EMBED_STUB ${PROJECT_BINARY_DIR}/nn_embed_stub.cpp)
file(GENERATE OUTPUT ${NN_EMBED_STUB}
     CONTENT "// nn_embed: the nn frontend, ir and backend in one shared library (cmake/install.cmake).\n")
add_library(nn_embed SHARED ${NN_EMBED_STUB})
# Whole archive: every object of the frontend (the embedding API among them)
# is in the library, whatever the stub references. The system's static ANTLR
# runtime is not position-independent: the shared one comes first on the
# link line and resolves every ANTLR symbol, so nothing of the archive the
# grammar target names is pulled in.
# (--no-as-needed: the shared runtime is kept although nothing before it
# on the line uses it.)
target_link_libraries(nn_embed PRIVATE antlr4_shared $<LINK_LIBRARY:WHOLE_ARCHIVE,nn_frontend>)
target_link_options(nn_embed PRIVATE LINKER:--no-as-needed)
target_include_directories(nn_embed INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(nn_embed INTERFACE cxx_std_17)
set_target_properties(nn_embed PROPERTIES EXPORT_NAME nn VERSION ${PROJECT_VERSION}
                                          SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
add_library(nn::nn ALIAS nn_embed)

if(TARGET nn)
  install(TARGETS nn RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS nn_embed EXPORT nnTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The CUDA plugin goes beside libnn_embed.so, in <prefix>/<libdir>, where the
# loader looks for it from lib/libnn_embed.so and from bin/nn
# (backend/cuda_plugin_loader.cpp). Not part of nn::nn: it is loaded, not linked.
if(TARGET nn_cuda)
  install(TARGETS nn_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# Likewise the ONNX plugin (onnx/onnx_plugin_loader.cpp).
if(TARGET nn_onnx_plugin)
  install(TARGETS nn_onnx_plugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/include/nn/nn.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nn)
# stdlib_path.cpp looks for <prefix>/share/nn/stdlib beside <prefix>/lib and <prefix>/bin.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/stdlib/ DESTINATION share/nn/stdlib)

set(NN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/nn)
install(EXPORT nnTargets NAMESPACE nn:: DESTINATION ${NN_CMAKE_DIR})
file(WRITE ${PROJECT_BINARY_DIR}/nnConfig.cmake.in [=[
@PACKAGE_INIT@
# nn::nn: the nn embedding library (#include <nn/nn.h>). It carries its own
# dependencies; hosts need nothing else.
include("${CMAKE_CURRENT_LIST_DIR}/nnTargets.cmake")
set(nn_STDLIB_DIR "@PACKAGE_NN_STDLIB_INSTALL_DIR@")
check_required_components(nn)
]=])
set(NN_STDLIB_INSTALL_DIR share/nn/stdlib)
configure_package_config_file(${PROJECT_BINARY_DIR}/nnConfig.cmake.in ${PROJECT_BINARY_DIR}/nnConfig.cmake
                              INSTALL_DESTINATION ${NN_CMAKE_DIR}
                              PATH_VARS NN_STDLIB_INSTALL_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nnConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/nnConfig.cmake ${PROJECT_BINARY_DIR}/nnConfigVersion.cmake
        DESTINATION ${NN_CMAKE_DIR})
