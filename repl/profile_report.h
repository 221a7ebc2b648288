// What --profile shows at the end of a run: the per-op time table (op,
// count, total, mean, share) and, with --profile=FILE.json, a Chrome trace
// event file that Perfetto and chrome://tracing open.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "backend/profiler.h"

namespace nn::repl {

void print_profile_table(const std::vector<backend::ProfileEvent>& events, std::ostream& out);
// Throws std::runtime_error when the file cannot be written.
void write_chrome_trace(const std::vector<backend::ProfileEvent>& events, const std::string& path);

}  // namespace nn::repl
