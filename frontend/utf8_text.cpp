// Characters of a string (frontend/utf8_text.h).
#include "frontend/utf8_text.h"

#include <algorithm>

namespace nn::frontend {

size_t utf8_char_length(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 1;
  return n;
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

int64_t utf8_count(std::string_view s) {
  int64_t n = 0;
  for (size_t i = 0; i < s.size(); i += utf8_char_length(s, i)) ++n;
  return n;
}

Utf8Chars::Utf8Chars(std::string_view s, bool ascii) : s_(s), ascii_(ascii) {
  if (ascii_) return;
  for (size_t i = 0; i < s.size(); i += utf8_char_length(s, i)) starts_.push_back(i);
  starts_.push_back(s.size());
}

}  // namespace nn::frontend
