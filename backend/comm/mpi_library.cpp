// mpi_library() (backend/comm/mpi_library.h). NN_MPI_SONAME is libmpi's
// soname, as the build found it (backend/CMakeLists.txt).
#define NN_MPI_TABLE_ONLY
#include "backend/comm/mpi_library.h"

#include <dlfcn.h>

#include "backend/error.h"

namespace nn::backend::comm {

const MpiLibrary& mpi_library() {
  static const MpiLibrary opened = [] {
    MpiLibrary table{};
    // Global: the components Open MPI opens itself take its symbols.
    SharedLibrary library(NN_MPI_SONAME, RTLD_GLOBAL);
    NN_MPI_SYMBOLS(NN_LIBRARY_FIND)
    if (!library.error().empty()) throw Error("MPI: " + library.error());
    return table;
  }();
  return opened;
}

}  // namespace nn::backend::comm
