// SharedLibrary (backend/shared_library.h).
#include "backend/shared_library.h"

#include <dlfcn.h>

namespace nn::backend {

SharedLibrary::SharedLibrary(const char* soname, int flags) : soname_(soname) {
  handle_ = dlopen(soname, RTLD_NOW | flags);
  if (!handle_) {
    const char* why = dlerror();
    error_ = soname_ + " could not be loaded: " + (why ? why : "unknown error");
  }
}

void* SharedLibrary::symbol(const char* name) {
  if (!handle_) return nullptr;
  void* address = dlsym(handle_, name);
  if (!address && error_.empty()) error_ = soname_ + " has no symbol `" + name + "`";
  return address;
}

}  // namespace nn::backend
