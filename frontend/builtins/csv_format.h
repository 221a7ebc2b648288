// Numeric CSV (load_csv, load_digits): comma-separated numbers, one row a
// line, every row the same number of cells.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nn::frontend::csv {

struct Table {
  int64_t rows = 0, cols = 0;
  std::vector<double> values;  // row-major
  std::vector<int64_t> lines;  // each row's line in the file, from 1
  // Read with `integers` only: each cell written as an integer, as int64
  // (exact past 2^53, where a double rounds; 0 for other cells), and what it
  // was: a float, an integer, or an integer past int64's range.
  enum Cell : uint8_t { floating, integer, too_large };
  std::vector<int64_t> ints;
  std::vector<Cell> kinds;
};

// Reads `path`; skips its first line when `header`. Blank lines are skipped,
// "\r\n" line ends are fine, cells may have spaces around them. A cell that
// is not a number, or a row of another length than the first, is a
// FileError "PATH:LINE: ...".
Table read(const std::string& path, bool header, bool integers = false);
// The same, from text already in memory (`path` only names it in errors).
Table parse(const std::string& path, const std::string& text, bool header, bool integers = false);

}  // namespace nn::frontend::csv
