// The profiler behind --profile: when one is active, every eager op call and
// every node a graph runs is recorded with its start and end time. The
// program prints the per-op table and writes the Chrome trace (repl/).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace nn::backend {

// The category of a collective's time on its way, from its start to when it
// was seen done, and of the part of it its rank was blocked waiting
// ("blocked"; ops/collective.cpp): a track of its own beside the ops.
inline constexpr const char* kCollective = "collective";

struct ProfileEvent {
  std::string name;      // the op
  const char* category;  // "eager", "forward", "backward", "optimizer", kCollective
  int64_t start_ns, end_ns;
};

class Profiler {
 public:
  // The active profiler, or null (the common case: one load and a branch).
  static Profiler* active() { return active_; }
  static void set_active(Profiler* p) { active_ = p; }
  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void record(std::string name, const char* category, int64_t start_ns, int64_t end_ns) {
    events_.push_back({std::move(name), category, start_ns, end_ns});
  }
  const std::vector<ProfileEvent>& events() const { return events_; }

 private:
  static inline Profiler* active_ = nullptr;
  std::vector<ProfileEvent> events_;
};

}  // namespace nn::backend
