// Pictures of compiled graphs (see graph_picture.h).
#include "frontend/graph_picture.h"

#include "frontend/interpreter.h"
#include "ir/picture/dot_render.h"
#include "ir/picture/picture.h"

namespace nn::frontend {

void draw_graph(const Interpreter& vm, const ir::CompiledGraph& cg, const PictureRequest& request,
                const std::string& path) {
  const ir::Graph& g = request.raw ? cg.raw : cg.graph;
  ir::DrawOptions opt;
  opt.raw = request.raw;
  opt.collapse = request.collapse;
  if (!request.raw) opt.traced = &cg.raw;
  if (request.memory || ir::extension_of(path) == "html") {
    // The raw graph never runs: its picture shows the plan it would get.
    const ir::Plan plan = request.raw ? ir::make_plan(g, vm.options().schedule, vm.options().memory) : cg.plan;
    opt.block_of_value = plan.block_of_value;
    opt.readers = plan.readers;
  }
  std::vector<backend::Tensor> captured(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].role != ir::Role::intermediate && g.values[v].role != ir::Role::input)
      captured[v] = g.values[v].captured;
  opt.names = vm.user_names(captured);
  ir::draw_picture(g, opt, path);
}

}  // namespace nn::frontend
