// parallel_for: splits [0, n) over the kernel threads when the work is big
// enough to pay for waking them (OpenMP), else runs inline.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace nn::backend {

// Below this many elements a simple elementwise loop runs on one thread.
constexpr int64_t kParallelGrain = 32768;

// While it lives, and when `one`, OpenMP regions this thread starts (oneDNN's
// among them) run on one thread: the setting of this task only, restored
// at the end.
class ThreadLimit {
 public:
  explicit ThreadLimit(bool one = true) : saved_(one ? omp_get_max_threads() : 0) {
    if (one) omp_set_num_threads(1);
  }
  ~ThreadLimit() {
    if (saved_ > 0) omp_set_num_threads(saved_);
  }
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;

 private:
  int saved_;
};

template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  int threads = omp_get_max_threads();
  if (n < grain * 2 || threads <= 1 || omp_in_parallel()) {
    f(int64_t(0), n);
    return;
  }
  [[maybe_unused]] int chunks = int(std::min<int64_t>(threads, (n + grain - 1) / grain));  // unused without OpenMP (NN_TSAN)
#pragma omp parallel num_threads(chunks)
  {
    int t = omp_get_thread_num(), k = omp_get_num_threads();
    int64_t per = (n + k - 1) / k;
    int64_t b = std::min(n, int64_t(t) * per), e = std::min(n, b + per);
    if (b < e) f(b, e);
  }
}

}  // namespace nn::backend
