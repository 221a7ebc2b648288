// open_regular_file: opened without blocking (a FIFO's open waits for a
// writer otherwise), checked with fstat on the descriptor itself (no race
// between a stat and the open), then made blocking for the reads.
#include "backend/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nn::backend {

RegularFile open_regular_file(const std::string& path) {
  RegularFile f;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    f.why = std::string("cannot open: ") + std::strerror(errno);
    return f;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    f.why = S_ISDIR(st.st_mode) ? "is a folder, not a file" : "is not a regular file";
    ::close(fd);
    return f;
  }
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  f.fd = fd;
  f.size = uint64_t(st.st_size);
  return f;
}

}  // namespace nn::backend
