// The --profile table and Chrome trace (repl/profile_report.h).
#include "repl/profile_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace nn::repl {

void print_profile_table(const std::vector<backend::ProfileEvent>& events, std::ostream& out) {
  struct Row {
    std::string op;
    int64_t count = 0, total_ns = 0;
  };
  std::map<std::string, Row> by_op;
  int64_t all_ns = 0, flight_ns = 0, waited_ns = 0;
  for (const auto& e : events) {
    // A collective's time on its way (its own track) overlaps the ops': not in the table.
    if (std::string_view(e.category) == backend::kCollective) {
      (e.name == "blocked" ? waited_ns : flight_ns) += e.end_ns - e.start_ns;
      continue;
    }
    Row& r = by_op[e.name];
    r.op = e.name;
    ++r.count;
    r.total_ns += e.end_ns - e.start_ns;
    all_ns += e.end_ns - e.start_ns;
  }
  std::vector<Row> rows;
  for (auto& [k, r] : by_op) rows.push_back(r);
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.total_ns > b.total_ns; });
  out << fmt::format("{:<32} {:>9} {:>12} {:>12} {:>7}\n", "op", "count", "total ms", "mean us", "share");
  for (const Row& r : rows)
    out << fmt::format("{:<32} {:>9} {:>12.3f} {:>12.2f} {:>6.1f}%\n", r.op, r.count, r.total_ns / 1e6,
                       r.total_ns / 1e3 / double(r.count), all_ns ? 100.0 * double(r.total_ns) / double(all_ns) : 0.0);
  int64_t ops = 0;
  for (const Row& r : rows) ops += r.count;
  out << fmt::format("{:<32} {:>9} {:>12.3f}\n", "all ops", ops, all_ns / 1e6);
  // What of the buckets' time on their way the other ops covered (SPEC §14).
  if (flight_ns > 0)
    out << fmt::format("collectives: {:.3f} ms on their way, {:.3f} ms waited for: {:.0f}% hidden behind other work\n",
                       flight_ns / 1e6, waited_ns / 1e6,
                       100.0 * double(std::max<int64_t>(0, flight_ns - waited_ns)) / double(flight_ns));
}

void write_chrome_trace(const std::vector<backend::ProfileEvent>& events, const std::string& path) {
  int64_t t0 = events.empty() ? 0 : events.front().start_ns;
  for (const auto& e : events) t0 = std::min(t0, e.start_ns);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : events)
    list.push_back({{"name", e.name},
                    {"cat", e.category},
                    {"ph", "X"},
                    {"ts", double(e.start_ns - t0) / 1e3},
                    {"dur", double(e.end_ns - e.start_ns) / 1e3},
                    {"pid", 1},
                    {"tid", std::string_view(e.category) == backend::kCollective ? 2 : 1}});
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write the profile to `" + path + "`");
  f << nlohmann::json{{"traceEvents", list}, {"displayTimeUnit", "ms"}}.dump() << "\n";
  if (!f) throw std::runtime_error("cannot write the profile to `" + path + "`");
}

}  // namespace nn::repl
