// Characters of a string (SPEC §3): a string is UTF-8 text, and len, s[i],
// slices, `for c in s` and reversed count its characters (code points), as
// Python does; a byte that does not start a valid UTF-8 character is one
// character of its own. ASCII text (each character one byte) needs no scan.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nn::frontend {

// The length in bytes of the character starting at s[i] (1 for a stray byte).
size_t utf8_char_length(std::string_view s, size_t i);

// Whether every byte is below 0x80.
bool is_ascii(std::string_view s);

// The number of characters.
int64_t utf8_count(std::string_view s);

// A string's characters by position: byte offsets are found once, for text
// that is not ASCII.
class Utf8Chars {
 public:
  Utf8Chars(std::string_view s, bool ascii);
  int64_t size() const { return ascii_ ? int64_t(s_.size()) : int64_t(starts_.size()) - 1; }
  std::string_view at(int64_t i) const {
    if (ascii_) return s_.substr(size_t(i), 1);
    return s_.substr(starts_[size_t(i)], starts_[size_t(i) + 1] - starts_[size_t(i)]);
  }

 private:
  std::string_view s_;
  bool ascii_;
  std::vector<size_t> starts_;  // not ASCII: each character's offset, then s_.size()
};

}  // namespace nn::frontend
