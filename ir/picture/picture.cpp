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
  render_dot(print_dot(d, d.view(0)), path);
}

}  // namespace nn::ir
