// onednn_library() (backend/onednn_library.h). NN_ONEDNN_SONAME is the
// library's soname, as the build found it (backend/CMakeLists.txt).
#define NN_ONEDNN_TABLE_ONLY
#include "backend/onednn_library.h"

#include <dlfcn.h>

#include <cstdio>

namespace nn::backend {

const OnednnLibrary* onednn_library() {
  static const OnednnLibrary* opened = []() -> const OnednnLibrary* {
    static OnednnLibrary table{};
    SharedLibrary library(NN_ONEDNN_SONAME, RTLD_LOCAL);
    NN_ONEDNN_SYMBOLS(NN_LIBRARY_FIND)
    if (library.error().empty()) return &table;
    std::fprintf(stderr, "nn: %s; convolutions and f32 products run without oneDNN\n", library.error().c_str());
    return nullptr;
  }();
  return opened;
}

}  // namespace nn::backend
