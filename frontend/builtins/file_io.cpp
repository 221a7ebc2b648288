// Shared file plumbing of the data built-ins: checked sizes, reading with the
// size known, atomic writing, allow_files and the shipped data folder.
#include "frontend/builtins/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include "backend/device.h"
#include "backend/ops.h"
#include "backend/regular_file.h"
#include "frontend/stdlib_path.h"

namespace nn::frontend::fileio {
namespace fs = std::filesystem;

bool checked_mul(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

uint64_t data_bytes(const std::string& path, std::span<const uint64_t> dims, uint64_t elem) {
  if (dims.size() > size_t(backend::kMaxDims))
    throw FileError(path, "has " + std::to_string(dims.size()) + " dimensions; nn tensors have at most " +
                              std::to_string(backend::kMaxDims));
  uint64_t n = elem;
  for (uint64_t d : dims) {
    // Each extent must also fit an int64 (a Shape holds int64_t), even when
    // another extent is 0 and the product is small.
    if (d > uint64_t(std::numeric_limits<int64_t>::max()) || !checked_mul(n, d, n))
      throw FileError(path, "its shape is too large (the element count overflows)");
  }
  return n;
}

backend::Tensor new_tensor(std::span<const uint64_t> dims, backend::DType dtype) {
  backend::Shape shape;
  for (uint64_t d : dims) shape.push_back(int64_t(d));
  backend::Tensor t = backend::Tensor::empty(shape, dtype);
  if (t.nbytes()) t.raw_data();  // allocate now: an OutOfMemory comes before any reading
  return t;
}

backend::Tensor on_cpu(const backend::Tensor& x) {
  if (x.device() == backend::cpu_device()) return x;
  return backend::to_device(x, backend::cpu_device());
}

// ---------------------------------------------------------------- InputFile

InputFile::InputFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw backend::Error("the path is empty: name the file to read");
  backend::RegularFile file = backend::open_regular_file(path_);  // a FIFO is refused, not waited on
  if (file.fd < 0) throw FileError(path_, file.why);
  f_ = fdopen(file.fd, "rb");
  if (!f_) {
    ::close(file.fd);
    throw FileError(path_, std::string("cannot open: ") + std::strerror(errno));
  }
  size_ = file.size;
}

InputFile::~InputFile() {
  if (f_) std::fclose(f_);
}

void InputFile::read(void* dst, uint64_t n, const std::string& what) {
  // Checked against the size first: nothing is read (or allocated by the
  // caller) for a request the file cannot satisfy.
  if (n > remaining())
    throw FileError(path_, "truncated: " + what + " needs " + std::to_string(n) + " bytes at offset " +
                               std::to_string(pos_) + ", only " + std::to_string(remaining()) + " remain");
  char* p = static_cast<char*>(dst);
  uint64_t done = 0;
  while (done < n) {
    size_t chunk = size_t(std::min<uint64_t>(n - done, uint64_t(1) << 30));
    size_t got = std::fread(p + done, 1, chunk, f_);
    if (got == 0) {
      if (std::ferror(f_)) throw FileError(path_, std::string("cannot read: ") + std::strerror(errno));
      throw FileError(path_, "truncated: the file shrank while it was read");
    }
    done += got;
  }
  pos_ += n;
}

std::string InputFile::read_rest() {
  // To the end, not to the size the file had when opened: the files of
  // /proc say 0.
  std::string s(size_t(remaining()), '\0');
  s.resize(std::fread(s.data(), 1, s.size(), f_));
  char more[1 << 16];
  while (size_t n = std::fread(more, 1, sizeof more, f_)) s.append(more, n);
  if (std::ferror(f_)) throw FileError(path_, std::string("cannot read it: ") + std::strerror(errno));
  pos_ += s.size();
  size_ = std::max(size_, pos_);
  return s;
}

void InputFile::seek(uint64_t offset) {
  if (offset > size_ || fseeko(f_, off_t(offset), SEEK_SET) != 0)
    throw FileError(path_, "cannot seek to byte " + std::to_string(offset));
  pos_ = offset;
}

// ---------------------------------------------------------------- AtomicFile

namespace {
std::atomic<uint64_t> g_temp_counter{0};

fs::path folder_of(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? fs::path(".") : dir;
}
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (path_.empty()) throw backend::Error("the path is empty: name the file to write");
  if (fs::path(path_).filename().empty()) throw FileError(path_, "names a folder, not a file");
  // A link is written through: the file it names gets the new contents
  // (renaming over the link would replace the link and leave that file old).
  const std::string asked = path_;
  for (int links = 0; fs::is_symlink(path_, ec); ++links) {
    if (links == 40) throw FileError(asked, "is a chain of links that does not end");
    const fs::path to = fs::read_symlink(path_, ec);
    if (ec) throw FileError(asked, "is a link that cannot be read: " + ec.message());
    path_ = (to.is_absolute() ? to : fs::path(path_).parent_path() / to).string();
  }
  fs::path target(path_);
  fs::path dir = folder_of(path_);
  if (!fs::is_directory(dir, ec)) throw FileError(asked, "the folder `" + dir.string() + "` does not exist");
  if (fs::is_directory(target, ec)) throw FileError(asked, "is a folder, not a file");
  // A FIFO or a device would be replaced by the rename, not written.
  if (fs::exists(target, ec) && !fs::is_regular_file(target, ec)) throw FileError(asked, "is not a regular file");
  // A hidden name beside the target: same folder, so rename() is atomic
  // (no copy across file systems). O_EXCL makes the name ours; mode 0666
  // lets the umask decide the final permissions, as for any new file.
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on `"." + string`.
    std::string name = ".";
    name += target.filename().string();
    name += ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(g_temp_counter.fetch_add(1));
    temp_ = (dir / name).string();
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST)
      throw FileError(path_, "cannot create a file in `" + dir.string() + "`: " + std::strerror(errno));
  }
  if (fd_ < 0) throw FileError(path_, "cannot create a temporary file in `" + dir.string() + "`");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::write(const void* data, uint64_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd_, p, size_t(std::min<uint64_t>(n, uint64_t(1) << 30)));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw FileError(path_, std::string("cannot write: ") + std::strerror(errno));
    }
    p += w;
    n -= uint64_t(w);
  }
}

void AtomicFile::commit() {
  // The data must be on disk before the rename makes it visible, or a crash
  // could leave an empty file under the final name.
  if (::fsync(fd_) != 0) throw FileError(path_, std::string("cannot write: ") + std::strerror(errno));
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw FileError(path_, std::string("cannot write: ") + std::strerror(errno));
  if (::rename(temp_.c_str(), path_.c_str()) != 0)
    throw FileError(path_, std::string("cannot replace the file: ") + std::strerror(errno));
  committed_ = true;
  // The rename itself is made durable by syncing the folder; failing that is
  // not an error of the save (the file is complete under its name).
  int dfd = ::open(folder_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

// ---------------------------------------------------------------- places


std::string data_dir() { return (fs::path(nn::frontend::stdlib_dir()) / "data").string(); }

bool in_data_dir(const std::string& path) {
  std::error_code ec;
  fs::path dir = fs::canonical(data_dir(), ec);
  if (ec) return false;
  fs::path file = fs::weakly_canonical(path, ec);
  if (ec) return false;
  auto [d, f] = std::mismatch(dir.begin(), dir.end(), file.begin(), file.end());
  return d == dir.end() && f != file.end();
}

std::string access_denied(bool allow_files, const std::string& path, bool write) {
  if (allow_files || (!write && in_data_dir(path))) return "";
  return std::string("file access is not allowed: cannot ") + (write ? "write `" : "read `") + path + "`";
}

}  // namespace nn::frontend::fileio
