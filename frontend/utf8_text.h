// Characters of a string (SPEC §3): a string is UTF-8 text, and len, s[i],
// slices, `for c in s` and reversed count its characters (code points), as
// Python does; a byte that does not start a valid UTF-8 character is one
// character of its own. A string value reads by these (HostString, value.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nn::frontend {

// The length in bytes of the character starting at s[i] (1 for a stray byte).
size_t utf8_char_length(std::string_view s, size_t i);

// Whether every byte is below 0x80.
bool is_ascii(std::string_view s);

}  // namespace nn::frontend
