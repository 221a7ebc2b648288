// Habits people bring from PyTorch and NumPy: names nn does not have, with
// what nn calls the thing. Unknown names and unknown tensor methods look
// here before guessing a typo (SPEC §17).
#pragma once
#include <string>
#include <string_view>

namespace nn::frontend {

// "help: ..." text for a name nn does not know, or "".
std::string habit_hint(std::string_view name);

}  // namespace nn::frontend
