// Graphviz (libgvc, with libcgraph), opened on first use
// (backend/shared_library.h): loading it cost every run some 1.5 ms and 60
// page faults, runs that draw no picture included. dot_render.cpp includes
// this in place of Graphviz's headers: each function it calls reads the
// table below.
#pragma once
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "backend/shared_library.h"

#define NN_GRAPHVIZ_SYMBOLS(S)                                                                                 \
  S(agclose)                                                                                                   \
  S(agmemread)                                                                                                 \
  S(agnedges)                                                                                                  \
  S(agnnodes)                                                                                                  \
  S(agseterrf)                                                                                                 \
  S(gvContext)                                                                                                 \
  S(gvFreeLayout)                                                                                              \
  S(gvFreeRenderData)                                                                                          \
  S(gvLayout)                                                                                                  \
  S(gvRenderData)

namespace nn::ir {

struct GraphvizLibrary {
  NN_GRAPHVIZ_SYMBOLS(NN_LIBRARY_FIELD)
};

// The library, opened once (thread-safe); throws Error where it cannot be.
const GraphvizLibrary& graphviz_library();

}  // namespace nn::ir

// graphviz_library.cpp, which fills the table, names the functions themselves.
#ifndef NN_GRAPHVIZ_TABLE_ONLY
#define NN_GRAPHVIZ_CALL(f) (::nn::ir::graphviz_library().f)
#define agclose NN_GRAPHVIZ_CALL(agclose)
#define agmemread NN_GRAPHVIZ_CALL(agmemread)
#define agnedges NN_GRAPHVIZ_CALL(agnedges)
#define agnnodes NN_GRAPHVIZ_CALL(agnnodes)
#define agseterrf NN_GRAPHVIZ_CALL(agseterrf)
#define gvContext NN_GRAPHVIZ_CALL(gvContext)
#define gvFreeLayout NN_GRAPHVIZ_CALL(gvFreeLayout)
#define gvFreeRenderData NN_GRAPHVIZ_CALL(gvFreeRenderData)
#define gvLayout NN_GRAPHVIZ_CALL(gvLayout)
#define gvRenderData NN_GRAPHVIZ_CALL(gvRenderData)
#endif
