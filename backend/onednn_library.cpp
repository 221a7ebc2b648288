// onednn_library() (backend/onednn_library.h). NN_ONEDNN_SONAME is the
// library's soname, as the build found it (backend/CMakeLists.txt).
#define NN_ONEDNN_TABLE_ONLY
#include "backend/onednn_library.h"

#include <dlfcn.h>

#include <cstdio>

namespace nn::backend {

const OnednnLibrary* onednn_library() {
  static const OnednnLibrary* library = []() -> const OnednnLibrary* {
    static OnednnLibrary table{};
    void* lib = dlopen(NN_ONEDNN_SONAME, RTLD_NOW | RTLD_LOCAL);
    const char* missing = nullptr;
#define NN_ONEDNN_FIND(f)                                                  \
  table.f = lib ? reinterpret_cast<decltype(&::f)>(dlsym(lib, #f)) : nullptr; \
  if (lib && !table.f && !missing) missing = #f;
    NN_ONEDNN_FUNCTIONS(NN_ONEDNN_FIND)
#undef NN_ONEDNN_FIND
    if (lib && !missing) return &table;
    const char* why = lib ? missing : dlerror();
    std::fprintf(stderr, "nn: oneDNN (%s) could not be loaded (%s%s); convolutions and f32 products use the OpenBLAS paths\n",
                 NN_ONEDNN_SONAME, lib ? "it has no function " : "", why ? why : "unknown error");
    return nullptr;
  }();
  return library;
}

}  // namespace nn::backend
