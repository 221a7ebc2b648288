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
  // The same cells as int64 while every cell so far is an integer written
  // out (exact past 2^53, where a double rounds); cleared at the first that
  // is not.
  std::vector<int64_t> ints;
  bool all_ints = true;
};

// Reads `path`; skips its first line when `header`. Blank lines are skipped,
// "\r\n" line ends are fine, cells may have spaces around them. A cell that
// is not a number, or a row of another length than the first, is a
// FileError "PATH:LINE: ...".
Table read(const std::string& path, bool header);
// The same, from text already in memory (`path` only names it in errors).
Table parse(const std::string& path, const std::string& text, bool header);

}  // namespace nn::frontend::csv
