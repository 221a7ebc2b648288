// libedit, opened when the REPL starts (backend/shared_library.h): loading
// it (with libtinfo and libbsd) cost every run some 0.5 ms and 25 page
// faults, scripts and `-e` included. repl.cpp includes this in place of
// <histedit.h>: each function it calls reads the table below.
#pragma once
#include <histedit.h>

#include "backend/shared_library.h"

#define NN_LIBEDIT_SYMBOLS(S)                                                                                  \
  S(el_end)                                                                                                    \
  S(el_get)                                                                                                    \
  S(el_gets)                                                                                                   \
  S(el_init)                                                                                                   \
  S(el_insertstr)                                                                                              \
  S(el_line)                                                                                                   \
  S(el_set)                                                                                                    \
  S(el_source)                                                                                                 \
  S(history)                                                                                                   \
  S(history_end)                                                                                               \
  S(history_init)

namespace nn::repl {

struct LibeditLibrary {
  NN_LIBEDIT_SYMBOLS(NN_LIBRARY_FIELD)
};

// The library, opened once; throws backend::Error where it cannot be.
const LibeditLibrary& libedit_library();

}  // namespace nn::repl

// libedit_library.cpp, which fills the table, names the functions themselves.
#ifndef NN_LIBEDIT_TABLE_ONLY
#define NN_LIBEDIT_CALL(f) (::nn::repl::libedit_library().f)
#define el_end NN_LIBEDIT_CALL(el_end)
#define el_get NN_LIBEDIT_CALL(el_get)
#define el_gets NN_LIBEDIT_CALL(el_gets)
#define el_init NN_LIBEDIT_CALL(el_init)
#define el_insertstr NN_LIBEDIT_CALL(el_insertstr)
#define el_line NN_LIBEDIT_CALL(el_line)
#define el_set NN_LIBEDIT_CALL(el_set)
#define el_source NN_LIBEDIT_CALL(el_source)
#define history NN_LIBEDIT_CALL(history)
#define history_end NN_LIBEDIT_CALL(history_end)
#define history_init NN_LIBEDIT_CALL(history_init)
#endif
