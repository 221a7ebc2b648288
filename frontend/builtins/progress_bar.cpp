// Rendering and throttled drawing of progress bars.
#include "frontend/builtins/progress_bar.h"

#include "backend/comm/communicator.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace nn::frontend {
namespace {
constexpr int kWidth = 30;

std::string seconds_text(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, int(s) / 60 % 60);
  return buf;
}
}  // namespace

std::string progress_line(int64_t done, std::optional<int64_t> total, double seconds) {
  if (!total || *total <= 0) return std::to_string(done) + " it " + seconds_text(seconds);
  const int64_t n = *total;
  const double frac = std::min(1.0, double(done) / double(n));
  const int filled = int(frac * kWidth);
  std::string bar(size_t(filled), '#');
  bar.append(size_t(kWidth - filled), '.');
  std::string count = std::to_string(n);
  std::string d = std::to_string(done);
  if (d.size() < count.size()) d.insert(0, count.size() - d.size(), ' ');
  char pct[8];
  std::snprintf(pct, sizeof pct, "%3d%%", int(frac * 100));
  std::string line = d + "/" + count + " [" + bar + "] " + pct + " " + seconds_text(seconds);
  if (done > 0 && done < n) line += " eta " + seconds_text(seconds / double(done) * double(n - done));
  return line;
}

ProgressBar::ProgressBar(std::FILE* out, std::optional<int64_t> total)
    : out_(out), total_(total), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressBar ProgressBar::for_stderr(std::optional<int64_t> total) {
  // With several ranks (SPEC §14), rank 0 alone draws.
  const bool drawn = backend::comm::stderr_is_terminal() && backend::comm::launch_world().rank == 0;
  return ProgressBar(drawn ? stderr : nullptr, total);
}

ProgressBar::ProgressBar(ProgressBar&& o) noexcept
    : out_(o.out_), total_(o.total_), start_(o.start_), last_(o.last_), drawn_(o.drawn_), finished_(o.finished_) {
  o.out_ = nullptr;
}

ProgressBar::~ProgressBar() {
  if (out_ && drawn_ && !finished_) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

void ProgressBar::update(int64_t done) {
  if (!out_) return;
  auto now = std::chrono::steady_clock::now();
  // The first drawing at once, then at most ten a second: drawing every
  // step of a fast loop would cost more than the loop.
  if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  draw(done);
}

void ProgressBar::finish(int64_t done) {
  if (!out_ || finished_) return;
  draw(done);
  std::fputc('\n', out_);
  std::fflush(out_);
  finished_ = true;
}

void ProgressBar::draw(int64_t done) {
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // "\r" back to the line's start; ESC[K clears what a longer line left.
  std::fprintf(out_, "\r%s\x1b[K", progress_line(done, total_, s).c_str());
  std::fflush(out_);
  drawn_ = true;
}

}  // namespace nn::frontend
