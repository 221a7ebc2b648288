// mpi_library() (backend/comm/mpi_library.h). NN_MPI_SONAME is libmpi's
// soname, as the build found it (backend/CMakeLists.txt).
#define NN_MPI_TABLE_ONLY
#include "backend/comm/mpi_library.h"

#include <dlfcn.h>

namespace nn::backend::comm {

const MpiLibrary& mpi_library() {
  // Global: the components Open MPI opens itself take its symbols.
  static const MpiLibrary opened = SharedLibrary::table<MpiLibrary>(
      NN_MPI_SONAME, RTLD_GLOBAL, "MPI", [](MpiLibrary& table, SharedLibrary& library) { NN_MPI_SYMBOLS(NN_LIBRARY_FIND) });
  return opened;
}

}  // namespace nn::backend::comm
