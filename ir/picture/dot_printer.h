// The Graphviz dot text of one view of a graph (drawing.h): its ops, the
// boxes of the calls it folds, its clusters, value nodes, edges and legend.
// ir/picture/dot_render.h turns the text into .svg / .png / .pdf files and
// ir/picture/html_page.h into the interactive page.
#pragma once
#include <string>

#include "ir/picture/drawing.h"

namespace nn::ir {

// The dot text of view `v` of `d`; deterministic, linear in what it draws.
// `page`: for the interactive page, each node carries id and class (op,
// value, group, series) and no tooltip (the page shows its own).
//
// What a reader (and a test) can count on:
//  - Graphviz nodes: `n<id>` per IR node drawn, `v<id>` per value drawn as a
//    node (inputs, big constants, values made outside the view's group),
//    `g<k>` per folded group, and one `legend`.
//  - params, state and constants of at most 4 elements are never nodes: the
//    labels of the ops reading them name them (`param model.fc.w`) or give
//    their value (`mul ×0.9`, `where (·, ·, 0)`).
//  - edges: one per (drawn tail, drawn head) pair; parallel ones merge (the
//    thicker the more they stand for). An edge is labelled with its shape
//    where the shape changes: out of a box, or out of an op whose first input
//    has another shape.
//  - ops are rounded boxes filled by phase; nodes producing a graph output
//    double octagons; host calls (print) notes; collectives arrows (cds);
//    inputs inverted houses; constants hexagons; folded calls and series
//    3-d boxes ("_lstm_step ×16", with a count of steps and nodes).
std::string print_dot(const Drawing& d, const View& v, bool page = false);

// The whole graph at opt.collapse.
std::string print_dot(const Graph& g, const DrawOptions& opt = {});

}  // namespace nn::ir
