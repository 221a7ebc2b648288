// Whether oneDNN is built in and on (backend/onednn.h).
#include "backend/onednn.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#ifdef NN_HAVE_ONEDNN
#include "backend/onednn_library.h"
#endif

namespace nn::backend {
namespace {

#ifdef NN_HAVE_ONEDNN
constexpr bool kBuilt = true;
#else
constexpr bool kBuilt = false;
#endif

// NN_ONEDNN=0 (or "off") in the environment turns it off from the start.
bool on_by_environment() {
  const char* v = std::getenv("NN_ONEDNN");
  return !v || !(std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "OFF") == 0);
}

std::atomic<bool>& enabled() {
  static std::atomic<bool> on{kBuilt && on_by_environment()};
  return on;
}

}  // namespace

bool onednn_built() { return kBuilt; }
bool onednn_enabled() {
#ifdef NN_HAVE_ONEDNN
  // The library is opened by the first call that finds it switched on.
  return enabled().load(std::memory_order_relaxed) && onednn_library();
#else
  return false;
#endif
}
void set_onednn_enabled(bool on) { enabled().store(kBuilt && on, std::memory_order_relaxed); }

}  // namespace nn::backend
