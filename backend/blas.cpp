// blas() (backend/blas.h). NN_OPENBLAS_SONAME is the library's soname, as
// the build found it (backend/CMakeLists.txt).
#include "backend/blas.h"

#include <dlfcn.h>

#include <cstdio>

#include "backend/shared_library.h"

namespace nn::backend {

const Blas* blas() {
  static const Blas* opened = []() -> const Blas* {
    static Blas table{};
    decltype(&openblas_set_num_threads) set_num_threads = nullptr;
    SharedLibrary library(NN_OPENBLAS_SONAME, RTLD_LOCAL);
    library.find(table.sgemm, "cblas_sgemm");
    library.find(table.dgemm, "cblas_dgemm");
    library.find(set_num_threads, "openblas_set_num_threads");
    if (!library.error().empty()) {
      std::fprintf(stderr, "nn: %s; products run on nn's own (slow) loops\n", library.error().c_str());
      return nullptr;
    }
    set_num_threads(1);
    return &table;
  }();
  return opened;
}

}  // namespace nn::backend
