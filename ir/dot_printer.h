// The Graphviz picture of a graph: print_dot writes the dot text (one
// Graphviz node per IR node and per input / param / state / constant value,
// edges labelled with shapes, clusters per nn function call, a phase legend,
// and optionally the memory plan and the fused groups). ir/dot_render.h turns
// the text into .svg / .png / .pdf files.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace nn::ir {

struct DotOptions {
  bool raw = false;   // only used in the title ("train_step (before optimization)")
  int collapse = -1;  // fold nn function calls (Graph::scopes) deeper than N into one box each; -1 never
  // Memory picture: values with the same block id share a fill colour
  // (kNone: no block); empty: off.
  std::vector<uint32_t> block_of_value;
  std::vector<uint32_t> readers;  // per value reader count shown on the node when the memory picture is on
  // Each drawn as a cluster "fused #k"; when empty, the graph's fused nodes
  // are drawn so, as the ops they merged (ir/fused_expand.h).
  std::vector<std::vector<NodeId>> fused_groups;
};

// The dot text of `g`; deterministic, linear in nodes + edges (times the
// nesting depth of scopes where fused groups cross them).
//
// What a reader (and a test) can count on:
//  - Graphviz nodes: `n<id>` per IR node (unless folded into a box), `v<id>`
//    per value that is not an intermediate, `s<id>` per folded scope box, and
//    one `legend` node when more than one phase (forward, backward,
//    optimizer) is present.
//  - edges: one per (node, input) pair of the IR; with collapse, the edges
//    inside a box are dropped and parallel ones merged.
//  - ops are rounded boxes filled by phase; nodes producing a graph output are
//    double octagons; host calls (print) notes; inputs inverted houses; params
//    boxes with two borders; state cylinders; constants hexagons; folded
//    scopes 3-d boxes.
std::string print_dot(const Graph& g, const DotOptions& opt = {});

}  // namespace nn::ir
