// Parsing numeric CSV text into a row-major table of doubles.
#include "frontend/builtins/csv_format.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "frontend/builtins/file_io.h"

namespace nn::frontend::csv {
namespace {

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string_view::npos ? std::string_view() : s.substr(b, e - b + 1);
}

[[noreturn]] void bad(const std::string& path, int64_t line, const std::string& what) {
  // "PATH:LINE: what", like a compiler names a place in a file.
  throw backend::Error(path + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

Table parse(const std::string& path, const std::string& text, bool header, bool integers) {
  Table t;
  std::string_view rest(text);
  int64_t line_no = 0, header_cols = 0;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    if (header && line_no == 1) {
      // A file of its header alone is a table of no rows and its columns.
      if (!trim(line).empty()) header_cols = int64_t(std::count(line.begin(), line.end(), ',')) + 1;
      continue;
    }
    if (trim(line).empty()) continue;
    int64_t cells = 0;
    for (size_t start = 0;;) {
      size_t comma = line.find(',', start);
      std::string_view cell = trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
      ++cells;
      // from_chars takes no leading '+'; NumPy's loadtxt does (but not "+-5").
      const bool plus = cell.size() > 1 && cell[0] == '+' && cell[1] != '-' && cell[1] != '+';
      std::string_view digits = plus ? cell.substr(1) : cell;
      double v = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (cell.empty()) bad(path, line_no, "cell " + std::to_string(cells) + " is empty");
      if (ec == std::errc::result_out_of_range)
        bad(path, line_no, "cell " + std::to_string(cells) + " is out of range: `" + std::string(cell) + "`");
      if (ec != std::errc() || end != digits.data() + digits.size())
        bad(path, line_no, "cell " + std::to_string(cells) + " is not a number: `" + std::string(cell) + "`");
      t.values.push_back(v);
      if (integers) {
        int64_t i = 0;
        auto [iend, iec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
        const bool all = iend == digits.data() + digits.size();
        t.ints.push_back(iec == std::errc() && all ? i : 0);
        t.kinds.push_back(!all ? Table::floating : iec == std::errc() ? Table::integer : Table::too_large);
      }
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (t.rows == 0)
      t.cols = cells;
    else if (cells != t.cols)
      bad(path, line_no,
          "this row has " + std::to_string(cells) + " cells, the first row has " + std::to_string(t.cols));
    ++t.rows;
    t.lines.push_back(line_no);
  }
  if (t.rows == 0) t.cols = header_cols;
  return t;
}

Table read(const std::string& path, bool header, bool integers) {
  fileio::InputFile f(path);
  return parse(path, f.read_rest(), header, integers);
}

}  // namespace nn::frontend::csv
