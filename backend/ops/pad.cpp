// pad(x, widths, value) (SPEC §13): x with `before` and `after` elements of
// `value` around each axis that widths names, from the first axis. A
// composite of concat, so its gradient is concat's (the middle of g) and
// graph mode records the concat.
#include <string>
#include <vector>

#include "backend/ops.h"

namespace nn::backend {

Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& widths, double value) {
  if (int(widths.size()) > x.ndim())
    throw Error("pad: " + std::to_string(widths.size()) + " (before, after) pairs for the " +
                std::to_string(x.ndim()) + " axes of " + x.type().str());
  Tensor y = x;
  for (size_t d = 0; d < widths.size(); ++d) {
    const auto [before, after] = widths[d];
    if (before < 0 || after < 0)
      throw Error("pad: negative width (" + std::to_string(before) + ", " + std::to_string(after) + ") for axis " +
                  std::to_string(d));
    if (before == 0 && after == 0) continue;
    int64_t length = 0;
    if (__builtin_add_overflow(y.shape()[int(d)], before, &length) || __builtin_add_overflow(length, after, &length))
      throw Error("pad: widths (" + std::to_string(before) + ", " + std::to_string(after) + ") make axis " +
                  std::to_string(d) + " of " + y.type().str() + " longer than 2^63 - 1");
    std::vector<Tensor> parts;
    for (int64_t w : {before, int64_t(-1), after}) {
      if (w == -1) {
        parts.push_back(y);
      } else if (w > 0) {
        Shape s = y.shape();
        s[int(d)] = w;
        parts.push_back(to_device(full(s, value, y.dtype()), y.device()));
      }
    }
    y = concat(parts, int64_t(d));
  }
  return y;
}

}  // namespace nn::backend
