// mix_hash: spreads a hash's bits over its low ones, which pick the slot
// of an open-addressing table: without it, keys made from neighbouring ids
// (calls of one op on values made one after the other) fill runs of slots
// that every probe walks. The finaliser of MurmurHash3.
#pragma once
#include <cstddef>

namespace nn::ir {

inline size_t mix_hash(size_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

}  // namespace nn::ir
