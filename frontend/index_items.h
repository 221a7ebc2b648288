// Turning index expressions into backend index items, and host list indexing.
#pragma once
#include <vector>

#include "backend/ops.h"
#include "frontend/ast.h"
#include "frontend/environment.h"

namespace nn::frontend {
class Interpreter;

// One item of an index, evaluated: an int or a slice, `none` (a new axis of
// size 1) or an integer tensor (NumPy's advanced indexing).
struct IndexArg {
  enum Kind { basic, new_axis, tensor } kind = basic;
  backend::IndexItem item;  // kind == basic
  backend::Tensor ids;      // kind == tensor
  Span span;
};
std::vector<IndexArg> eval_index_args(Interpreter& vm, const IndexExpr& e, const EnvPtr& env);
// Ints and slices only (an assignment's target): anything else is an error.
std::vector<backend::IndexItem> eval_index_items(Interpreter& vm, const IndexExpr& e, const EnvPtr& env);
// x[args] (frontend/tensor_index.cpp).
backend::Tensor index_tensor(const backend::Tensor& x, const std::vector<IndexArg>& args);
// A host index into a sequence of `size`; negative counts from the end; out of range is an error.
int64_t list_index(const Value& index, int64_t size, Span span);

}  // namespace nn::frontend
