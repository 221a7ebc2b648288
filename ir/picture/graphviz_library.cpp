// graphviz_library() (ir/picture/graphviz_library.h). NN_GRAPHVIZ_SONAME is
// libgvc's soname, as the build found it (ir/CMakeLists.txt); libcgraph's
// functions are found through it, as one of its own libraries.
#define NN_GRAPHVIZ_TABLE_ONLY
#include "ir/picture/graphviz_library.h"

#include <dlfcn.h>

namespace nn::ir {

const GraphvizLibrary& graphviz_library() {
  static const GraphvizLibrary opened = backend::SharedLibrary::table<GraphvizLibrary>(
      NN_GRAPHVIZ_SONAME, RTLD_LOCAL, "dot: Graphviz",
      [](GraphvizLibrary& table, backend::SharedLibrary& library) { NN_GRAPHVIZ_SYMBOLS(NN_LIBRARY_FIND) });
  return opened;
}

}  // namespace nn::ir
