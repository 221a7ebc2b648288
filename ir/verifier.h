// The IR verifier: checks the invariants every pass may assume and must keep
// (valid order, one writer per value, output types as the type rules give
// them, sound state updates), so a broken pass is caught where it breaks the
// graph instead of as a wrong number or a crash in the executor.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace nn::ir {

// Every problem found, one sentence each, in a fixed order (nodes in order,
// then values, inputs, updates, outputs); empty when the graph is sound.
// Linear in the size of the graph plus one type rule call per op node.
std::vector<std::string> verify(const Graph& g);

// Throws backend::Error "internal: IR of graph NAME is invalid: <first
// problem> (and N more)" when verify finds anything.
void check(const Graph& g);

}  // namespace nn::ir
