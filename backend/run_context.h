// What an interpreter keeps of the backend's per-run state for itself and
// installs on the calling thread while it runs (RunScope): its random
// generator, kernel thread count, default device, memory account and stop
// request. Two interpreters on two threads then draw, split work, place
// tensors, count memory and stop independently; code outside any scope uses
// the process's own generator.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "backend/device.h"
#include "backend/dtype.h"
#include "backend/memory_account.h"
#include "backend/source_loc.h"

namespace nn::backend {

// A counter-based Philox stream: draws reserve offsets (philox_reserve).
struct Generator {
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's
  explicit Generator(uint64_t s = kDefaultSeed) : seed(s) {}
  std::atomic<uint64_t> seed;
  std::atomic<uint64_t> offset{0};
};

// The generator random ops on this thread draw from.
Generator& current_generator();

// How the running interpreter writes a script location ("f.nn:3:5"), for
// the diagnostics the backend makes itself; null outside any.
using LocText = std::function<std::string(const SourceLoc&)>;
const LocText* current_loc_text();

// What an interpreter installs on the calling thread while it runs.
struct RunState {
  Generator* generator = nullptr;
  int threads = 0;  // OpenMP's, which is per thread; 0 keeps the caller's
  Device* device = nullptr;
  DType autocast = DType::f32;  // f32: off
  MemoryAccount* account = nullptr;  // null: nothing counted
  std::atomic<bool>* stop = nullptr;  // its interrupt() (backend/interrupt.h)
  const LocText* loc_text = nullptr;
};

// Installs a RunState on this thread; the destructor puts back what was
// there. A scope opened while the same generator is installed (an
// interpreter called back from its own built-ins) leaves autocast as it is:
// an `autocast(...)` around the call holds.
class RunScope {
 public:
  explicit RunScope(const RunState& state);
  ~RunScope();
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

 private:
  Generator* saved_generator_;
  int saved_threads_ = 0;  // 0: not changed
  DeviceScope device_;
  DType saved_autocast_;
  MemoryAccount* saved_account_;
  std::atomic<bool>* saved_stop_;
  const LocText* saved_loc_text_;
  bool nested_;
};

}  // namespace nn::backend
