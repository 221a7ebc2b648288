// Division of an element index by a size fixed at launch, for index spaces
// under 2^31 elements: a multiply-high, an add and a shift (Granlund and
// Montgomery's method, as PyTorch's IntDivider), where a 64-bit `/` is a
// long software routine on a GPU and a 32-bit one about twenty
// instructions. Kernels turning a flat index into per-dimension ones
// (broadcasts, strided copies, reductions, batch norm's channel) divide
// once per dimension per element of what is otherwise a memory-bound loop.
// Plain C++ on the host (where the tests check it against `/`),
// __host__ __device__ for nvcc, and part of the prelude NVRTC compiles the
// fused kernels with (cuda/fused_source.cpp), where there is no <cstdint>.
#pragma once
#if defined(__CUDACC_RTC__)
using uint32_t = unsigned;
using uint64_t = unsigned long long;
using int64_t = long long;
#else
#include <cstdint>
#endif

namespace nn::backend::cuda {

// Index spaces up to this many elements take the 32-bit path.
constexpr int64_t kMaxIndex32 = int64_t(1) << 31;

#if defined(__CUDACC__)
#define NN_INDEX_HD __host__ __device__
#else
#define NN_INDEX_HD
#endif

struct IndexDivider {
  uint32_t divisor = 1, multiplier = 0, shift = 0;

  IndexDivider() = default;
#if !defined(__CUDACC_RTC__)  // NVRTC compiles device code only
  // d in [1, 2^31]: the smallest shift with 2^shift >= d, and the
  // multiplier m = floor(2^32 (2^shift - d) / d) + 1, which fits 32 bits.
  explicit IndexDivider(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint64_t(1) << shift) < d) ++shift;
    multiplier = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }
#endif

  // n / divisor for n < 2^31 (so that hi + n cannot overflow).
  NN_INDEX_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, multiplier);
#else
    const uint32_t hi = uint32_t((uint64_t(n) * multiplier) >> 32);
#endif
    return (hi + n) >> shift;
  }
};

#if !defined(__CUDACC_RTC__)
// The dividers of an index space's dims (sizes in `size`, n elements in all)
// when it takes the 32-bit path; false, leaving `div` as it is, when it is
// too large for it or empty (a size of 0 has no divider).
inline bool make_dividers(int nd, const int64_t* size, int64_t n, IndexDivider* div) {
  if (n <= 0 || n >= kMaxIndex32) return false;
  for (int d = 0; d < nd; ++d)
    if (size[d] < 1) return false;
  for (int d = 0; d < nd; ++d) div[d] = IndexDivider(uint32_t(size[d]));
  return true;
}
#endif

// Flat index i of an index space of nd dims, split into its per-dim
// indices: f(d, index) for each dim, innermost first (the outermost takes
// what is left, with no division). split_index32: i < 2^31, with the dims'
// dividers; split_index: any i, with their sizes.
template <class F>
NN_INDEX_HD void split_index32(const IndexDivider* div, int nd, uint32_t i, F&& f) {
  for (int d = nd - 1; d > 0; --d) {
    const uint32_t q = div[d].div(i);
    f(d, int64_t(i - q * div[d].divisor));
    i = q;
  }
  if (nd > 0) f(0, int64_t(i));
}
template <class F>
NN_INDEX_HD void split_index(const int64_t* size, int nd, int64_t i, F&& f) {
  for (int d = nd - 1; d > 0; --d) {
    const int64_t q = i / size[d];
    f(d, i - q * size[d]);
    i = q;
  }
  if (nd > 0) f(0, i);
}

}  // namespace nn::backend::cuda

#undef NN_INDEX_HD
