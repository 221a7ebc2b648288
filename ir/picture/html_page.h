// The interactive page of a graph (`nn dot model.nn -o graph.html`): one
// self-contained HTML file holding the overview and, for every box drawn in
// any view, the drawing of its inside (drill-down, as TensorBoard does), all
// laid out here by Graphviz so that the browser never lays out a graph; a
// table of what each drawn node is (op, types, bytes, memory block, script
// line); and the page's own script and styles (page.js, page.css, compiled
// in), which open and fold boxes, search, switch to the memory colours and
// pan and zoom. Nothing is fetched when the page opens.
#pragma once
#include <string>

#include "ir/picture/drawing.h"

namespace nn::ir {

// The page's HTML text; throws backend::Error when a view cannot be laid out.
std::string html_page(const Drawing& d);

// The page's template, styles and script (generated from ir/picture/page.*).
extern const char* const kPageHtml;
extern const char* const kPageCss;
extern const char* const kPageJs;

}  // namespace nn::ir
