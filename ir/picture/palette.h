// The colours of graph pictures, shared by the dot text and the page.
#pragma once
#include "ir/graph.h"

namespace nn::ir::palette {

// Fill colours by phase (forward, backward, optimizer), and stronger tones of
// the same hues for borders when the fill shows memory blocks instead.
inline const char* phase_fill(Phase p) {
  static constexpr const char* fill[3] = {"#cfe2f3", "#f9cb9c", "#b6d7a8"};
  return fill[int(p) < 3 ? int(p) : 0];
}
inline const char* phase_line(Phase p) {
  static constexpr const char* line[3] = {"#3d85c6", "#b45f06", "#38761d"};
  return line[int(p) < 3 ? int(p) : 0];
}
// Memory picture: ColorBrewer's Set3, distinct pastels that keep text
// legible, taken in turn by block id; white for no block.
inline const char* block_fill(uint32_t block) {
  static constexpr const char* fill[12] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                           "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  return block == kNone ? "#ffffff" : fill[block % 12];
}
// Collectives (SPEC §14) have a colour of their own, whatever their phase.
inline constexpr const char* kCollective = "#d9c3f0";
inline constexpr const char* kValue = "#f3f3f3";

}  // namespace nn::ir::palette
