// libedit_library() (repl/libedit_library.h). NN_LIBEDIT_SONAME is
// libedit's soname, as the build found it (repl/CMakeLists.txt).
#define NN_LIBEDIT_TABLE_ONLY
#include "repl/libedit_library.h"

#include <dlfcn.h>

namespace nn::repl {

const LibeditLibrary& libedit_library() {
  static const LibeditLibrary opened = backend::SharedLibrary::table<LibeditLibrary>(
      NN_LIBEDIT_SONAME, RTLD_LOCAL, "the REPL's line editor",
      [](LibeditLibrary& table, backend::SharedLibrary& library) { NN_LIBEDIT_SYMBOLS(NN_LIBRARY_FIND) });
  return opened;
}

}  // namespace nn::repl
