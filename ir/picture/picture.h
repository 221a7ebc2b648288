// Writing a picture of a graph to a file, by the file's extension: .dot (the
// dot text), .svg, .png, .pdf (laid out and rendered by Graphviz) or .html
// (the interactive page). The one entry point of nn dot, dot() and :dot.
#pragma once
#include <string>

#include "ir/picture/drawing.h"

namespace nn::ir {

// Whether `path` ends in .dot, .svg, .png, .pdf or .html (in any case).
bool is_picture_path(const std::string& path);

// Draws g at opt (the overview at its collapse; the page holds every view).
// Throws backend::Error for another extension, a path that cannot be
// written, or a picture Graphviz cannot lay out.
void draw_picture(const Graph& g, const DrawOptions& opt, const std::string& path);

// The most boxes a static picture draws (.svg .png .pdf; .dot text is
// always written).
inline constexpr size_t kMaxLayoutBoxes = 200;

// The usage line for a wrong extension.
inline constexpr const char* kPictureExtensions = ".dot, .svg, .png, .pdf or .html";

}  // namespace nn::ir
