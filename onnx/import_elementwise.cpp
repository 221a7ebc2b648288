// Import entries of the elementwise ops (import_table.h): ONNX's
// broadcasting is NumPy's, as nn's.
#include "backend/ops.h"
#include "onnx/import_table.h"

namespace nn::onnx_io {
namespace {

using backend::Tensor;
using Outs = std::vector<Tensor>;

template <Tensor (*F)(const Tensor&, const Tensor&)>
Outs binary(const NodeContext& n) {
  return {F(n.input(0), n.input(1))};
}
template <Tensor (*F)(const Tensor&)>
Outs unary(const NodeContext& n) {
  return {F(n.input(0))};
}

const ImportEntry entries[] = {
    {"Add", binary<backend::add>},
    {"Sub", binary<backend::sub>},
    {"Mul", binary<backend::mul>},
    {"Div", binary<backend::div>},
    {"Relu", unary<backend::relu>},
    {"MatMul", binary<backend::matmul>},
};

}  // namespace

std::span<const ImportEntry> elementwise_imports() { return entries; }

}  // namespace nn::onnx_io
