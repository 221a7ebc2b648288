// An elementwise op with two outputs for the ir tests, registered on first
// use: sum_diff(a, b) = (a + b, a - b) on f32 tensors of one shape. Like
// every elementwise kernel it reads element i of both inputs before writing
// element i of either output, so either output may overwrite either input.
#pragma once
#include <span>

#include "backend/error.h"
#include "backend/op_registry.h"

namespace nntest {

inline const nn::backend::OpDef& sum_diff_op() {
  using namespace nn::backend;
  static const OpDef& def = Registry::get().add(OpDef{
      .name = "test_sum_diff",
      .num_inputs = 2,
      .type_rule = [](std::span<const TensorType> in, const Attrs&) -> OutTypes {
        if (in[0].shape != in[1].shape || in[0].dtype != DType::f32 || in[1].dtype != DType::f32)
          throw Error("test_sum_diff: two f32 tensors of one shape");
        return {in[0], in[0]};
      },
      .cpu = [](std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
        const float *a = in[0].data<float>(), *b = in[1].data<float>();
        float *s = out[0].data<float>(), *d = out[1].data<float>();
        for (int64_t i = 0; i < out[0].numel(); ++i) {
          const float x = a[i], y = b[i];
          s[i] = x + y;
          d[i] = x - y;
        }
      },
      .elementwise = true});
  return def;
}

}  // namespace nntest
