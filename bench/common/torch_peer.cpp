// TorchPeer (torch_peer.h): starting bench/torch_graph.py --serve through
// pipes, one request line per block of steps, and stopping it.
#include "torch_peer.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace nn::bench {

void TorchPeer::start(int threads, int warmup) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    why_ = "PyTorch not found: /usr/bin/python3 cannot import torch (install Debian's python3-torch)";
    return;
  }
  std::signal(SIGPIPE, SIG_IGN);  // a server that died must not take us with it
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) {
    why_ = "no pipe for /usr/bin/python3";
    return;
  }
  std::fflush(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    dup2(down[0], 0);
    dup2(up[1], 1);
    if (FILE* null = std::freopen("/dev/null", "w", stderr); !null) _exit(127);
    close(down[0]), close(down[1]), close(up[0]), close(up[1]);
    std::string threads_arg = std::to_string(threads), warmup_arg = std::to_string(warmup);
    execl("/usr/bin/python3", "python3", NN_BENCH_DIR "/torch_graph.py", "--serve", threads_arg.c_str(),
          warmup_arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(down[0]);
  close(up[1]);
  if (pid_ < 0) {
    close(down[1]), close(up[0]);
    why_ = "could not start /usr/bin/python3";
    return;
  }
  to_ = fdopen(down[1], "w");
  from_ = fdopen(up[0], "r");
  if (read_line() != "ready") fail();
}

std::vector<double> TorchPeer::run(const char* model, int n) {
  std::vector<double> out;
  if (!on()) return out;
  std::fprintf(to_, "%s %d\n", model, n);
  std::fflush(to_);
  std::string line = read_line();
  const char* p = line.c_str();
  char* end = nullptr;
  for (double v = std::strtod(p, &end); end != p; v = std::strtod(p, &end)) {
    out.push_back(v);
    p = end;
  }
  if (int(out.size()) != n) {
    out.clear();
    fail();
  }
  return out;
}

void TorchPeer::stop() {
  if (to_) std::fprintf(to_, "quit\n"), std::fclose(to_);
  if (from_) std::fclose(from_);
  to_ = from_ = nullptr;
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string TorchPeer::read_line() {
  std::string line;
  int c;
  while (from_ && (c = std::fgetc(from_)) != EOF && c != '\n') line += char(c);
  return line;
}

void TorchPeer::fail() {
  stop();
  why_ = "bench/torch_graph.py --serve stopped answering (run it by hand: /usr/bin/python3 bench/torch_graph.py)";
}

}  // namespace nn::bench
