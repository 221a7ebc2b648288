// blas() (backend/blas.h). NN_OPENBLAS_SONAME is the library's soname, as
// the build found it (backend/CMakeLists.txt).
#include "backend/blas.h"

#include <dlfcn.h>

#include <string>

#include "backend/error.h"

namespace nn::backend {

const Blas& blas() {
  static const Blas b = [] {
    void* lib = dlopen(NN_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      throw Error(std::string("OpenBLAS could not be loaded: ") + (why ? why : NN_OPENBLAS_SONAME));
    }
    auto find = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn) throw Error(std::string("OpenBLAS (" NN_OPENBLAS_SONAME ") has no function ") + name);
    };
    Blas found{};
    decltype(&openblas_set_num_threads) set_num_threads = nullptr;
    find(found.sgemm, "cblas_sgemm");
    find(found.dgemm, "cblas_dgemm");
    find(set_num_threads, "openblas_set_num_threads");
    set_num_threads(1);
    return found;
  }();
  return b;
}

}  // namespace nn::backend
