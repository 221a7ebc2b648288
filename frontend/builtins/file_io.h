// What every file format of the data built-ins shares: errors that name the
// file, overflow-checked sizes, reading with the file's size known up front
// (so a corrupt header cannot make us allocate what the file cannot hold),
// atomic writing (temporary file, fsync, rename), the allow_files rule and
// where the data shipped with nn lives.
#pragma once
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "backend/error.h"
#include "backend/tensor.h"

namespace nn::frontend::fileio {

// An error about one file. It is a backend::Error so that a built-in's
// caller turns it into a diagnostic at the call, like any op error. The
// message reads "PATH: what is wrong".
class FileError : public backend::Error {
 public:
  FileError(const std::string& path, const std::string& what) : backend::Error(path + ": " + what) {}
};

// a * b, or false when it does not fit in 64 bits.
bool checked_mul(uint64_t a, uint64_t b, uint64_t& out);
// The number of bytes of a tensor of `dims` with elements of `elem` bytes;
// throws FileError when the count overflows or the shape has more than
// backend::kMaxDims dimensions.
uint64_t data_bytes(const std::string& path, std::span<const uint64_t> dims, uint64_t elem);
// A CPU tensor of this shape and dtype, its memory allocated (throws
// OutOfMemory beyond the pool's limit). Dims must have passed data_bytes.
backend::Tensor new_tensor(std::span<const uint64_t> dims, backend::DType dtype);
// x itself when it is a CPU tensor, else a copy on the CPU.
backend::Tensor on_cpu(const backend::Tensor& x);

// A file opened for reading, its size known.
class InputFile {
 public:
  explicit InputFile(std::string path);  // throws FileError naming the system's reason
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }
  // Reads exactly n bytes; a short file is FileError "truncated: " + what.
  void read(void* dst, uint64_t n, const std::string& what);
  // The whole rest of the file (for text formats).
  std::string read_rest();
  // Moves to byte `offset` (at most size()).
  void seek(uint64_t offset);

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  uint64_t size_ = 0, pos_ = 0;
};

// Writes `path` atomically: bytes go to a new temporary file beside it;
// commit() flushes and fsyncs it and renames it over `path`, so a reader
// sees the old file or the new one, never a part. Destroyed without commit
// (an error mid-way), the temporary file is removed and `path` is untouched.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws FileError: missing folder, no permission
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(const void* data, uint64_t n);
  void commit();
  const std::string& temp_path() const { return temp_; }

 private:
  std::string path_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// The data shipped in the stdlib's data/ folder (frontend/stdlib_path.h
// says where the stdlib is).
std::string data_dir();
// Whether `path` names a file inside data_dir() (after resolving links and
// `..`): the one place scripts may read with allow_files=false.
bool in_data_dir(const std::string& path);
// The message refusing an access when allow_files is false ("file access
// is not allowed: cannot read `p`"), or "" when it is allowed: always with
// allow_files, and for reads inside data_dir() without it.
std::string access_denied(bool allow_files, const std::string& path, bool write);

}  // namespace nn::frontend::fileio
