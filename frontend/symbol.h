// Interned names: a Symbol is a small integer standing for a name, so scope
// lookups compare integers instead of strings.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace nn::frontend {

using Symbol = uint32_t;  // 0 is "no symbol"

Symbol intern(std::string_view name);
const std::string& symbol_name(Symbol s);

}  // namespace nn::frontend
