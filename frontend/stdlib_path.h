// Where the stdlib lives: the one place that decides it.
#pragma once
#include <string>

namespace nn::frontend {

// The stdlib folder: $NN_STDLIB when set; else <prefix>/share/nn/stdlib next
// to the installed library or program this code is part of (found from the
// binary's own path, so an installed tree can be moved); else the source
// tree's stdlib/ (NN_STDLIB_DIR, for builds that are not installed).
std::string stdlib_dir();

}  // namespace nn::frontend
