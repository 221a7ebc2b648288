// Shared libraries nn opens with dlopen the first time a run needs them,
// rather than mapping them at every start: OpenBLAS (backend/blas.h),
// oneDNN (backend/onednn_library.h), Open MPI (backend/comm/mpi_library.h),
// Graphviz (ir/picture/graphviz_library.h) and libedit
// (repl/libedit_library.h). Linked, loading them was about half the
// start-up time of every run, `nn -e 'print(1)'` included.
//
// Each library has a list of the names nn uses (a macro taking a macro,
// NN_<LIB>_SYMBOLS(S)), a table with one typed field per name
// (NN_LIBRARY_FIELD: the type comes from the library's own header), and a
// function that opens the library once and fills the table
// (NN_LIBRARY_FIND). Where code is written against the library's header,
// the header of the table then defines each name as a macro reading the
// table, so that code stays as it was; nn links none of these libraries,
// so a name missing from a list fails the build as an undefined reference.
#pragma once
#include <string>

#include "backend/error.h"

#define NN_LIBRARY_FIELD(name) decltype(&::name) name;
// Inside a function that has a `table` and a SharedLibrary `library`.
#define NN_LIBRARY_FIND(name) library.find(table.name, #name);

namespace nn::backend {

class SharedLibrary {
 public:
  // dlopen(soname, RTLD_NOW | flags); flags is RTLD_LOCAL or RTLD_GLOBAL.
  SharedLibrary(const char* soname, int flags);
  template <class T>
  void find(T*& field, const char* name) {
    field = reinterpret_cast<T*>(symbol(name));
  }
  // "" while the library opened and every name was found; else why not,
  // naming the library.
  const std::string& error() const { return error_; }

  // The table `fill(table, library)` makes from the library `soname`;
  // throws Error("<what>: <why not>") where it cannot be opened or a name
  // is missing.
  template <class Table, class Fill>
  static Table table(const char* soname, int flags, const char* what, Fill fill) {
    Table t{};
    SharedLibrary library(soname, flags);
    fill(t, library);
    if (!library.error().empty()) throw Error(std::string(what) + ": " + library.error());
    return t;
  }

 private:
  void* symbol(const char* name);

  std::string soname_;
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace nn::backend
