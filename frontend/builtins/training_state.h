// The tensors of a value as state() names them (SPEC §17), shared by state,
// load_state and save so that a checkpoint's names are state()'s names.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "backend/tensor.h"
#include "frontend/builtins/safetensors_format.h"
#include "frontend/value.h"

namespace nn::frontend::builtins {

// Every tensor inside v (records' fields, lists' and tuples' items, nested;
// functions skipped), depth first in field order, under its dotted path
// ("layers.0.w", "opt.m.3"). A tensor reached twice (a param in a model and
// in its optimizer's `params`) is listed once, under the first path.
std::vector<std::pair<std::string, backend::Tensor>> state_entries(const Value& v);

// Every leaf of a checkpoint file read already (tensors and host values: an
// epoch count, a best loss) under its dotted name, as load() gives them
// (files.cpp); `path` names the file in errors.
std::vector<std::pair<std::string, Value>> checkpoint_leaves(const std::string& path, safetensors::Contents& c);

}  // namespace nn::frontend::builtins
