// The GPU kernels' index division (backend/cuda/index_divider.h), on the
// host: for every divisor a kernel can meet and the indices where an error
// would show (0, multiples and their neighbours, the top of the range), it
// gives what `/` gives. Needs no GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "backend/cuda/index_divider.h"

using nn::backend::cuda::IndexDivider;
using nn::backend::cuda::kMaxIndex32;

namespace {

// The number of n in `ns` where d.div(n) != n / divisor.
int64_t wrong(uint32_t divisor, const std::vector<uint32_t>& ns) {
  const IndexDivider d(divisor);
  int64_t bad = 0;
  for (uint32_t n : ns) bad += d.div(n) != n / divisor;
  return bad;
}

// 0, the top of the range, and each multiple of `divisor` near the bottom,
// the middle and the top with its neighbours, plus random indices.
std::vector<uint32_t> indices(uint32_t divisor, std::mt19937& rng) {
  const uint32_t top = uint32_t(kMaxIndex32 - 1);
  std::vector<uint32_t> ns{0, 1, top, top - 1};
  for (uint64_t base : {uint64_t(0), uint64_t(top / 2), uint64_t(top)}) {
    const uint64_t k0 = base / divisor;
    for (uint64_t k = k0 > 3 ? k0 - 3 : 0; k <= k0 + 3; ++k)
      for (int64_t off : {-1, 0, 1}) {
        const int64_t n = int64_t(k * divisor) + off;
        if (n >= 0 && n <= int64_t(top)) ns.push_back(uint32_t(n));
      }
  }
  std::uniform_int_distribution<uint32_t> any(0, top);
  for (int i = 0; i < 200; ++i) ns.push_back(any(rng));
  return ns;
}

}  // namespace

TEST_CASE("index divider: n / d for every divisor up to 4096 and every n below 65536") {
  std::vector<uint32_t> small(65536);
  for (uint32_t n = 0; n < small.size(); ++n) small[n] = n;
  int64_t bad = 0;
  for (uint32_t d = 1; d <= 4096; ++d) bad += wrong(d, small);
  CHECK(bad == 0);
}

TEST_CASE("index divider: large divisors, powers of two and their neighbours, over the whole index range") {
  std::mt19937 rng(5);
  std::vector<uint32_t> divisors;
  for (int s = 0; s <= 31; ++s) {
    const uint32_t p = uint32_t(1) << s;
    for (int64_t d : {int64_t(p) - 1, int64_t(p), int64_t(p) + 1})
      if (d >= 1 && d <= kMaxIndex32) divisors.push_back(uint32_t(d));
  }
  // Sizes of real layers: 7 x 7, 56 x 56, 112 x 112, 3 x 224 x 224, ...
  for (uint32_t d : {49u, 3136u, 12544u, 150528u, 1000u, 2048u * 49u}) divisors.push_back(d);
  std::uniform_int_distribution<uint32_t> any(1, uint32_t(kMaxIndex32));
  for (int i = 0; i < 2000; ++i) divisors.push_back(any(rng));
  int64_t bad = 0;
  for (uint32_t d : divisors) bad += wrong(d, indices(d, rng));
  CHECK(bad == 0);
  // The extremes by hand.
  CHECK(IndexDivider(1).div(uint32_t(kMaxIndex32 - 1)) == uint32_t(kMaxIndex32 - 1));
  CHECK(IndexDivider(uint32_t(kMaxIndex32)).div(uint32_t(kMaxIndex32 - 1)) == 0);
  CHECK(IndexDivider(3).div(2147483646u) == 715827882u);
}

TEST_CASE("index divider: a flat index splits into the per-dim indices of its shape, on either path") {
  using nn::backend::cuda::make_dividers;
  using nn::backend::cuda::split_index;
  using nn::backend::cuda::split_index32;
  std::mt19937 rng(9);
  int64_t bad = 0, checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int nd = 1 + int(rng() % 8);
    int64_t size[8], n = 1;
    for (int d = 0; d < nd; ++d) {
      size[d] = trial % 3 == 0 ? 1 + int64_t(rng() % 300) : 1 + int64_t(rng() % 7);
      n *= size[d];
    }
    IndexDivider div[8];
    if (!make_dividers(nd, size, n, div)) continue;  // too large for the 32-bit path
    for (int k = 0; k < 50; ++k) {
      const int64_t i = k == 0 ? 0 : k == 1 ? n - 1 : int64_t(rng() % uint64_t(n));
      // Row-major by hand: the innermost index is i % size[nd-1], and so on out.
      int64_t want[8], r = i;
      for (int d = nd - 1; d >= 0; --d) want[d] = r % size[d], r /= size[d];
      int64_t got32[8] = {}, got64[8] = {};
      int order32 = nd - 1, order64 = nd - 1;  // both visit dims innermost first
      split_index32(div, nd, uint32_t(i), [&](int d, int64_t idx) { got32[d] = idx, bad += d != order32--; });
      split_index(size, nd, i, [&](int d, int64_t idx) { got64[d] = idx, bad += d != order64--; });
      for (int d = 0; d < nd; ++d) bad += (got32[d] != want[d]) + (got64[d] != want[d]);
      ++checked;
    }
  }
  CHECK(checked > 5000);
  CHECK(bad == 0);
  // 2^31 elements or more take the 64-bit path.
  int64_t big[2] = {int64_t(1) << 16, int64_t(1) << 15};
  IndexDivider unused[2];
  CHECK_FALSE(make_dividers(2, big, big[0] * big[1], unused));
  int64_t fits[2] = {int64_t(1) << 16, (int64_t(1) << 15) - 1};
  CHECK(make_dividers(2, fits, fits[0] * fits[1], unused));
  CHECK(unused[1].divisor == uint32_t(fits[1]));
  // An empty space (a reduction of an empty tensor) has no dividers.
  int64_t empty[2] = {4, 0};
  CHECK_FALSE(make_dividers(2, empty, 0, unused));
}
