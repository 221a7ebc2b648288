// Rendering of diagnostics and name suggestions.
#include "frontend/diagnostic.h"

#include <algorithm>

namespace nn::frontend {

std::string render(const Diagnostic& d, const SourceManager& sources) {
  std::string out = d.severity + ": " + d.message + "\n";
  if (d.span.valid()) {
    const SourceFile& f = sources.file(d.span.file);
    LineCol lc = f.line_col(d.span.begin);
    std::string num = std::to_string(lc.line);
    std::string pad(num.size(), ' ');
    out += pad + "--> " + f.path() + ":" + num + ":" + std::to_string(lc.col) + "\n";
    std::string line = f.line_text(lc.line);
    // Control characters (a NUL would end the text for a C string reader)
    // show as `?`, one column as they took.
    for (char& c : line)
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F) c = '?';
    out += pad + " |\n";
    out += num + " | " + line + "\n";
    // Carets cover the span on its first line (at least one).
    size_t start = lc.col - 1;
    LineCol end = f.line_col(d.span.end > d.span.begin ? d.span.end - 1 : d.span.begin);
    size_t width = end.line == lc.line ? end.col - lc.col + 1 : (line.size() > start ? line.size() - start : 1);
    if (d.span.end <= d.span.begin) width = 1;
    std::string lead;
    for (size_t i = 0; i < start && i < line.size(); ++i) lead += line[i] == '\t' ? '\t' : ' ';
    if (start > line.size()) lead.append(start - line.size(), ' ');
    out += pad + " | " + lead + std::string(std::max<size_t>(width, 1), '^') + "\n";
  }
  for (const auto& n : d.notes) out += "  " + n + "\n";
  return out;
}

namespace {
// Optimal string alignment distance: insertions, deletions, substitutions
// and swaps of two neighbours each cost one ("valeu" is one from "value").
constexpr size_t kLongestMistypedName = 100;

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}
}  // namespace

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  // The distance table is quadratic: a name of 40,000 characters took 29 s
  // and 12 GB. No one mistypes one that long.
  if (name.size() > kLongestMistypedName) return {};
  // Up to one edit in three characters (at least one) still reads as a typo.
  size_t allowed = std::max<size_t>(1, (name.size() + 1) / 3);
  std::string best;
  size_t best_d = allowed + 1;
  for (const auto& c : candidates) {
    if (c == name) continue;
    const size_t apart = c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
    if (apart >= best_d) continue;  // at least that many edits: no better
    size_t d = edit_distance(name, c);
    if (d < best_d || (d == best_d && c < best)) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

}  // namespace nn::frontend
