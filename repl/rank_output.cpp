// Line prefixes for the ranks' output (repl/rank_output.h): a streambuf that
// writes the prefix before the first character of each line.
#include "repl/rank_output.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <streambuf>
#include <string>
#include <thread>

namespace nn::repl {
namespace {

// Writes whole lines, each in one write, so that ranks sharing mpiexec's
// output do not mix within a line; a flush in mid-line (std::cerr flushes
// after every <<) writes what came so far, and the line goes on unprefixed.
// So nn writes each of its own stderr lines with one <<.
class LinePrefix final : public std::streambuf {
 public:
  LinePrefix(std::streambuf* out, std::string prefix) : out_(out), prefix_(std::move(prefix)) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    pending_ += traits_type::to_char_type(c);
    if (pending_.back() == '\n' && !write_pending()) return traits_type::eof();
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i)
      if (traits_type::eq_int_type(overflow(traits_type::to_int_type(s[i])), traits_type::eof())) return i;
    return n;
  }
  int sync() override { return write_pending() ? out_->pubsync() : -1; }

 private:
  bool write_pending() {
    if (pending_.empty()) return true;
    const std::string text = (at_line_start_ ? prefix_ : std::string()) + pending_;
    at_line_start_ = pending_.back() == '\n';
    pending_.clear();
    const bool ok = out_->sputn(text.data(), std::streamsize(text.size())) == std::streamsize(text.size());
    out_->pubsync();
    return ok;
  }
  std::streambuf* out_;
  std::string prefix_;
  std::string pending_;  // what came since the last write
  bool at_line_start_ = true;
};

}  // namespace

void before_rank_diagnostic() {
  namespace comm = backend::comm;
  const comm::World w = comm::launch_world();
  if (w.size <= 1) return;
  // An error found before MPI started (a name the script lacks): start it,
  // so that the first rank to print ends the others with MPI_Abort (a rank
  // that exits before MPI_Init does not make mpiexec end the rest in time).
  // MPI_Init returns once every rank has called it: at the latest where
  // each other rank's script ends.
  if (!comm::communicator_if_started()) {
    try {
      comm::communicator();
    } catch (const std::exception&) {  // the diagnostic is printed all the same
    }
  }
  if (w.rank > 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(2000, 250 * w.rank)));
}

void prefix_rank_output(const backend::comm::World& w) {
  if (w.size <= 1) return;
  const std::string prefix = "[" + std::to_string(w.rank) + "] ";
  // Never freed: the streams use them until the process ends.
  if (w.rank > 0) std::cout.rdbuf(new LinePrefix(std::cout.rdbuf(), prefix));
  std::cerr.rdbuf(new LinePrefix(std::cerr.rdbuf(), prefix));
}

}  // namespace nn::repl
