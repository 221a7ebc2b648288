// Characters of a string (frontend/utf8_text.h): well-formed UTF-8 counts
// one character per code point; every byte of an ill-formed sequence counts
// alone, as Python's surrogateescape decoding keeps each such byte.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "frontend/utf8_text.h"
#include "frontend/value.h"

using nn::frontend::utf8_char_length;
using nn::frontend::HostString;

namespace {

std::vector<size_t> lengths(const std::string& s) {
  std::vector<size_t> out;
  for (size_t i = 0; i < s.size(); i += utf8_char_length(s, i)) out.push_back(utf8_char_length(s, i));
  return out;
}

}  // namespace

TEST_CASE("utf8: code points of one to four bytes") {
  CHECK(lengths("aé→😀") == std::vector<size_t>{1, 2, 3, 4});
  CHECK(HostString("héllo").chars() == 5);
  CHECK(lengths("\xf4\x8f\xbf\xbf") == std::vector<size_t>{4});  // U+10FFFF, the last
  const HostString chars("a→b");
  REQUIRE(chars.chars() == 3);
  CHECK(chars.char_at(1) == "→");
  CHECK(HostString("abc").ascii);
  CHECK(HostString("\xc0\x80z").chars() == 3);
}

TEST_CASE("utf8: ill-formed sequences are a character per byte") {
  CHECK(lengths("\xc0\x80") == std::vector<size_t>{1, 1});                  // overlong NUL
  CHECK(lengths("\xe0\x80\x80") == std::vector<size_t>{1, 1, 1});           // overlong
  CHECK(lengths("\xed\xa0\x80") == std::vector<size_t>{1, 1, 1});           // a surrogate, U+D800
  CHECK(lengths("\xf4\x90\x80\x80") == std::vector<size_t>{1, 1, 1, 1});    // past U+10FFFF
  CHECK(lengths("\xf5\x80\x80\x80") == std::vector<size_t>{1, 1, 1, 1});
  CHECK(lengths("\xe2\x86") == std::vector<size_t>{1, 1});                  // cut short
  CHECK(lengths("\xc3z") == std::vector<size_t>{1, 1});                     // no continuation
  CHECK(HostString("\xc0\x80z\xed\xa0\x80q").chars() == 7);                       // the audit's file: 7, not 4
}
