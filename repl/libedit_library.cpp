// libedit_library() (repl/libedit_library.h). NN_LIBEDIT_SONAME is
// libedit's soname, as the build found it (repl/CMakeLists.txt).
#define NN_LIBEDIT_TABLE_ONLY
#include "repl/libedit_library.h"

#include <dlfcn.h>

#include "backend/error.h"

namespace nn::repl {

const LibeditLibrary& libedit_library() {
  static const LibeditLibrary opened = [] {
    LibeditLibrary table{};
    backend::SharedLibrary library(NN_LIBEDIT_SONAME, RTLD_LOCAL);
    NN_LIBEDIT_SYMBOLS(NN_LIBRARY_FIND)
    if (!library.error().empty()) throw backend::Error("the REPL's line editor: " + library.error());
    return table;
  }();
  return opened;
}

}  // namespace nn::repl
