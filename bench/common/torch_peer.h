// TorchPeer: bench/torch_graph.py --serve as a child process of a benchmark,
// so that PyTorch's steps are timed in the same run as nn's (and under the
// same load): "MODEL N" in, N step times (ms) out. Runs /usr/bin/python3
// (Debian's python3-torch); when that cannot import torch, or the server
// stops answering, the peer is off and why() says why.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace nn::bench {

class TorchPeer {
 public:
  TorchPeer() = default;
  TorchPeer(const TorchPeer&) = delete;
  TorchPeer& operator=(const TorchPeer&) = delete;
  ~TorchPeer() { stop(); }

  // Starts the server with `threads` threads and `warmup` untimed steps per
  // model; on failure says why and leaves it off.
  void start(int threads, int warmup);
  // Leaves it off, with `why` as the reason (e.g. "skipped (--no-torch)").
  void skip(std::string why) { why_ = std::move(why); }

  bool on() const { return from_ != nullptr; }
  const std::string& why() const { return why_; }

  // The times of n steps of `model` (its name in torch_graph.py); empty (and
  // the server off) on failure.
  std::vector<double> run(const char* model, int n);

  // Asks the server to quit and waits for it; the peer is off after.
  void stop();

 private:
  std::string read_line();
  void fail();

  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::string why_;
};

}  // namespace nn::bench
