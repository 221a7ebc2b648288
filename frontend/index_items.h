// Turning index expressions into backend index items, and host list indexing.
#pragma once
#include <vector>

#include "backend/ops.h"
#include "frontend/ast.h"
#include "frontend/environment.h"

namespace nn::frontend {
class Interpreter;

std::vector<backend::IndexItem> eval_index_items(Interpreter& vm, const IndexExpr& e, const EnvPtr& env);
// A host index into a sequence of `size`; negative counts from the end; out of range is an error.
int64_t list_index(const Value& index, int64_t size, Span span);

}  // namespace nn::frontend
