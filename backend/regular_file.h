// Opening a file to read only when it is a regular file: a FIFO with no
// writer would block fopen for ever, and a device such as /dev/zero never
// ends, so the check comes before anything waits or reads.
#pragma once
#include <cstdint>
#include <string>

namespace nn::backend {

struct RegularFile {
  int fd = -1;        // open for reading (blocking again), or -1
  uint64_t size = 0;  // its size when opened
  std::string why;    // when fd is -1: "cannot open: ...", "is a folder, not a file", "is not a regular file"
};

RegularFile open_regular_file(const std::string& path);

}  // namespace nn::backend
