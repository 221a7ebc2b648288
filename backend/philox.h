// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3",
// SC11): a counter-based generator. A block of four 32-bit words is a pure
// function of a 128-bit counter and a 64-bit key, so any element of a random
// tensor can be computed on its own: results depend on the seed and on the
// element's global position, never on how the work is split over threads.
//
// How the random ops use it: the generator state is a seed (the key) and an
// offset that counts values drawn so far. A draw of n values reserves offsets
// [offset, offset + n); value j of the draw is made from the Philox block whose
// counter is offset + j (one block a value; its four words are enough for a
// 53-bit uniform, a Box–Muller pair of uniforms or a 64-bit integer).
#pragma once
#include <array>
#include <cstdint>

namespace nn::backend {

struct Philox4x32 {
  using Block = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;

  static constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  static constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

  // Ten rounds of the Philox S-box/P-box network on counter `c` under `k`.
  static constexpr Block generate(Block c, Key k) {
    for (int r = 0; r < 10; ++r) {
      if (r) {  // the key schedule bumps the key before every round after the first
        k[0] += kWeyl0;
        k[1] += kWeyl1;
      }
      uint64_t p0 = uint64_t(kMul0) * c[0], p1 = uint64_t(kMul1) * c[2];
      c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
    }
    return c;
  }

  // The block for a 64-bit value counter under a 64-bit seed.
  static constexpr Block at(uint64_t seed, uint64_t counter) {
    return generate({uint32_t(counter), uint32_t(counter >> 32), 0u, 0u}, {uint32_t(seed), uint32_t(seed >> 32)});
  }
};

// Uniform [0, 1) from the words of a block.
inline float philox_uniform_f32(const Philox4x32::Block& b) { return float(b[0] >> 8) * 0x1.0p-24f; }
inline double philox_uniform_f64(const Philox4x32::Block& b) {
  uint64_t bits = (uint64_t(b[0]) << 21) ^ (uint64_t(b[1]) >> 11);  // 53 random bits
  return double(bits) * 0x1.0p-53;
}

// Where a draw of values lives in the generator's stream.
struct PhiloxDraw {
  uint64_t seed = 0;
  uint64_t offset = 0;  // counter of the draw's first value
};

// Reserves n values of the global generator (thread-safe) and returns where
// they start. Defined in ops/creation.cpp; other ops that draw (dropout)
// reserve through it too, so that one seed governs every random op.
PhiloxDraw philox_reserve(uint64_t n);

}  // namespace nn::backend
