// The IR text printer: the text form of a graph that `nn ir` shows and the
// tests compare against, one node a line (DESIGN.md "The IR"):
//
//   graph step(%0 x: f32[2, 3]) {
//     param %1 w: f32[3, 4]
//     # forward
//     %2 = matmul %0, %1 : f32[2, 4]                     # t.nn:4:1
//     print %2
//     %5 <- %4
//     return %2
//   }
#pragma once
#include <string>

#include "ir/graph.h"

namespace nn::ir {

// The whole graph as text, ending with a newline. Deterministic and linear in
// the size of the graph; never throws on a malformed graph (ids out of range
// print as such), so it can show what the verifier complains about.
std::string print_ir(const Graph& g);

}  // namespace nn::ir
