// Pictures of compiled graphs, for dot(g, path), nn dot and the REPL's :dot:
// the graph as traced or as it runs, its memory plan, and the script's names
// of the params, state and constants it captured, written by the file's
// extension (ir/picture/picture.h).
#pragma once
#include <string>

#include "ir/picture/drawing.h"

namespace nn::ir {
struct CompiledGraph;
}

namespace nn::frontend {

class Interpreter;

struct PictureRequest {
  bool raw = false;     // the graph as traced, before the passes
  bool memory = false;  // fill by the memory plan's blocks (the .html page always has both colourings)
  int collapse = ir::kAutoCollapse;
};

// Throws backend::Error when the file cannot be written or laid out.
void draw_graph(const Interpreter& vm, const ir::CompiledGraph& cg, const PictureRequest& request,
                const std::string& path);

}  // namespace nn::frontend
