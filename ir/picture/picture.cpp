// Writing a picture of a graph by its file's extension (see picture.h).
#include "ir/picture/picture.h"

#include "backend/error.h"
#include "ir/picture/dot_printer.h"
#include "ir/picture/dot_render.h"
#include "ir/picture/html_page.h"

namespace nn::ir {

bool is_picture_path(const std::string& path) {
  const std::string ext = extension_of(path);
  return ext == "dot" || ext == "svg" || ext == "png" || ext == "pdf" || ext == "html";
}

void draw_picture(const Graph& g, const DrawOptions& opt, const std::string& path) {
  if (!is_picture_path(path))
    throw backend::Error("dot: cannot write `" + path + "`: the picture's extension must be " + kPictureExtensions);
  const Drawing d(g, opt);
  if (extension_of(path) == "html") return write_file(path, html_page(d));
  const View v = d.view(0);
  if (extension_of(path) == "dot") return render_dot(print_dot(d, v), path);
  // Graphviz's layout grows much faster than the picture (a ResNet-50 step
  // drawn with 441 boxes takes minutes): refuse rather than seem to hang.
  if (v.drawn() > kMaxLayoutBoxes)
    throw backend::Error("dot: the picture of `" + path + "` would draw " + std::to_string(v.drawn()) +
                         " boxes, more than Graphviz lays out in reasonable time (" + std::to_string(kMaxLayoutBoxes) +
                         "); fold more calls (a smaller collapse), or write .html to open them one at a time");
  render_dot(print_dot(d, v), path);
}

}  // namespace nn::ir
