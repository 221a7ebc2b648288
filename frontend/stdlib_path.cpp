// The stdlib folder (see stdlib_path.h).
#include "frontend/stdlib_path.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace nn::frontend {
namespace fs = std::filesystem;

namespace {
// <prefix>/share/nn/stdlib for the binary (shared library or program) that
// holds this function, when it sits in <prefix>/lib* or <prefix>/bin.
std::string installed_stdlib_dir() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&installed_stdlib_dir), &info) || !info.dli_fname) return {};
  std::error_code ec;
  fs::path binary = fs::canonical(fs::path(info.dli_fname), ec);
  if (ec) {
    // dli_fname of the main program may be a bare name; try /proc/self/exe.
    binary = fs::canonical("/proc/self/exe", ec);
    if (ec) return {};
  }
  fs::path prefix = binary.parent_path().parent_path();
  fs::path dir = prefix / "share" / "nn" / "stdlib";
  if (fs::is_directory(dir, ec)) return dir.string();
  return {};
}
}  // namespace

std::string stdlib_dir() {
  if (const char* p = std::getenv("NN_STDLIB"); p && *p) return p;
  static const std::string installed = installed_stdlib_dir();
  if (!installed.empty()) return installed;
  return NN_STDLIB_DIR;
}

}  // namespace nn::frontend
