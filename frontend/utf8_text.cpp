// Characters of a string (frontend/utf8_text.h).
#include "frontend/utf8_text.h"

#include <algorithm>

namespace nn::frontend {

// Well-formed UTF-8 as Unicode's table 3-7 has it: no overlong forms (C0,
// C1, E0 80..9F, F0 80..8F), no surrogates (ED A0..BF), nothing past
// U+10FFFF (F4 90.., F5..FF).
size_t utf8_char_length(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  const size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 1;
  if (n == 1 || i + n > s.size()) return 1;
  const unsigned char second = static_cast<unsigned char>(s[i + 1]);
  const unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
  if (second < lo || second > hi) return 1;
  for (size_t k = 2; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 1;
  return n;
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

}  // namespace nn::frontend
