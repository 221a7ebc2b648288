// Writing dot text as a picture, in process through Graphviz's libraries
// (libgvc for layout and rendering, libcgraph for parsing): no `dot`
// subprocess, so a picture works wherever the program runs.
#pragma once
#include <cstddef>
#include <string>

namespace nn::ir {

// Writes `dot_text` to `path` by its extension: .dot as is; .svg, .png, .pdf
// laid out with Graphviz's dot engine and rendered; when the layout of its
// clusters fails, drawn with the outermost clusters only, then with none,
// with a title that says so. Throws backend::Error for another extension, a
// path that cannot be written, or text Graphviz cannot read or lay out.
void render_dot(const std::string& dot_text, const std::string& path);

// The bytes of `dot_text` rendered as `format` (svg, png, pdf), with the same
// fallback; `what` names the picture in errors ("the picture of `g.svg`").
std::string render_dot_as(const std::string& dot_text, const std::string& format, const std::string& what);

// `dot` with the clusters nested deeper than `depth` (0: all of them) made
// plain subgraphs, which draw no box and constrain no ranking.
std::string clusters_within(const std::string& dot, int depth);

// A file's extension in lower case ("svg"), or "" when it has none.
std::string extension_of(const std::string& path);
// Writes `bytes` to `path`; throws backend::Error saying why it cannot.
void write_file(const std::string& path, const std::string& bytes);

struct DotCounts {
  size_t nodes = 0, edges = 0;
};
// Parses `dot_text` with libcgraph and counts its nodes and edges, those
// inside subgraphs included; throws backend::Error when it does not parse.
DotCounts parse_dot_counts(const std::string& dot_text);

}  // namespace nn::ir
