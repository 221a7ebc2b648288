// Errors raised by the backend. They carry a plain message; the frontend adds
// the source location of the call that caused them (SPEC §11).
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace nn::backend {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An allocation beyond the device's limit or beyond what the system gives.
class OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& msg, size_t asked) : Error(msg), asked_(asked) {}
  size_t asked() const { return asked_; }

 private:
  size_t asked_;
};

// "1.5 MB", "512 B": sizes as people read them.
std::string format_bytes(size_t bytes);

}  // namespace nn::backend
