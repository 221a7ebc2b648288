// The all-reduce through shared memory areas (comm/shared_memory_all_reduce.h).
#include "backend/comm/shared_memory_all_reduce.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <type_traits>

#include "backend/error.h"
#include "backend/simd_clones.h"

namespace nn::backend::comm {
namespace {

// Requests a peer may be behind by: the header keeps the offsets of the last
// kSlots requests.
constexpr uint64_t kSlots = 64;
constexpr size_t kAlign = 64;
// A slot's offset with this bit: the request's buffer itself lies there (it
// is in its rank's area), so peers write their sums straight into it.
constexpr uint64_t kInPlace = uint64_t(1) << 63;
// The sequence number of a region taken for a buffer (take()): never
// finished by a request.
constexpr uint64_t kTaken = UINT64_MAX;

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// src[0] ∘ src[1] ∘ ... in rank order (a mean's sum then divided), written
// to every destination. A destination may be a source: each tile of every
// source is read before that tile is written. Two sources, the common case,
// make a tile in one vector loop, division included (built for each x86-64
// level: backend/simd_clones.h): four loops over a tile, copy, sum, divide
// and copy out, made the MLP's 2-rank step 8% longer (docs/distributed.md).
template <typename T, typename F>
NN_SIMD_CLONES void fold(const std::vector<const T*>& src, const std::vector<T*>& dst, int64_t n, F f, T divisor) {
  constexpr int64_t kTile = 512;
  alignas(64) T acc[kTile];
  const bool divide = divisor != T(1);
  for (int64_t t = 0; t < n; t += kTile) {
    const int64_t m = std::min(kTile, n - t);
    const T* __restrict a = src[0] + t;
    if (src.size() == 1) {
      std::copy(a, a + m, acc);
    } else {
      const T* __restrict b = src[1] + t;
      if (divide && src.size() == 2) {
        for (int64_t i = 0; i < m; ++i) acc[i] = T(f(a[i], b[i]) / divisor);
      } else {
        for (int64_t i = 0; i < m; ++i) acc[i] = f(a[i], b[i]);
      }
    }
    for (size_t k = 2; k < src.size(); ++k) {
      const T* __restrict c = src[k] + t;
      for (int64_t i = 0; i < m; ++i) acc[i] = f(acc[i], c[i]);
    }
    if (divide && src.size() != 2)
      for (int64_t i = 0; i < m; ++i) acc[i] /= divisor;
    for (T* d : dst) std::memcpy(d + t, acc, size_t(m) * sizeof(T));
  }
}

template <typename T>
void fold_op(const std::vector<const char*>& src, const std::vector<char*>& dst, int64_t n, ReduceOp op, int size) {
  std::vector<const T*> s;
  for (const char* p : src) s.push_back(reinterpret_cast<const T*>(p));
  std::vector<T*> d;
  for (char* p : dst) d.push_back(reinterpret_cast<T*>(p));
  // As MPI's path: a mean of integers stays their sum.
  const T divisor = op == ReduceOp::mean && std::is_floating_point_v<T> ? T(size) : T(1);
  switch (op) {
    case ReduceOp::sum: case ReduceOp::mean: fold(s, d, n, [](T a, T b) { return T(a + b); }, divisor); break;
    // A NaN on any rank is the max and the min, whichever rank holds it.
    case ReduceOp::max: fold(s, d, n, [](T a, T b) { return a > b || a != a ? a : b; }, divisor); break;
    case ReduceOp::min: fold(s, d, n, [](T a, T b) { return a < b || a != a ? a : b; }, divisor); break;
  }
}

void fold_dtype(DType t, const std::vector<const char*>& src, const std::vector<char*>& dst, int64_t n, ReduceOp op,
                int size) {
  switch (t) {
    case DType::f32: fold_op<float>(src, dst, n, op, size); break;
    case DType::f64: fold_op<double>(src, dst, n, op, size); break;
    case DType::i32: fold_op<int32_t>(src, dst, n, op, size); break;
    case DType::i64: fold_op<int64_t>(src, dst, n, op, size); break;
    case DType::boolean: fold_op<uint8_t>(src, dst, n, op, size); break;
    default: throw Error("all_reduce: no shared memory reduction of " + std::string(dtype_name(t)));
  }
}

}  // namespace

// How far a rank has come: the last request it published, reduced and
// finished (1, 2, ...; 0 none), and where in its area each of the last
// kSlots requests lies. Peers read it; only its rank writes it.
struct SharedMemoryAllReduce::Header {
  alignas(kAlign) std::atomic<uint64_t> published{0};
  alignas(kAlign) std::atomic<uint64_t> reduced{0};
  alignas(kAlign) std::atomic<uint64_t> finished{0};
  alignas(kAlign) std::atomic<uint64_t> offsets[kSlots] = {};
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the header is shared between processes");

void SharedMemoryAllReduce::init_area(void* area) {
  static_assert(sizeof(Header) <= kHeaderBytes);
  new (area) Header();
}

SharedMemoryAllReduce::SharedMemoryAllReduce(std::vector<void*> areas, size_t area_bytes, int rank)
    : areas_(std::move(areas)),
      payload_bytes_((area_bytes - kHeaderBytes) / kAlign * kAlign),
      rank_(rank),
      size_(int(areas_.size())) {}

bool SharedMemoryAllReduce::supports(DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::f32: case DType::f64: case DType::i32: case DType::i64: return true;
    case DType::boolean: return op == ReduceOp::max || op == ReduceOp::min;
    default: return false;
  }
}

SharedMemoryAllReduce::Header& SharedMemoryAllReduce::header(int k) const {
  return *std::launder(static_cast<Header*>(areas_[size_t(k)]));
}

char* SharedMemoryAllReduce::payload(int k) const { return static_cast<char*>(areas_[size_t(k)]) + kHeaderBytes; }

uint64_t SharedMemoryAllReduce::slot(int k, uint64_t seq) const {
  return header(k).offsets[seq % kSlots].load(std::memory_order_relaxed);
}

void SharedMemoryAllReduce::chunk(const Pending& p, int k, int64_t& begin, int64_t& end) const {
  // Chunks start on cache lines: whole lines, never one shared by two writers.
  const int64_t line = int64_t(kAlign / dtype_size(p.dtype));
  const int64_t per = (p.count + size_ - 1) / size_;
  const int64_t step = (per + line - 1) / line * line;
  begin = std::min(p.count, k * step);
  end = std::min(p.count, begin + step);
}

uint64_t SharedMemoryAllReduce::slowest_finished() const {
  uint64_t low = UINT64_MAX;
  for (int k = 0; k < size_; ++k)
    if (k != rank_) low = std::min(low, header(k).finished.load(std::memory_order_acquire));
  return low;
}

void SharedMemoryAllReduce::spin(unsigned& turns) {
  // Two ranks on two cores meet within microseconds; more ranks than cores
  // need the core given up.
  if (++turns < 256) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    sched_yield();
  }
}

size_t SharedMemoryAllReduce::lowest_free(size_t bytes) {
  // A region is free again once every peer finished the request that used
  // it. The lowest free offset keeps the pages in use few.
  const uint64_t done = slowest_finished();
  std::erase_if(held_, [done](const Held& h) { return h.seq != kTaken && h.seq <= done; });
  size_t offset = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (const Held& h : held_)
      if (h.offset < offset + bytes && offset < h.offset + h.bytes) {
        offset = h.offset + h.bytes;
        moved = true;
      }
  }
  return offset + bytes <= payload_bytes_ ? offset : SIZE_MAX;
}

void SharedMemoryAllReduce::wait_for_slot(uint64_t seq) {
  // The header's slot for seq is free once every peer is kSlots behind.
  unsigned turns = 0;
  while (slowest_finished() + kSlots < seq) {
    progress();
    spin(turns);
  }
}

size_t SharedMemoryAllReduce::reserve(size_t bytes, uint64_t seq) {
  bytes = align_up(bytes);
  wait_for_slot(seq);
  unsigned turns = 0;
  for (;;) {
    if (const size_t offset = lowest_free(bytes); offset != SIZE_MAX) {
      held_.push_back({seq, offset, bytes});
      return offset;
    }
    progress();
    spin(turns);
  }
}

void* SharedMemoryAllReduce::take(size_t bytes) {
  bytes = align_up(bytes);
  const size_t offset = lowest_free(bytes);
  if (offset == SIZE_MAX) return nullptr;
  held_.push_back({kTaken, offset, bytes});
  return payload(rank_) + offset;
}

void SharedMemoryAllReduce::give_back(void* memory) {
  const size_t offset = size_t(static_cast<char*>(memory) - payload(rank_));
  std::erase_if(held_, [offset](const Held& h) { return h.seq == kTaken && h.offset == offset; });
}

bool SharedMemoryAllReduce::in_area(const void* data, size_t bytes) const {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(payload(rank_)), at = reinterpret_cast<uintptr_t>(data);
  return at >= lo && at - lo + bytes <= payload_bytes_;
}

Request SharedMemoryAllReduce::start(void* data, int64_t count, DType dtype, ReduceOp op) {
  if (!supports(dtype, op)) throw Error("all_reduce: no shared memory reduction of " + std::string(dtype_name(dtype)));
  const size_t es = dtype_size(dtype);
  const bool in_place = in_area(data, size_t(count) * es);
  // A copy goes in pieces of at most a quarter of the area.
  const int64_t piece = in_place ? std::max<int64_t>(count, 1) : int64_t(payload_bytes_ / 4 / kAlign * kAlign / es);
  char* p = static_cast<char*>(data);
  Request last = 0;
  for (int64_t at = 0; at < count; at += piece) {
    Pending r{++next_seq_, p + at * es, std::min(piece, count - at), dtype, op, 0, 0, at + piece >= count, in_place};
    if (in_place) {
      wait_for_slot(r.seq);
      r.offset = size_t(r.data - payload(rank_));
    } else {
      r.offset = reserve(size_t(r.count) * es, r.seq);
    }
    publish(r);
    pending_.push_back(r);
    last = r.seq;
  }
  return last;
}

void SharedMemoryAllReduce::publish(Pending& p) {
  const size_t es = dtype_size(p.dtype);
  char* mine = payload(rank_) + p.offset;
  for (int k = 0; k < size_ && !p.in_place; ++k) {
    if (k == rank_) continue;
    int64_t b = 0, e = 0;
    chunk(p, k, b, e);
    std::memcpy(mine + b * es, p.data + b * es, size_t(e - b) * es);
  }
  Header& h = header(rank_);
  h.offsets[p.seq % kSlots].store(p.offset | (p.in_place ? kInPlace : 0), std::memory_order_relaxed);
  h.published.store(p.seq, std::memory_order_release);
}

bool SharedMemoryAllReduce::try_reduce(Pending& p) {
  for (int k = 0; k < size_; ++k)
    if (k != rank_ && header(k).published.load(std::memory_order_acquire) < p.seq) return false;
  const size_t es = dtype_size(p.dtype);
  int64_t b = 0, e = 0;
  chunk(p, rank_, b, e);
  // The sum goes to this rank's buffer, to its area's copy for peers to
  // gather, and into the buffers of peers that reduce in place.
  std::vector<const char*> src;
  std::vector<char*> dst{p.data + b * es};
  if (!p.in_place) dst.push_back(payload(rank_) + p.offset + b * es);
  for (int k = 0; k < size_; ++k) {
    if (k == rank_) {
      src.push_back(p.data + b * es);
      continue;
    }
    const uint64_t at = slot(k, p.seq);
    char* theirs = payload(k) + (at & ~kInPlace) + b * es;
    src.push_back(theirs);
    if (at & kInPlace) dst.push_back(theirs);
  }
  fold_dtype(p.dtype, src, dst, e - b, p.op, size_);
  header(rank_).reduced.store(p.seq, std::memory_order_release);
  return true;
}

bool SharedMemoryAllReduce::try_gather(Pending& p) {
  for (int k = 0; k < size_; ++k) {
    if (k == rank_) continue;
    if (header(k).reduced.load(std::memory_order_acquire) < p.seq) return false;
    // In place, the peers wrote their sums here already; but a peer that
    // copies may still be gathering this rank's sum from the buffer.
    const bool copies = !(slot(k, p.seq) & kInPlace);
    if (p.in_place && copies && header(k).finished.load(std::memory_order_acquire) < p.seq) return false;
  }
  const size_t es = dtype_size(p.dtype);
  for (int k = 0; k < size_ && !p.in_place; ++k) {
    if (k == rank_) continue;
    int64_t b = 0, e = 0;
    chunk(p, k, b, e);
    const uint64_t at = slot(k, p.seq);
    std::memcpy(p.data + b * es, payload(k) + (at & ~kInPlace) + b * es, size_t(e - b) * es);
  }
  header(rank_).finished.store(p.seq, std::memory_order_release);
  return true;
}

void SharedMemoryAllReduce::progress() {
  // A request passes a phase only after the one before it did: the header's
  // counters say "every request up to here".
  int allowed = 2;
  for (Pending& p : pending_) {
    if (p.phase == 0 && allowed >= 1 && try_reduce(p)) p.phase = 1;
    if (p.phase == 1 && allowed >= 2 && try_gather(p)) p.phase = 2;
    allowed = p.phase;
    if (allowed == 0) break;
  }
  while (!pending_.empty() && pending_.front().phase == 2) {
    if (pending_.front().last) done_ns_[pending_.front().seq] = now_ns();
    pending_.pop_front();
  }
}

int64_t SharedMemoryAllReduce::wait(Request r) {
  unsigned turns = 0;
  while (!pending_.empty() && pending_.front().seq <= r) {
    progress();
    if (!pending_.empty() && pending_.front().seq <= r) spin(turns);
  }
  int64_t done = now_ns();
  if (auto it = done_ns_.find(r); it != done_ns_.end()) {
    done = it->second;
    done_ns_.erase(it);
  }
  return done;
}

void SharedMemoryAllReduce::drain() {
  if (!pending_.empty()) wait(pending_.back().seq);
}

}  // namespace nn::backend::comm
