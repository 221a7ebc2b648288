// lane_sum: a sum in double of f(i) over [0, len), in eight independent
// partial sums. One running sum waits on each add's latency, and the
// compiler may not reorder it into vector lanes by itself (batch norm's
// statistics of a [32, 16, 32, 32] input took 0.4 ms so, on one chain per
// channel). The order is fixed by len alone, so results do not depend on
// the thread count or the vector width.
#pragma once
#include <cstdint>

namespace nn::backend {

template <class F>
inline double lane_sum(int64_t len, F f) {
  constexpr int kLanes = 8;
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= len; i += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += f(i + k);
  for (int k = 0; i < len; ++i, ++k) acc[k] += f(i);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace nn::backend
