// open_plugin (backend/plugin_loader.h).
#include "backend/plugin_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace nn::backend {
namespace {
namespace fs = std::filesystem;

// The file that holds this code: the nn program, libnn_embed.so, or a
// test or bench program.
fs::path own_binary() {
  Dl_info info{};
  std::error_code ec;
  if (dladdr(reinterpret_cast<void*>(&own_binary), &info) && info.dli_fname) {
    fs::path p = fs::canonical(fs::path(info.dli_fname), ec);
    if (!ec) return p;
  }
  // dli_fname of the main program may be a bare name.
  fs::path p = fs::canonical("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

std::vector<fs::path> candidates(const fs::path& binary, const char* file, const char* env) {
  if (const char* p = std::getenv(env); p && *p) return {fs::path(p)};
  std::vector<fs::path> c;
  if (!binary.empty()) {
    c.push_back(binary.parent_path() / file);
    c.push_back(binary.parent_path().parent_path() / NN_INSTALL_LIBDIR / file);
  }
  c.push_back(fs::path(NN_PLUGIN_BUILD_DIR) / file);
  return c;
}

std::string joined(const std::vector<fs::path>& paths) {
  std::string s;
  for (size_t i = 0; i < paths.size(); ++i) s += (i ? ", " : "") + paths[i].string();
  return s;
}

}  // namespace

OpenedPlugin open_plugin(const char* file, const char* env, const char* entry) {
  OpenedPlugin out;
  const fs::path binary = own_binary();
  // The plugin takes the backend's symbols from the binary that loads it.
  // A library the host opened RTLD_LOCAL (Python's ctypes, say) does not
  // offer them: make it global first. For the main program this is a no-op.
  if (!binary.empty()) dlopen(binary.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  const std::vector<fs::path> paths = candidates(binary, file, env);
  std::error_code ec;
  for (const fs::path& c : paths)
    if (fs::is_regular_file(c, ec)) {
      out.path = c.string();
      break;
    }
  if (out.path.empty()) {
    out.error = std::string("its plugin ") + file + " is missing (looked for " + joined(paths) + ")";
    return out;
  }
  void* handle = dlopen(out.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    out.error = "its plugin " + out.path + " could not be loaded: " + (why ? why : "unknown error");
    return out;
  }
  out.entry = dlsym(handle, entry);
  if (!out.entry) out.error = "its plugin " + out.path + " has no entry `" + entry + "`";
  return out;
}

}  // namespace nn::backend
