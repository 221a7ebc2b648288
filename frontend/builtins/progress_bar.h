// The progress bar of progress(iterable): one line on stderr, redrawn in
// place ("\r"), and only when stderr is a terminal, so that logs and test
// output never see it.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace nn::frontend {

// The text of the bar after `done` of `total` items (total unknown: a
// counter), `seconds` after the start:
//   " 37/100 [##########..................]  37% 1.2s eta 2.0s"
std::string progress_line(int64_t done, std::optional<int64_t> total, double seconds);

class ProgressBar {
 public:
  // Draws on `out`, or nowhere when out is null.
  ProgressBar(std::FILE* out, std::optional<int64_t> total);
  // Draws on stderr when it is a terminal, else nowhere.
  static ProgressBar for_stderr(std::optional<int64_t> total);
  ~ProgressBar();  // ends the line when the loop stopped early (break, error)
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ProgressBar(ProgressBar&&) noexcept;

  void update(int64_t done);  // redraws at most every 0.1 s
  void finish(int64_t done);  // the last drawing, then a newline

 private:
  void draw(int64_t done);
  std::FILE* out_;
  std::optional<int64_t> total_;
  std::chrono::steady_clock::time_point start_, last_;
  bool drawn_ = false, finished_ = false;
};

}  // namespace nn::frontend
